// The batch gather on the CPU: one task per image, each normalised (or resized
// and normalised) by a vectorised loop (one clone per ISA, picked at load
// time), with the reference's float arithmetic: the same values.
#include <vector>

#include "src/engine/cpu/fast_ops.hpp"
#include "src/engine/cpu/parallel.hpp"

namespace roofline::engine::fast {

#define ROOFLINE_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))

using std::int64_t;

namespace {

// ---- batch gather ---------------------------------------------------------------------
// Bilinear resize as the reference computes it (resize_sample), split into a
// horizontal pass over the source rows and a vertical pass: each output is
// the same float expression of the same values, so the results are equal.
struct ResizeTables {
  std::vector<int64_t> y0, y1, x0, x1;
  std::vector<float> fy, fx;
};

void axis_table(int64_t in, int64_t out, std::vector<int64_t>& lo, std::vector<int64_t>& hi, std::vector<float>& f) {
  lo.resize(static_cast<size_t>(out));
  hi.resize(static_cast<size_t>(out));
  f.resize(static_cast<size_t>(out));
  const float scale = static_cast<float>(in) / static_cast<float>(out);
  for (int64_t o = 0; o < out; ++o) {
    float sv = (static_cast<float>(o) + 0.5f) * scale - 0.5f;
    if (sv < 0) sv = 0;
    const int64_t l = static_cast<int64_t>(sv);
    lo[static_cast<size_t>(o)] = l;
    hi[static_cast<size_t>(o)] = l + 1 < in ? l + 1 : in - 1;
    f[static_cast<size_t>(o)] = sv - static_cast<float>(l);
  }
}

ROOFLINE_CLONES void normalize_row(float* __restrict x, const std::uint8_t* __restrict img, int64_t n, float mean,
                                   float inv_std) {
  const float k = static_cast<float>(1.0 / 255.0);
#pragma omp simd
  for (int64_t j = 0; j < n; ++j) x[j] = (static_cast<float>(img[j]) * k - mean) * inv_std;
}

ROOFLINE_CLONES void resize_image(float* __restrict x, const std::uint8_t* __restrict img, const ops::BatchShape& s,
                                  const ResizeTables& t, float* __restrict h /* (in_h, out_w) */) {
  const int64_t* x0 = t.x0.data();
  const int64_t* x1 = t.x1.data();
  const float* fx = t.fx.data();
  for (int64_t y = 0; y < s.in_h; ++y) {
    const std::uint8_t* row = img + y * s.in_w;
    float* hy = h + y * s.out_w;
    for (int64_t ox = 0; ox < s.out_w; ++ox)
      hy[ox] = static_cast<float>(row[x0[ox]]) * (1 - fx[ox]) + static_cast<float>(row[x1[ox]]) * fx[ox];
  }
  const float k = static_cast<float>(1.0 / 255.0);
  for (int64_t oy = 0; oy < s.out_h; ++oy) {
    const float* top = h + t.y0[static_cast<size_t>(oy)] * s.out_w;
    const float* bot = h + t.y1[static_cast<size_t>(oy)] * s.out_w;
    const float fy = t.fy[static_cast<size_t>(oy)];
    float* xo = x + oy * s.out_w;
#pragma omp simd
    for (int64_t ox = 0; ox < s.out_w; ++ox) {
      const float v = top[ox] * (1 - fy) + bot[ox] * fy;
      xo[ox] = (v * k - s.mean) * s.inv_std;
    }
  }
}

}  // namespace

void gather_batch(const ops::BatchShape& s, float* x, std::int32_t* y, const std::uint8_t* images,
                  const std::uint8_t* labels, const std::int32_t* order, std::int64_t first, std::int32_t step) {
  const int64_t per = s.out_h * s.out_w;
  const bool resize = s.in_h != s.out_h || s.in_w != s.out_w;
  // The caller's tables (grown once), passed to the team by reference: inside
  // the parallel region the name of a thread_local would be each thread's own.
  thread_local ResizeTables tables;
  const ResizeTables& t = tables;
  if (resize) {
    axis_table(s.in_h, s.out_h, tables.y0, tables.y1, tables.fy);
    axis_table(s.in_w, s.out_w, tables.x0, tables.x1, tables.fx);
  }
  // Threads by elements, not bytes: a batch's images are random rows of the data
  // set, mostly cache misses (the GPU host: 32 µs for 128 28x28 images on the 3
  // threads a bytes rule gave, ~1 ns an element).
  const int threads = threads_for((resize ? 2.0 : 1.0) * double(s.batch * per), kElementsPerThread, s.batch);
  parallel_for(s.batch, threads, [&](int64_t i) {
    thread_local std::vector<float> h;  // (in_h, out_w): the horizontal pass
    const int64_t idx = order[first + static_cast<int64_t>(step) * s.stride + i];
    const std::uint8_t* img = images + idx * s.in_h * s.in_w;
    if (resize) {
      if (static_cast<int64_t>(h.size()) < s.in_h * s.out_w) h.resize(static_cast<size_t>(s.in_h * s.out_w));
      resize_image(x + i * per, img, s, t, h.data());
    } else {
      normalize_row(x + i * per, img, per, s.mean, s.inv_std);
    }
    y[i] = labels[idx];
  });
}

}  // namespace roofline::engine::fast

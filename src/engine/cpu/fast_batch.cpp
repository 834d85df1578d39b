// The batch gather on the CPU: one task per image, each normalised (or resized
// and normalised) by the loops of tiles_loops_impl.hpp (per ISA, through
// tiles()), with the reference's float arithmetic: the same values.
#include <vector>

#include "src/engine/cpu/fast_ops.hpp"
#include "src/engine/cpu/parallel.hpp"
#include "src/engine/cpu/tiles.hpp"

namespace roofline::engine::fast {

using std::int64_t;

namespace {

// One axis of the bilinear resize, as the reference's resize_sample computes it.
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
  const TileSet& ks = tiles();
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
      ks.resize_image(x + i * per, img, s, t, h.data());
    } else {
      ks.normalize_row(x + i * per, img, per, s.mean, s.inv_std);
    }
    y[i] = labels[idx];
  });
}

}  // namespace roofline::engine::fast

// AdaptiveAvgPool2d, the residual add and Dropout on the CPU (fp32):
// vectorisable loops (a bin's rows in NCHW, the channels of a pixel in NHWC),
// split between threads by planes, images or chunks (parallel.hpp). Each
// output is computed by one task in the reference's order.
#include "src/engine/cpu/fast_cnn.hpp"

#include <algorithm>

#include "kernels/dropout_hash.cuh"
#include "src/engine/cpu/parallel.hpp"

namespace roofline::engine::fast {

using std::int64_t;

namespace {
int64_t bin_start(int64_t i, int64_t in, int64_t out) { return (i * in) / out; }
int64_t bin_end(int64_t i, int64_t in, int64_t out) { return ((i + 1) * in + out - 1) / out; }
}  // namespace

void adaptive_avgpool2d_forward(const ops::AvgPoolShape& s, float* out, const float* in) {
  const double bytes = 4.0 * double(s.n * s.c) * double(s.h * s.w + s.oh * s.ow);
  if (s.format == MemoryFormat::NCHW) {
    const int64_t planes = s.n * s.c;
    parallel_for(planes, threads_for(bytes, kBytesPerThread, planes), [&](int64_t p) {
      const float* ip = in + p * s.h * s.w;
      float* o = out + p * s.oh * s.ow;
      for (int64_t i = 0; i < s.oh; ++i)
        for (int64_t j = 0; j < s.ow; ++j) {
          const int64_t y0 = bin_start(i, s.h, s.oh), y1 = bin_end(i, s.h, s.oh);
          const int64_t x0 = bin_start(j, s.w, s.ow), x1 = bin_end(j, s.w, s.ow);
          float sum = 0;
          for (int64_t y = y0; y < y1; ++y)
            for (int64_t x = x0; x < x1; ++x) sum += ip[y * s.w + x];
          o[i * s.ow + j] = sum / float((y1 - y0) * (x1 - x0));
        }
    });
    return;
  }
  // NHWC: one task per output row of an image; a bin's pixels added channel-wise.
  const int64_t C = s.c, rows = s.n * s.oh;
  parallel_for(rows, threads_for(bytes, kBytesPerThread, rows), [&](int64_t t) {
    const int64_t n = t / s.oh, i = t % s.oh;
    const int64_t y0 = bin_start(i, s.h, s.oh), y1 = bin_end(i, s.h, s.oh);
    for (int64_t j = 0; j < s.ow; ++j) {
      const int64_t x0 = bin_start(j, s.w, s.ow), x1 = bin_end(j, s.w, s.ow);
      float* o = out + ((n * s.oh + i) * s.ow + j) * C;
      std::fill_n(o, C, 0.f);
      for (int64_t y = y0; y < y1; ++y)
        for (int64_t x = x0; x < x1; ++x) {
          const float* src = in + ((n * s.h + y) * s.w + x) * C;
#pragma omp simd
          for (int64_t c = 0; c < C; ++c) o[c] += src[c];
        }
      const float area = float((y1 - y0) * (x1 - x0));
#pragma omp simd
      for (int64_t c = 0; c < C; ++c) o[c] /= area;
    }
  });
}

void adaptive_avgpool2d_backward(const ops::AvgPoolShape& s, float* din, const float* dout) {
  const double bytes = 4.0 * double(s.n * s.c) * double(s.h * s.w + s.oh * s.ow);
  if (s.format == MemoryFormat::NCHW) {
    const int64_t planes = s.n * s.c;
    parallel_for(planes, threads_for(bytes, kBytesPerThread, planes), [&](int64_t p) {
      float* d = din + p * s.h * s.w;
      const float* g = dout + p * s.oh * s.ow;
      std::fill_n(d, s.h * s.w, 0.f);
      for (int64_t i = 0; i < s.oh; ++i)
        for (int64_t j = 0; j < s.ow; ++j) {
          const int64_t y0 = bin_start(i, s.h, s.oh), y1 = bin_end(i, s.h, s.oh);
          const int64_t x0 = bin_start(j, s.w, s.ow), x1 = bin_end(j, s.w, s.ow);
          const float v = g[i * s.ow + j] / float((y1 - y0) * (x1 - x0));
          for (int64_t y = y0; y < y1; ++y)
#pragma omp simd
            for (int64_t x = x0; x < x1; ++x) d[y * s.w + x] += v;
        }
    });
    return;
  }
  // NHWC: one task per image (bins of neighbouring output rows may share input rows).
  const int64_t C = s.c;
  parallel_for(s.n, threads_for(bytes, kBytesPerThread, s.n), [&](int64_t n) {
    float* d = din + n * s.h * s.w * C;
    std::fill_n(d, s.h * s.w * C, 0.f);
    for (int64_t i = 0; i < s.oh; ++i)
      for (int64_t j = 0; j < s.ow; ++j) {
        const int64_t y0 = bin_start(i, s.h, s.oh), y1 = bin_end(i, s.h, s.oh);
        const int64_t x0 = bin_start(j, s.w, s.ow), x1 = bin_end(j, s.w, s.ow);
        const float area = float((y1 - y0) * (x1 - x0));
        const float* g = dout + ((n * s.oh + i) * s.ow + j) * C;
        for (int64_t y = y0; y < y1; ++y)
          for (int64_t x = x0; x < x1; ++x) {
            float* dst = d + (y * s.w + x) * C;
#pragma omp simd
            for (int64_t c = 0; c < C; ++c) dst[c] += g[c] / area;
          }
      }
  });
}

void add_forward(const ops::EltwiseShape& s, float* out, const float* a, const float* b) {
  const bool relu = s.act == ops::Activation::ReLU;
  parallel_chunks(s.n, 12.0, [&](int64_t lo, int64_t len) {
    const float* x = a + lo;
    const float* y = b + lo;
    float* o = out + lo;
#pragma omp simd
    for (int64_t i = 0; i < len; ++i) {
      const float v = x[i] + y[i];
      o[i] = relu ? (v <= 0.f ? 0.f : v) : v;
    }
  });
}

namespace {
// out = kept ? in·scale : 0 over the chunks; the hash is the GPU's (dropout_hash.cuh).
void dropout_apply(const ops::DropoutShape& s, float* out, const float* in, std::uint64_t seed, std::int32_t step) {
  const std::uint64_t key = kernels::dropout_key(seed, step), thr = kernels::dropout_threshold(s.p);
  const float scale = kernels::dropout_scale(s.p);
  parallel_chunks(s.n, 8.0, [&](int64_t lo, int64_t len) {
    for (int64_t i = lo; i < lo + len; ++i)
      out[i] = kernels::dropout_kept(key, thr, static_cast<std::uint64_t>(i)) ? in[i] * scale : 0.f;
  });
}
}  // namespace

void dropout_forward(const ops::DropoutShape& s, float* out, const float* in, std::uint64_t seed, std::int32_t step) {
  dropout_apply(s, out, in, seed, step);
}

void dropout_backward(const ops::DropoutShape& s, float* din, const float* dout, std::uint64_t seed,
                      std::int32_t step) {
  dropout_apply(s, din, dout, seed, step);
}

}  // namespace roofline::engine::fast

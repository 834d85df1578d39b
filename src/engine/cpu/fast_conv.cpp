// Direct convolution on the CPU. The models here have 1-16 channels and
// 5×5/7×7 kernels, where im2col + GEMM spends more time building the column
// matrix than multiplying: loops over (c, r, s) with a vectorised row update
// per output row do the same work in place. OpenMP over images (and output
// channels); the weight gradient keeps one partial sum per thread, reduced
// in thread order so the result does not depend on scheduling.
#include <omp.h>

#include <algorithm>
#include <vector>

#include "src/engine/cpu/fast_ops.hpp"

namespace roofline::engine::fast {

#define ROOFLINE_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))

using std::int64_t;

namespace {
// The output columns x whose input column x·stride − pad + q lies in [0, w).
struct XRange {
  int64_t begin, end;
};
XRange x_range(int64_t ow, int64_t w, int64_t stride, int64_t pad, int64_t q) {
  // x·stride ≥ pad − q  and  x·stride ≤ w − 1 + pad − q
  int64_t lo = pad - q <= 0 ? 0 : (pad - q + stride - 1) / stride;
  int64_t hi_num = w - 1 + pad - q;
  int64_t hi = hi_num < 0 ? -1 : hi_num / stride;
  return {std::min(lo, ow), std::max(std::min(hi + 1, ow), std::min(lo, ow))};
}

ROOFLINE_CLONES void axpy_row(float* __restrict dst, const float* __restrict src, float a, int64_t n, int64_t stride) {
  if (stride == 1) {
#pragma omp simd
    for (int64_t x = 0; x < n; ++x) dst[x] += a * src[x];
  } else {
    for (int64_t x = 0; x < n; ++x) dst[x] += a * src[x * stride];
  }
}

ROOFLINE_CLONES void scatter_row(float* __restrict dst, const float* __restrict src, float a, int64_t n,
                                 int64_t stride) {
  if (stride == 1) {
#pragma omp simd
    for (int64_t x = 0; x < n; ++x) dst[x] += a * src[x];
  } else {
    for (int64_t x = 0; x < n; ++x) dst[x * stride] += a * src[x];
  }
}

ROOFLINE_CLONES float dot_row(const float* __restrict a, const float* __restrict b, int64_t n, int64_t stride) {
  float acc = 0.f;
  if (stride == 1) {
#pragma omp simd reduction(+ : acc)
    for (int64_t x = 0; x < n; ++x) acc += a[x] * b[x];
  } else {
    for (int64_t x = 0; x < n; ++x) acc += a[x] * b[x * stride];
  }
  return acc;
}
}  // namespace

void conv2d_forward(const ops::Conv2dShape& s, float* out, const float* in, const float* w, const float* b) {
  const int64_t OH = s.oh(), OW = s.ow(), plane = OH * OW;
  const bool relu = s.act == ops::Activation::ReLU;
#pragma omp parallel for schedule(static) if (s.n * s.k * plane * s.c * s.r * s.s > 65536)
  for (int64_t nk = 0; nk < s.n * s.k; ++nk) {
    const int64_t n = nk / s.k, k = nk % s.k;
    float* o = out + nk * plane;  // (oh, ow)
    const float bias = (s.bias && b) ? b[k] : 0.f;
    for (int64_t i = 0; i < plane; ++i) o[i] = bias;
    for (int64_t c = 0; c < s.c; ++c) {
      const float* ip = in + (n * s.c + c) * s.h * s.w;  // (h, w)
      for (int64_t r = 0; r < s.r; ++r)
        for (int64_t q = 0; q < s.s; ++q) {
          const float wv = w[((k * s.c + c) * s.r + r) * s.s + q];
          const XRange xr = x_range(OW, s.w, s.stride, s.pad, q);
          if (xr.end <= xr.begin) continue;
          for (int64_t y = 0; y < OH; ++y) {
            const int64_t iy = y * s.stride - s.pad + r;
            if (iy < 0 || iy >= s.h) continue;
            axpy_row(o + y * OW + xr.begin, ip + iy * s.w + xr.begin * s.stride - s.pad + q, wv, xr.end - xr.begin,
                     s.stride);
          }
        }
    }
    if (relu)
      for (int64_t i = 0; i < plane; ++i) o[i] = o[i] <= 0.f ? 0.f : o[i];  // NaN stays NaN, as torch.relu
  }
}

void conv2d_backward_input(const ops::Conv2dShape& s, float* din, const float* dpre, const float* w) {
  const int64_t OH = s.oh(), OW = s.ow(), plane = OH * OW;
#pragma omp parallel for schedule(static) if (s.n * s.k * plane * s.c * s.r * s.s > 65536)
  for (int64_t nc = 0; nc < s.n * s.c; ++nc) {
    const int64_t n = nc / s.c, c = nc % s.c;
    float* d = din + nc * s.h * s.w;  // (h, w)
    for (int64_t i = 0; i < s.h * s.w; ++i) d[i] = 0.f;
    for (int64_t k = 0; k < s.k; ++k) {
      const float* g = dpre + (n * s.k + k) * plane;  // (oh, ow)
      for (int64_t r = 0; r < s.r; ++r)
        for (int64_t q = 0; q < s.s; ++q) {
          const float wv = w[((k * s.c + c) * s.r + r) * s.s + q];
          const XRange xr = x_range(OW, s.w, s.stride, s.pad, q);
          if (xr.end <= xr.begin) continue;
          for (int64_t y = 0; y < OH; ++y) {
            const int64_t iy = y * s.stride - s.pad + r;
            if (iy < 0 || iy >= s.h) continue;
            scatter_row(d + iy * s.w + xr.begin * s.stride - s.pad + q, g + y * OW + xr.begin, wv,
                        xr.end - xr.begin, s.stride);
          }
        }
    }
  }
}

void conv2d_backward_weight(const ops::Conv2dShape& s, float* dw, float* db, const float* dpre, const float* in) {
  const int64_t OH = s.oh(), OW = s.ow(), plane = OH * OW;
  const int64_t nw = s.k * s.c * s.r * s.s, nb = s.k;
  const bool parallel = s.n * s.k * plane * s.c * s.r * s.s > 65536;
  const int threads = parallel ? omp_get_max_threads() : 1;
  std::vector<double> partial(static_cast<size_t>(threads) * static_cast<size_t>(nw + nb), 0.0);
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num();
    double* pw = partial.data() + static_cast<size_t>(t) * static_cast<size_t>(nw + nb);
    double* pb = pw + nw;
#pragma omp for schedule(static)
    for (int64_t n = 0; n < s.n; ++n) {
      for (int64_t k = 0; k < s.k; ++k) {
        const float* g = dpre + (n * s.k + k) * plane;
        for (int64_t c = 0; c < s.c; ++c) {
          const float* ip = in + (n * s.c + c) * s.h * s.w;
          for (int64_t r = 0; r < s.r; ++r)
            for (int64_t q = 0; q < s.s; ++q) {
              const XRange xr = x_range(OW, s.w, s.stride, s.pad, q);
              if (xr.end <= xr.begin) continue;
              float acc = 0.f;
              for (int64_t y = 0; y < OH; ++y) {
                const int64_t iy = y * s.stride - s.pad + r;
                if (iy < 0 || iy >= s.h) continue;
                acc += dot_row(g + y * OW + xr.begin, ip + iy * s.w + xr.begin * s.stride - s.pad + q,
                               xr.end - xr.begin, s.stride);
              }
              pw[((k * s.c + c) * s.r + r) * s.s + q] += acc;
            }
        }
        if (db) {
          float acc = 0.f;
          for (int64_t i = 0; i < plane; ++i) acc += g[i];
          pb[k] += acc;
        }
      }
    }
  }
  for (int64_t i = 0; i < nw; ++i) {
    double acc = 0;
    for (int t = 0; t < threads; ++t) acc += partial[static_cast<size_t>(t) * static_cast<size_t>(nw + nb) + i];
    dw[i] = static_cast<float>(acc);
  }
  if (db)
    for (int64_t k = 0; k < nb; ++k) {
      double acc = 0;
      for (int t = 0; t < threads; ++t) acc += partial[static_cast<size_t>(t) * static_cast<size_t>(nw + nb) + nw + k];
      db[k] = static_cast<float>(acc);
    }
}

}  // namespace roofline::engine::fast

// Direct convolution on the CPU for any stride and padding: loops over
// (c, r, q) with a vectorised row update per output row (the per-CPU clone —
// AVX-512, AVX2 or baseline, picked at load time — covers each plane's loops).
// fast_conv.cpp sends stride-1 unpadded convolutions (every model's) to the
// flattened-plane kernels instead; this is the path for the rest. The weight
// gradient keeps one partial sum per fixed chunk of images, reduced in chunk
// order, so the result does not depend on the thread count.
#include <omp.h>

#include <algorithm>
#include <vector>

#include "src/engine/cpu/fast_ops.hpp"
#include "src/engine/cpu/parallel.hpp"

namespace roofline::engine::fast {

#define ROOFLINE_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#define ROOFLINE_INLINE inline __attribute__((always_inline))

using std::int64_t;

namespace {

// Multiply-adds below which one thread does the whole op: a parallel region
// costs microseconds, and far more when the machine is oversubscribed.
constexpr int64_t kParallelMacs = int64_t(1) << 21;
constexpr int64_t kLanes = 256;  // widest output row the weight gradient keeps per-column sums for

// The output columns x whose input column x·stride − pad + q lies in [0, w).
struct XRange {
  int64_t begin, end;
};
ROOFLINE_INLINE XRange x_range(int64_t ow, int64_t w, int64_t stride, int64_t pad, int64_t q) {
  const int64_t lo = pad - q <= 0 ? 0 : (pad - q + stride - 1) / stride;
  const int64_t hi_num = w - 1 + pad - q;
  const int64_t hi = hi_num < 0 ? -1 : hi_num / stride;
  const int64_t b = std::min(lo, ow);
  return {b, std::max(std::min(hi + 1, ow), b)};
}

// Output planes k0 .. k0+KB−1 of image n: each input row loaded feeds KB
// output rows (KB multiply-adds per load instead of one).
template <int KB>
ROOFLINE_INLINE void forward_block_impl(const ops::Conv2dShape& s, int64_t n, int64_t k0, float* __restrict out,
                                        const float* __restrict in, const float* __restrict w,
                                        const float* __restrict b) {
  const int64_t OH = s.oh(), OW = s.ow(), plane = OH * OW;
  float* o[KB];
  for (int kk = 0; kk < KB; ++kk) {
    o[kk] = out + (n * s.k + k0 + kk) * plane;
    const float bias = (s.bias && b) ? b[k0 + kk] : 0.f;
    for (int64_t i = 0; i < plane; ++i) o[kk][i] = bias;
  }
  for (int64_t c = 0; c < s.c; ++c) {
    const float* ip = in + (n * s.c + c) * s.h * s.w;  // (h, w)
    for (int64_t r = 0; r < s.r; ++r)
      for (int64_t q = 0; q < s.s; ++q) {
        float wv[KB];
        for (int kk = 0; kk < KB; ++kk) wv[kk] = w[(((k0 + kk) * s.c + c) * s.r + r) * s.s + q];
        const XRange xr = x_range(OW, s.w, s.stride, s.pad, q);
        const int64_t len = xr.end - xr.begin;
        if (len <= 0) continue;
        for (int64_t y = 0; y < OH; ++y) {
          const int64_t iy = y * s.stride - s.pad + r;
          if (iy < 0 || iy >= s.h) continue;
          const float* __restrict src = ip + iy * s.w + xr.begin * s.stride - s.pad + q;
          const int64_t off = y * OW + xr.begin;
          if (s.stride == 1) {
#pragma omp simd
            for (int64_t x = 0; x < len; ++x) {
              const float v = src[x];
              for (int kk = 0; kk < KB; ++kk) o[kk][off + x] += wv[kk] * v;
            }
          } else {
            for (int64_t x = 0; x < len; ++x) {
              const float v = src[x * s.stride];
              for (int kk = 0; kk < KB; ++kk) o[kk][off + x] += wv[kk] * v;
            }
          }
        }
      }
  }
  if (s.act == ops::Activation::ReLU)
    for (int kk = 0; kk < KB; ++kk)
      for (int64_t i = 0; i < plane; ++i) o[kk][i] = o[kk][i] <= 0.f ? 0.f : o[kk][i];  // keeps NaN, as torch.relu
}

ROOFLINE_CLONES void forward_block(const ops::Conv2dShape& s, int64_t n, int64_t k0, int64_t kb, float* out,
                                   const float* in, const float* w, const float* b) {
  switch (kb) {
    case 4:
      return forward_block_impl<4>(s, n, k0, out, in, w, b);
    case 3:
      return forward_block_impl<3>(s, n, k0, out, in, w, b);
    case 2:
      return forward_block_impl<2>(s, n, k0, out, in, w, b);
    default:
      return forward_block_impl<1>(s, n, k0, out, in, w, b);
  }
}

// Input-gradient planes c0 .. c0+CB−1 of image n: each output-gradient row
// loaded feeds CB input rows.
template <int CB>
ROOFLINE_INLINE void input_grad_block_impl(const ops::Conv2dShape& s, int64_t n, int64_t c0, float* __restrict din,
                                           const float* __restrict dpre, const float* __restrict w) {
  const int64_t OH = s.oh(), OW = s.ow();
  float* d[CB];
  for (int cc = 0; cc < CB; ++cc) {
    d[cc] = din + (n * s.c + c0 + cc) * s.h * s.w;  // (h, w)
    for (int64_t i = 0; i < s.h * s.w; ++i) d[cc][i] = 0.f;
  }
  for (int64_t k = 0; k < s.k; ++k) {
    const float* g = dpre + (n * s.k + k) * OH * OW;  // (oh, ow)
    for (int64_t r = 0; r < s.r; ++r)
      for (int64_t q = 0; q < s.s; ++q) {
        float wv[CB];
        for (int cc = 0; cc < CB; ++cc) wv[cc] = w[((k * s.c + c0 + cc) * s.r + r) * s.s + q];
        const XRange xr = x_range(OW, s.w, s.stride, s.pad, q);
        const int64_t len = xr.end - xr.begin;
        if (len <= 0) continue;
        for (int64_t y = 0; y < OH; ++y) {
          const int64_t iy = y * s.stride - s.pad + r;
          if (iy < 0 || iy >= s.h) continue;
          const int64_t off = iy * s.w + xr.begin * s.stride - s.pad + q;
          const float* __restrict src = g + y * OW + xr.begin;
          if (s.stride == 1) {
#pragma omp simd
            for (int64_t x = 0; x < len; ++x) {
              const float v = src[x];
              for (int cc = 0; cc < CB; ++cc) d[cc][off + x] += wv[cc] * v;
            }
          } else {
            for (int64_t x = 0; x < len; ++x) {
              const float v = src[x];
              for (int cc = 0; cc < CB; ++cc) d[cc][off + x * s.stride] += wv[cc] * v;
            }
          }
        }
      }
  }
}

ROOFLINE_CLONES void input_grad_block(const ops::Conv2dShape& s, int64_t n, int64_t c0, int64_t cb, float* din,
                                      const float* dpre, const float* w) {
  switch (cb) {
    case 4:
      return input_grad_block_impl<4>(s, n, c0, din, dpre, w);
    case 3:
      return input_grad_block_impl<3>(s, n, c0, din, dpre, w);
    case 2:
      return input_grad_block_impl<2>(s, n, c0, din, dpre, w);
    default:
      return input_grad_block_impl<1>(s, n, c0, din, dpre, w);
  }
}

// Adds image n's contribution to the weight (k, c, r, s) and bias (k) gradients.
ROOFLINE_CLONES void weight_grad_image(const ops::Conv2dShape& s, int64_t n, double* __restrict pw,
                                       double* __restrict pb, const float* __restrict dpre,
                                       const float* __restrict in) {
  const int64_t OH = s.oh(), OW = s.ow(), plane = OH * OW;
  for (int64_t k = 0; k < s.k; ++k) {
    const float* g = dpre + (n * s.k + k) * plane;
    for (int64_t c = 0; c < s.c; ++c) {
      const float* ip = in + (n * s.c + c) * s.h * s.w;
      for (int64_t r = 0; r < s.r; ++r)
        for (int64_t q = 0; q < s.s; ++q) {
          const XRange xr = x_range(OW, s.w, s.stride, s.pad, q);
          const int64_t len = xr.end - xr.begin;
          if (len <= 0) continue;
          float acc = 0.f;
          if (s.stride == 1 && len <= kLanes) {
            // Per-column partial sums across rows, reduced once at the end: no
            // horizontal reduction per row (rows are only 24-80 wide here).
            float lane[kLanes];
            for (int64_t x = 0; x < len; ++x) lane[x] = 0.f;
            for (int64_t y = 0; y < OH; ++y) {
              const int64_t iy = y - s.pad + r;
              if (iy < 0 || iy >= s.h) continue;
              const float* __restrict a = g + y * OW + xr.begin;
              const float* __restrict b = ip + iy * s.w + xr.begin - s.pad + q;
#pragma omp simd
              for (int64_t x = 0; x < len; ++x) lane[x] += a[x] * b[x];
            }
            for (int64_t x = 0; x < len; ++x) acc += lane[x];
          } else {
            for (int64_t y = 0; y < OH; ++y) {
              const int64_t iy = y * s.stride - s.pad + r;
              if (iy < 0 || iy >= s.h) continue;
              const float* __restrict a = g + y * OW + xr.begin;
              const float* __restrict b = ip + iy * s.w + xr.begin * s.stride - s.pad + q;
              if (s.stride == 1) {
#pragma omp simd reduction(+ : acc)
                for (int64_t x = 0; x < len; ++x) acc += a[x] * b[x];
              } else {
                for (int64_t x = 0; x < len; ++x) acc += a[x] * b[x * s.stride];
              }
            }
          }
          pw[((k * s.c + c) * s.r + r) * s.s + q] += acc;
        }
    }
    if (pb) {
      double acc = 0;  // a sum of signed values: double keeps it accurate however much cancels
      for (int64_t i = 0; i < plane; ++i) acc += g[i];
      pb[k] += acc;
    }
  }
}

int64_t macs(const ops::Conv2dShape& s) { return s.n * s.k * s.oh() * s.ow() * s.c * s.r * s.s; }

}  // namespace

void conv2d_forward_direct(const ops::Conv2dShape& s, float* out, const float* in, const float* w, const float* b) {
  constexpr int64_t kBlock = 4;
  const int64_t blocks = (s.k + kBlock - 1) / kBlock;
#pragma omp parallel for schedule(static) if (macs(s) > kParallelMacs && !in_parallel())
  for (int64_t nb = 0; nb < s.n * blocks; ++nb) {
    const int64_t k0 = (nb % blocks) * kBlock;
    forward_block(s, nb / blocks, k0, std::min(kBlock, s.k - k0), out, in, w, b);
  }
}

void conv2d_backward_input_direct(const ops::Conv2dShape& s, float* din, const float* dpre, const float* w) {
  constexpr int64_t kBlock = 4;
  const int64_t blocks = (s.c + kBlock - 1) / kBlock;
#pragma omp parallel for schedule(static) if (macs(s) > kParallelMacs && !in_parallel())
  for (int64_t nb = 0; nb < s.n * blocks; ++nb) {
    const int64_t c0 = (nb % blocks) * kBlock;
    input_grad_block(s, nb / blocks, c0, std::min(kBlock, s.c - c0), din, dpre, w);
  }
}

void conv2d_backward_weight_direct(const ops::Conv2dShape& s, float* dw, float* db, const float* dpre,
                                   const float* in) {
  const int64_t nw = s.k * s.c * s.r * s.s, nb = s.k, stride = nw + nb;
  constexpr int64_t kChunk = 4;  // images per partial sum: fixed, so the sums' order is too
  const int64_t chunks = (s.n + kChunk - 1) / kChunk;
  std::vector<double> partial(static_cast<size_t>(chunks * stride), 0.0);
  const int threads = macs(s) > kParallelMacs ? std::max(1, std::min<int>(omp_get_max_threads(), int(chunks))) : 1;
  parallel_for(chunks, threads, [&](int64_t ch) {  // the full team: see parallel_for
    double* pw = partial.data() + static_cast<size_t>(ch * stride);
    for (int64_t n = ch * kChunk; n < std::min(s.n, (ch + 1) * kChunk); ++n)
      weight_grad_image(s, n, pw, db ? pw + nw : nullptr, dpre, in);
  });
  for (int64_t i = 0; i < nw; ++i) {
    double acc = 0;
    for (int64_t ch = 0; ch < chunks; ++ch) acc += partial[static_cast<size_t>(ch * stride + i)];
    dw[i] = static_cast<float>(acc);
  }
  if (db)
    for (int64_t k = 0; k < nb; ++k) {
      double acc = 0;
      for (int64_t ch = 0; ch < chunks; ++ch) acc += partial[static_cast<size_t>(ch * stride + nw + k)];
      db[k] = static_cast<float>(acc);
    }
}

}  // namespace roofline::engine::fast

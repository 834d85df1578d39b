// The direct convolution's per-image blocks (any stride and padding), written
// once and compiled once per ISA by tiles_<isa>.cpp (tiles_isa.inc includes
// this inside its anonymous namespace, in the ISA's loops region; see
// tiles.hpp). Loops over (c, r, q) with a vectorised row update per output
// row; fast_conv_direct.cpp splits the images and channel blocks between
// threads and sums the weight gradient's partial sums in a fixed order.

#define ROOFLINE_INLINE inline __attribute__((always_inline))

// Widest output row the weight gradient keeps per-column sums for.
constexpr std::int64_t kDirectLanes = 256;

// The output columns x whose input column x·stride − pad + q lies in [0, w).
struct XRange {
  std::int64_t begin, end;
};
ROOFLINE_INLINE XRange x_range(std::int64_t ow, std::int64_t w, std::int64_t stride, std::int64_t pad,
                               std::int64_t q) {
  const std::int64_t lo = pad - q <= 0 ? 0 : (pad - q + stride - 1) / stride;
  const std::int64_t hi_num = w - 1 + pad - q;
  const std::int64_t hi = hi_num < 0 ? -1 : hi_num / stride;
  const std::int64_t b = std::min(lo, ow);
  return {b, std::max(std::min(hi + 1, ow), b)};
}

// Output planes k0 .. k0+KB−1 of image n: each input row loaded feeds KB
// output rows (KB multiply-adds per load instead of one).
template <int KB>
ROOFLINE_INLINE void forward_block_impl(const ops::Conv2dShape& s, std::int64_t n, std::int64_t k0,
                                        float* __restrict out, const float* __restrict in,
                                        const float* __restrict w, const float* __restrict b) {
  const std::int64_t OH = s.oh(), OW = s.ow(), plane = OH * OW;
  float* o[KB];
  for (int kk = 0; kk < KB; ++kk) {
    o[kk] = out + (n * s.k + k0 + kk) * plane;
    const float bias = (s.bias && b) ? b[k0 + kk] : 0.f;
    for (std::int64_t i = 0; i < plane; ++i) o[kk][i] = bias;
  }
  for (std::int64_t c = 0; c < s.c; ++c) {
    const float* ip = in + (n * s.c + c) * s.h * s.w;  // (h, w)
    for (std::int64_t r = 0; r < s.r; ++r)
      for (std::int64_t q = 0; q < s.s; ++q) {
        float wv[KB];
        for (int kk = 0; kk < KB; ++kk) wv[kk] = w[(((k0 + kk) * s.c + c) * s.r + r) * s.s + q];
        const XRange xr = x_range(OW, s.w, s.stride, s.pad, q);
        const std::int64_t len = xr.end - xr.begin;
        if (len <= 0) continue;
        for (std::int64_t y = 0; y < OH; ++y) {
          const std::int64_t iy = y * s.stride - s.pad + r;
          if (iy < 0 || iy >= s.h) continue;
          const float* __restrict src = ip + iy * s.w + xr.begin * s.stride - s.pad + q;
          const std::int64_t off = y * OW + xr.begin;
          if (s.stride == 1) {
#pragma omp simd
            for (std::int64_t x = 0; x < len; ++x) {
              const float v = src[x];
              for (int kk = 0; kk < KB; ++kk) o[kk][off + x] += wv[kk] * v;
            }
          } else {
            for (std::int64_t x = 0; x < len; ++x) {
              const float v = src[x * s.stride];
              for (int kk = 0; kk < KB; ++kk) o[kk][off + x] += wv[kk] * v;
            }
          }
        }
      }
  }
  if (s.act == ops::Activation::ReLU)
    for (int kk = 0; kk < KB; ++kk)
      for (std::int64_t i = 0; i < plane; ++i) o[kk][i] = o[kk][i] <= 0.f ? 0.f : o[kk][i];  // keeps NaN, as torch.relu
}

void direct_forward(const ops::Conv2dShape& s, std::int64_t n, std::int64_t k0, std::int64_t kb, float* out,
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
ROOFLINE_INLINE void input_grad_block_impl(const ops::Conv2dShape& s, std::int64_t n, std::int64_t c0,
                                           float* __restrict din, const float* __restrict dpre,
                                           const float* __restrict w) {
  const std::int64_t OH = s.oh(), OW = s.ow();
  float* d[CB];
  for (int cc = 0; cc < CB; ++cc) {
    d[cc] = din + (n * s.c + c0 + cc) * s.h * s.w;  // (h, w)
    for (std::int64_t i = 0; i < s.h * s.w; ++i) d[cc][i] = 0.f;
  }
  for (std::int64_t k = 0; k < s.k; ++k) {
    const float* g = dpre + (n * s.k + k) * OH * OW;  // (oh, ow)
    for (std::int64_t r = 0; r < s.r; ++r)
      for (std::int64_t q = 0; q < s.s; ++q) {
        float wv[CB];
        for (int cc = 0; cc < CB; ++cc) wv[cc] = w[((k * s.c + c0 + cc) * s.r + r) * s.s + q];
        const XRange xr = x_range(OW, s.w, s.stride, s.pad, q);
        const std::int64_t len = xr.end - xr.begin;
        if (len <= 0) continue;
        for (std::int64_t y = 0; y < OH; ++y) {
          const std::int64_t iy = y * s.stride - s.pad + r;
          if (iy < 0 || iy >= s.h) continue;
          const std::int64_t off = iy * s.w + xr.begin * s.stride - s.pad + q;
          const float* __restrict src = g + y * OW + xr.begin;
          if (s.stride == 1) {
#pragma omp simd
            for (std::int64_t x = 0; x < len; ++x) {
              const float v = src[x];
              for (int cc = 0; cc < CB; ++cc) d[cc][off + x] += wv[cc] * v;
            }
          } else {
            for (std::int64_t x = 0; x < len; ++x) {
              const float v = src[x];
              for (int cc = 0; cc < CB; ++cc) d[cc][off + x * s.stride] += wv[cc] * v;
            }
          }
        }
      }
  }
}

void direct_input_grad(const ops::Conv2dShape& s, std::int64_t n, std::int64_t c0, std::int64_t cb, float* din,
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

void direct_weight_grad(const ops::Conv2dShape& s, std::int64_t n, double* __restrict pw, double* __restrict pb,
                        const float* __restrict dpre, const float* __restrict in) {
  const std::int64_t OH = s.oh(), OW = s.ow(), plane = OH * OW;
  for (std::int64_t k = 0; k < s.k; ++k) {
    const float* g = dpre + (n * s.k + k) * plane;
    for (std::int64_t c = 0; c < s.c; ++c) {
      const float* ip = in + (n * s.c + c) * s.h * s.w;
      for (std::int64_t r = 0; r < s.r; ++r)
        for (std::int64_t q = 0; q < s.s; ++q) {
          const XRange xr = x_range(OW, s.w, s.stride, s.pad, q);
          const std::int64_t len = xr.end - xr.begin;
          if (len <= 0) continue;
          float acc = 0.f;
          if (s.stride == 1 && len <= kDirectLanes) {
            // Per-column partial sums across rows, reduced once at the end: no
            // horizontal reduction per row (rows are only 24-80 wide here).
            float lane[kDirectLanes];
            for (std::int64_t x = 0; x < len; ++x) lane[x] = 0.f;
            for (std::int64_t y = 0; y < OH; ++y) {
              const std::int64_t iy = y - s.pad + r;
              if (iy < 0 || iy >= s.h) continue;
              const float* __restrict a = g + y * OW + xr.begin;
              const float* __restrict b = ip + iy * s.w + xr.begin - s.pad + q;
#pragma omp simd
              for (std::int64_t x = 0; x < len; ++x) lane[x] += a[x] * b[x];
            }
            for (std::int64_t x = 0; x < len; ++x) acc += lane[x];
          } else {
            for (std::int64_t y = 0; y < OH; ++y) {
              const std::int64_t iy = y * s.stride - s.pad + r;
              if (iy < 0 || iy >= s.h) continue;
              const float* __restrict a = g + y * OW + xr.begin;
              const float* __restrict b = ip + iy * s.w + xr.begin * s.stride - s.pad + q;
              if (s.stride == 1) {
#pragma omp simd reduction(+ : acc)
                for (std::int64_t x = 0; x < len; ++x) acc += a[x] * b[x];
              } else {
                for (std::int64_t x = 0; x < len; ++x) acc += a[x] * b[x * s.stride];
              }
            }
          }
          pw[((k * s.c + c) * s.r + r) * s.s + q] += acc;
        }
    }
    if (pb) {
      double acc = 0;  // a sum of signed values: double keeps it accurate however much cancels
      for (std::int64_t i = 0; i < plane; ++i) acc += g[i];
      pb[k] += acc;
    }
  }
}

#undef ROOFLINE_INLINE

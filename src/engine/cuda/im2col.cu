// The im2col path's kernels: see im2col.hpp.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "roofline/core/error.hpp"
#include "src/engine/cuda/cnn_common.cuh"
#include "src/engine/cuda/im2col.hpp"
#include "src/engine/cuda/launch.cuh"

namespace roofline::engine::cuda_ops {

namespace {

struct Im2colGeo {
  int C, H, W, OH, OW, S, stride, pad, rsc, kp, n0, ones;
};

// One thread: 8 consecutive columns (16 bytes) of one row of A, so a warp's
// stores are whole lines. Index arithmetic in 32 bits (sizes checked by the
// host), and the column's (r, s, c) stepped, not divided out, per element:
// with eight divisions per element the kernel was compute-bound (903 us for
// ResNet-18's conv1 at batch 128, H200, 2026-11-27).
template <class T>
__global__ void im2col_nhwc_kernel(Im2colGeo g, std::uint32_t total, const T* __restrict__ x, T* __restrict__ a) {
  const std::uint32_t groups = std::uint32_t(g.kp / 8), plane = std::uint32_t(g.OH * g.OW);
  for (std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < total; i += gridDim.x * blockDim.x) {
    const std::uint32_t m = i / groups, grp = i - m * groups;
    const std::uint32_t img = m / plane, p = m - img * plane;
    const std::uint32_t oy = p / std::uint32_t(g.OW), ox = p - oy * std::uint32_t(g.OW);
    const int n = g.n0 + int(img);
    const int y0 = int(oy) * g.stride - g.pad, x0 = int(ox) * g.stride - g.pad;
    const int j0 = int(grp) * 8;
    int c = j0 % g.C, s = (j0 / g.C) % g.S, r = j0 / (g.C * g.S);
    const T* img_base = x + std::size_t(n) * g.H * g.W * g.C;
    alignas(16) T v[8];
#pragma unroll
    for (int u = 0; u < 8; ++u) {
      T val = T(0.0f);
      const int iy = y0 + r, ix = x0 + s;
      if (j0 + u < g.rsc) {
        if (iy >= 0 && iy < g.H && ix >= 0 && ix < g.W) val = img_base[(iy * g.W + ix) * g.C + c];
      } else if (j0 + u < g.rsc + g.ones) {
        val = T(1.0f);  // the bias's columns (im2col.hpp)
      }
      v[u] = val;
      if (++c == g.C) {
        c = 0;
        if (++s == g.S) {
          s = 0;
          ++r;
        }
      }
    }
    *reinterpret_cast<uint4*>(a + std::size_t(m) * g.kp + grp * 8) = *reinterpret_cast<const uint4*>(v);
  }
}

// Past rsc: zeros, or with a bias its two 16-bit parts, hi = T(b) and
// lo = T(b − hi), which the GEMM's fp32 accumulator adds back to b within
// 2^-16 of it (a 16-bit bias alone would be within 2^-8 for bf16).
template <class T>
__global__ void pad_rows_kernel(std::int64_t k, std::int64_t rsc, std::int64_t kp, const T* __restrict__ w,
                                const float* __restrict__ bias, T* __restrict__ wp) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < k * kp;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t row = i / kp, j = i - row * kp;
    T v = T(0.0f);
    if (j < rsc) {
      v = w[row * rsc + j];
    } else if (bias && j < rsc + 2) {
      const T hi = T(bias[row]);
      v = j == rsc ? hi : T(bias[row] - float(hi));
    }
    wp[i] = v;
  }
}

__global__ void sum_rows_kernel(std::int64_t parts, std::int64_t k, std::int64_t rsc, std::int64_t kp,
                                const float* __restrict__ partial, float* __restrict__ dw) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < k * rsc;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t row = i / rsc, j = i - row * rsc;
    float acc = 0.f;
    for (std::int64_t q = 0; q < parts; ++q) acc += partial[(q * k + row) * kp + j];
    dw[i] = acc;
  }
}

}  // namespace

void launch_im2col_nhwc(const CudaState* st, DType t, const ops::Conv2dShape& s, std::int64_t n0,
                        std::int64_t images, std::int64_t kp, int ones, const void* x, void* a) {
  const std::int64_t rows = images * s.oh() * s.ow(), total = rows * (kp / 8);
  ROOFLINE_ASSERT(kp % 8 == 0 && total < (std::int64_t{1} << 32) && s.n * s.h * s.w * s.c < (std::int64_t{1} << 62),
                  "im2col sizes");
  ROOFLINE_ASSERT(ones >= 0 && s.r * s.s * s.c + ones <= kp, "im2col: the bias's columns fit in the padding");
  const Im2colGeo g{int(s.c), int(s.h), int(s.w), int(s.oh()), int(s.ow()), int(s.s), int(s.stride), int(s.pad),
                    int(s.r * s.s * s.c), int(kp), int(n0), ones};
  ROOFLINE_ASSERT(dtype_size(t) == 2, "the im2col path is for bf16 and fp16 (im2col_applies)");
  with_dtype(t, [&](auto* type) {
    using T = std::remove_pointer_t<decltype(type)>;
    if constexpr (sizeof(T) == 2) {  // 8 elements make one 16-byte store
      im2col_nhwc_kernel<T><<<blocks_for(total, st), kThreads, 0, stream_of(st)>>>(
          g, std::uint32_t(total), static_cast<const T*>(x), static_cast<T*>(a));
      CUDA_CHECK_LAUNCH();
    }
  });
}

void launch_pad_rows(const CudaState* st, DType t, std::int64_t k, std::int64_t rsc, std::int64_t kp, const void* w,
                     const float* bias, void* wp) {
  ROOFLINE_ASSERT(!bias || rsc + 2 <= kp, "im2col: the bias's two columns fit in the padding");
  with_dtype(t, [&](auto* type) {
    using T = std::remove_pointer_t<decltype(type)>;
    pad_rows_kernel<T><<<blocks_for(k * kp, st), kThreads, 0, stream_of(st)>>>(k, rsc, kp, static_cast<const T*>(w),
                                                                                 bias, static_cast<T*>(wp));
    CUDA_CHECK_LAUNCH();
  });
}

void launch_sum_rows(const CudaState* st, std::int64_t parts, std::int64_t k, std::int64_t rsc, std::int64_t kp,
                     const float* partial, float* dw) {
  sum_rows_kernel<<<blocks_for(k * rsc, st), kThreads, 0, stream_of(st)>>>(parts, k, rsc, kp, partial, dw);
  CUDA_CHECK_LAUNCH();
}

}  // namespace roofline::engine::cuda_ops

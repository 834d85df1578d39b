// y = act(x · Wᵀ + b) for small layers (fp32): a warp per output feature and
// kRows batch rows, lanes striding over the inputs in float4s, a shuffle tree
// per row. For the layers where a GEMM library's tiles are mostly empty:
// ece408's FC 1024→32 and 32→10 at batch 64 took cuBLASLt a SIMT SGEMM plus
// a split-K reduction each, 7.8 and 6.7 µs on an H100, for 2 and
// 0.04 MFLOP.
//
// A block = 8 warps = 8 output features × kRows rows: the warps share the
// rows' x through L1, and each W row is read once per kRows batch rows.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/warp_reduce.cuh"

namespace roofline::kernels {

constexpr int kLinearSmallWarps = 8;  // output features per block
constexpr int kLinearSmallRows = 4;   // batch rows per block

// out (n, out_f), x (n, in), w (out_f, in), b (out_f) or null; in % 4 == 0 and
// x, w 16-byte aligned. Grid: (⌈out_f / 8⌉, ⌈n / 4⌉), 256 threads.
__global__ void __launch_bounds__(32 * kLinearSmallWarps)
    linear_small_forward(int n, int in, int out_f, float* __restrict__ out, const float* __restrict__ x,
                         const float* __restrict__ w, const float* __restrict__ b, bool relu) {
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int o = static_cast<int>(blockIdx.x) * kLinearSmallWarps + (static_cast<int>(threadIdx.x) >> 5);
  const int m0 = static_cast<int>(blockIdx.y) * kLinearSmallRows;
  if (o >= out_f) return;  // a whole warp: no shuffle is left half-done
  const int in4 = in / 4;
  const float4* wrow = reinterpret_cast<const float4*>(w + static_cast<std::int64_t>(o) * in);
  const float4* xrow[kLinearSmallRows];
#pragma unroll
  for (int r = 0; r < kLinearSmallRows; ++r) {
    const int m = m0 + r < n ? m0 + r : m0;  // rows past the batch repeat row m0 and are not written
    xrow[r] = reinterpret_cast<const float4*>(x + static_cast<std::int64_t>(m) * in);
  }
  float acc[kLinearSmallRows];
#pragma unroll
  for (int r = 0; r < kLinearSmallRows; ++r) acc[r] = 0.f;
#pragma unroll 4
  for (int k = lane; k < in4; k += 32) {
    const float4 wv = __ldg(wrow + k);
#pragma unroll
    for (int r = 0; r < kLinearSmallRows; ++r) {
      const float4 xv = __ldg(xrow[r] + k);
      acc[r] = fmaf(xv.x, wv.x, acc[r]);
      acc[r] = fmaf(xv.y, wv.y, acc[r]);
      acc[r] = fmaf(xv.z, wv.z, acc[r]);
      acc[r] = fmaf(xv.w, wv.w, acc[r]);
    }
  }
#pragma unroll
  for (int r = 0; r < kLinearSmallRows; ++r) acc[r] = warp_sum(acc[r]);
  if (lane < kLinearSmallRows && m0 + lane < n) {
    float v = b ? b[o] : 0.f;
#pragma unroll
    for (int r = 0; r < kLinearSmallRows; ++r)
      if (r == lane) v += acc[r];
    out[static_cast<std::int64_t>(m0 + lane) * out_f + o] = relu ? (v <= 0.f ? 0.f : v) : v;
  }
}

}  // namespace roofline::kernels

// Reductions over the 32 lanes of a warp by an XOR butterfly: every lane ends
// with the result, and the same one (each step adds or compares a pair of
// lanes' values in both lanes, and a + b == b + a bit for bit). All 32 lanes
// must call them.
#pragma once
#include <cuda_runtime.h>

namespace roofline::kernels {

constexpr unsigned kWarpMask = 0xffffffffu;

// A max and where it is: what an argmax returns. Returned by value, not
// through references, so that its callers compile to the selects they had
// when the loops were written inline (references made the compiler branch).
struct MaxAt {
  float m;
  int arg;
};

// Σ v over the lanes, in T's own arithmetic (float, double, int, unsigned).
template <class T>
__device__ __forceinline__ T warp_sum(T v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(kWarpMask, v, o);
  return v;
}

// max v over the lanes with fmaxf: a NaN lane is passed over (see
// warp_nan_max in kernels/warp_softmax.cuh for rows that must stay NaN).
__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(kWarpMask, v, o));
  return v;
}

}  // namespace roofline::kernels

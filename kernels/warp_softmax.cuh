// Softmax of one row held by a warp, one logit per lane (rows of at most 32
// classes): the softmax kernel's operations, exp(z − max) / Σ, NaN anywhere
// making the whole row NaN. Used where a kernel ends in a softmax: the fused
// inference head (kernels/linear_head.cuh) and fused-mlp's inference.
#pragma once
#include <cuda_runtime.h>

#include <cfloat>

namespace roofline::kernels {

// Lane j < classes holds logit z (other lanes' z is ignored); returns lane j's
// probability (0 for lanes ≥ classes). All 32 lanes must call it.
__device__ __forceinline__ float warp_softmax(float z, int classes) {
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const bool valid = lane < classes;
  float m = valid ? z : -FLT_MAX;
  bool nan = valid && isnan(z);
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
  nan = __any_sync(0xffffffffu, nan);
  if (nan) m = __int_as_float(0x7fc00000);
  const float e = valid ? expf(z - m) : 0.f;
  float sum = e;
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);
  return e / sum;
}

}  // namespace roofline::kernels

// A row's softmax pieces held by one warp, used wherever a kernel ends in a
// softmax or a loss: the softmax and cross-entropy kernels
// (src/engine/cuda/softmax_loss.cu), the fused inference head
// (kernels/linear_head.cuh) and the fused training kernels' loss and inference
// (src/engine/fused/fused_device.cuh). Each is the operations of the softmax
// kernel, exp(z − max) / Σ, with NaN anywhere making the whole row NaN, and
// the argmax taking the first index of the max as the CPU paths do.
#pragma once
#include <cuda_runtime.h>

#include <cfloat>

#include "kernels/warp_reduce.cuh"

namespace roofline::kernels {

// The warp's NaN flag from each lane's (any of the lane's values NaN); when
// it is set, m (the row's max so far, from which fmaxf and the comparisons
// drop NaN) becomes NaN, so that everything computed from it is NaN too.
__device__ __forceinline__ bool warp_nan_max(float& m, int nan) {
  const bool any = __any_sync(kWarpMask, nan);
  if (any) m = __int_as_float(0x7fc00000);
  return any;
}

// The row's max and its first index from each lane's (m, arg): ties go to the
// lower index. Every lane gets both.
__device__ __forceinline__ MaxAt warp_argmax(float m, int arg) {
  for (int o = 16; o > 0; o >>= 1) {
    const float om = __shfl_xor_sync(kWarpMask, m, o);
    const int oa = __shfl_xor_sync(kWarpMask, arg, o);
    if (om > m || (om == m && oa < arg)) {
      m = om;
      arg = oa;
    }
  }
  return {m, arg};
}

// log Σ exp(z − m) + m over the row, from the row's max m and each lane's
// partial Σ exp(z − m).
__device__ __forceinline__ float warp_logsumexp(float m, float partial) { return m + logf(warp_sum(partial)); }

// Softmax of a row of at most 32 classes, one logit per lane: lane j <
// classes holds logit z (other lanes' z is ignored); returns lane j's
// probability (0 for lanes ≥ classes).
__device__ __forceinline__ float warp_softmax(float z, int classes) {
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const bool valid = lane < classes;
  float m = valid ? z : -FLT_MAX;
  const bool nan = valid && isnan(z);
  m = warp_max(m);
  warp_nan_max(m, nan);
  const float e = valid ? expf(z - m) : 0.f;
  return e / warp_sum(e);
}

}  // namespace roofline::kernels

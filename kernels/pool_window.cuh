// The max of one max-pooling window, as every max-pool of the engine takes it
// (the pooling kernel in src/engine/cuda/conv_pool.cu and fused-cnn's pool in
// src/engine/fused/fused_cnn.cu): the first maximum in row-major window order
// wins, and NaN wins, as in PyTorch.
#pragma once
#include <cuda_runtime.h>

#include "kernels/warp_reduce.cuh"  // MaxAt

namespace roofline::kernels {

// The window of kernel × kernel elements of `plane` (w wide) whose top-left
// element is at row y0, column x0: its max, and the max's index in the plane.
__device__ __forceinline__ MaxAt window_max(const float* plane, int w, int y0, int x0, int kernel) {
  int best = y0 * w + x0;
  float m = plane[best];
  for (int r = 0; r < kernel; ++r)
    for (int q = 0; q < kernel; ++q) {
      const int idx = (y0 + r) * w + x0 + q;
      const float v = plane[idx];
      if (v > m || isnan(v)) {
        m = v;
        best = idx;
      }
    }
  return {m, best};
}

}  // namespace roofline::kernels

// Launchers of our kernels for activations in any of the engine's floating
// dtypes (F32, BF16, F16: fp32 arithmetic, results rounded to nearest even)
// and in either memory format (defined in lowp.cu). A tensor (n, k, plane) is
// stored NCHW as [n][k][plane] and NHWC as [n][plane][k]; a row-major (n, k)
// matrix is NHWC with plane 1. No CUDA headers, so the host-only GPU files
// (linear_gpu.cpp, conv_cudnn_gpu.cpp) include it.
#pragma once
#include <cstdint>

#include "roofline/engine/tensor.hpp"

namespace roofline::engine {
struct CudaState;
namespace cuda_ops {

// out (n, k, plane) = act(out + b[k]): b (k) fp32 or null; ReLU keeps NaN (as torch.relu).
void launch_bias_act_any(const CudaState* st, DType t, MemoryFormat f, std::int64_t n, std::int64_t k,
                         std::int64_t plane, void* out, const float* b, bool relu);

// Floats of scratch launch_channel_sums needs for this tensor.
std::int64_t channel_sums_scratch(const CudaState* st, MemoryFormat f, std::int64_t n, std::int64_t k,
                                  std::int64_t plane);
// sums (k) fp32 = Σ over n and plane of x (n, k, plane), accumulated in fp32
// in a fixed order (the same bits every run): per-block partial sums in
// `scratch` (channel_sums_scratch floats of device memory), then one sum per
// channel over the partials.
void launch_channel_sums(const CudaState* st, DType t, MemoryFormat f, std::int64_t n, std::int64_t k,
                         std::int64_t plane, float* sums, const void* x, float* scratch);

// out (count) fp32 = in (count) in t.
void launch_to_f32(const CudaState* st, DType t, std::int64_t count, float* out, const void* in);
// out (count) in t = in (count) fp32, rounded to nearest even.
void launch_from_f32(const CudaState* st, DType t, std::int64_t count, void* out, const float* in);

}  // namespace cuda_ops
}  // namespace roofline::engine

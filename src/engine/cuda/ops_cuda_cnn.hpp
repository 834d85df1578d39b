// The CUDA path of the CNN ops (ops_cnn.hpp) and of the pooling and
// activation shapes the small models' kernels (ops_cuda.hpp) do not take:
// activations void* in the shape's dtype (F32, BF16, F16) and format. No CUDA
// headers: the dispatchers include this in CUDA builds.
#pragma once
#include <cstdint>

#include "roofline/engine/ops.hpp"
#include "roofline/engine/ops_cnn.hpp"

namespace roofline::engine::cuda_ops {

// pool_cnn.cu: any padding, format and dtype (the dispatcher sends unpadded
// NCHW fp32 to conv_pool.cu's kernels).
void maxpool2d_forward_any(const CudaState* st, const ops::Pool2dShape& s, void* out, std::int32_t* argmax,
                           const void* in);
void maxpool2d_backward_any(const CudaState* st, const ops::Pool2dShape& s, void* din, const void* dout,
                            const std::int32_t* argmax);
void adaptive_avgpool2d_forward(const CudaState* st, const ops::AvgPoolShape& s, void* out, const void* in);
void adaptive_avgpool2d_backward(const CudaState* st, const ops::AvgPoolShape& s, void* din, const void* dout);

// eltwise_cnn.cu: ReLU in bf16/fp16 (fp32: elementwise.cu), the residual add, Dropout.
void activation_forward_half(const CudaState* st, const ops::EltwiseShape& s, void* out, const void* in);
void activation_backward_half(const CudaState* st, const ops::EltwiseShape& s, void* din, const void* dout,
                              const void* out);
void add_forward(const CudaState* st, const ops::EltwiseShape& s, void* out, const void* a, const void* b);
void dropout_forward(const CudaState* st, const ops::DropoutShape& s, void* out, const void* in, std::uint64_t seed,
                     const std::int32_t* step);
void dropout_backward(const CudaState* st, const ops::DropoutShape& s, void* din, const void* dout, std::uint64_t seed,
                      const std::int32_t* step);

// batchnorm.cu
void batchnorm_forward_train(const CudaState* st, const ops::BatchNormShape& s, void* out, const void* in,
                             const void* residual, const float* gamma, const float* beta, float* running_mean,
                             float* running_var, float* save_mean, float* save_invstd);
void batchnorm_forward_eval(const CudaState* st, const ops::BatchNormShape& s, void* out, const void* in,
                            const void* residual, const float* gamma, const float* beta, const float* running_mean,
                            const float* running_var);
void batchnorm_backward(const CudaState* st, const ops::BatchNormShape& s, void* din, float* dgamma, float* dbeta,
                        void* dout, const void* out, const void* in, const float* gamma, const float* save_mean,
                        const float* save_invstd);

}  // namespace roofline::engine::cuda_ops

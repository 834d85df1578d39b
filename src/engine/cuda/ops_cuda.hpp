// The CUDA path of every op (cuBLASLt for Linear, cuDNN's graph API for the
// convolutions of real networks, our kernels elsewhere), on the context's
// stream. No CUDA headers: the dispatcher (ops/dispatch.cpp)
// includes this in CUDA builds. Shapes and conventions as in ops.hpp.
#pragma once
#include <cstdint>
#include <string>

#include "roofline/engine/ops.hpp"

namespace roofline::engine::cuda_ops {

void linear_forward(const CudaState* st, const ops::LinearShape& s, void* out, const void* in, const void* w,
                    const void* b);  // b in s.bias_dtype
void linear_forward_wt(const CudaState* st, const ops::LinearShape& s, float* out, const float* in, const float* wt,
                       const float* b);
void linear_backward_input(const CudaState* st, const ops::LinearShape& s, void* din, const void* dpre,
                           const void* w);
// The small-layer forward (a warp per output feature, kernels/linear_small.cuh)
// takes layers of at most this many multiply-adds (ece408's FC layers up to
// batch 256): past it a GEMM library's tiles win.
constexpr std::int64_t kLinearSmallMacs = std::int64_t(1) << 23;
// (fp32 layers only.)
bool linear_small_applies(const ops::LinearShape& s, const void* in, const void* w);
void linear_small_forward(const CudaState* st, const ops::LinearShape& s, float* out, const float* in, const float* w,
                          const float* b);
bool linear_head_forward(const CudaState* st, const ops::LinearShape& l1, const ops::LinearShape& l2, float* probs,
                         const float* in, const float* w1, const float* b1, const float* w2, const float* b2);
void linear_backward_weight(const CudaState* st, const ops::LinearShape& s, float* dw, float* db, const void* dpre,
                            const void* in);

// Convolutions: our own kernels (conv_pool.cu) where own_conv_applies()
// (conv_choice.hpp) takes the layer, cuDNN (conv_cudnn_gpu.cpp) elsewhere.
void conv2d_forward(const CudaState* st, const ops::Conv2dShape& s, void* out, const void* in, const void* w,
                    const float* b);
bool conv2d_maxpool_forward(const CudaState* st, const ops::Conv2dShape& s, const ops::Pool2dShape& p, float* out,
                            const float* in, const float* w, const float* b);
void conv2d_backward_input(const CudaState* st, const ops::Conv2dShape& s, void* din, const void* dpre,
                           const void* w);
void conv2d_backward_weight(const CudaState* st, const ops::Conv2dShape& s, float* dw, float* db, const void* dpre,
                            const void* in);
// The cuDNN paths of the three passes, for any dtype, format and group count.
void cudnn_conv_forward(const CudaState* st, const ops::Conv2dShape& s, void* out, const void* in, const void* w,
                        const float* b);
void cudnn_conv_backward_input(const CudaState* st, const ops::Conv2dShape& s, void* din, const void* dpre,
                               const void* w);
void cudnn_conv_backward_weight(const CudaState* st, const ops::Conv2dShape& s, float* dw, float* db,
                                const void* dpre, const void* in);

// What a library-backed pass took on its first call with this shape (which
// cuDNN engine, fused epilogue or our kernel after it, fp32 or converted dw;
// which cuBLASLt epilogue and bias type), or "our own kernels" where the
// engine's kernels run it; empty before the first call.
std::string conv2d_path(const CudaState* st, const ops::Conv2dShape& s, Pass pass);
std::string linear_path(const CudaState* st, const ops::LinearShape& s, Pass pass);

void maxpool2d_forward(const CudaState* st, const ops::Pool2dShape& s, float* out, std::int32_t* argmax,
                       const float* in);
void maxpool2d_backward(const CudaState* st, const ops::Pool2dShape& s, float* din, const float* dout,
                        const std::int32_t* argmax);

void activation_forward(const CudaState* st, const ops::EltwiseShape& s, float* out, const float* in);
void activation_backward(const CudaState* st, const ops::EltwiseShape& s, float* din, const float* dout,
                         const float* out);

void activation_bias_backward(const CudaState* st, const ops::BiasGradShape& s, float* dpre, float* db,
                              const float* dout, const float* out);
void softmax_forward(const CudaState* st, const ops::RowsShape& s, float* out, const float* in);
void softmax_backward(const CudaState* st, const ops::RowsShape& s, float* din, const float* dout, const float* out);
void log_softmax_forward(const CudaState* st, const ops::RowsShape& s, float* out, const float* in);
void log_softmax_backward(const CudaState* st, const ops::RowsShape& s, float* din, const float* dout,
                          const float* out);
void nll_loss_forward(const CudaState* st, const ops::RowsShape& s, float* loss, const float* logp,
                      const std::int32_t* labels);
void nll_loss_backward(const CudaState* st, const ops::RowsShape& s, float* dlogp, const std::int32_t* labels,
                       float dloss);
void cross_entropy(const CudaState* st, const ops::RowsShape& s, float* dlogits, const float* logits,
                   const std::int32_t* labels, float grad_scale, const ops::LossStats& stats);

void gather_batch(const CudaState* st, const ops::BatchShape& s, float* x, std::int32_t* y, const std::uint8_t* images,
                  const std::uint8_t* labels, const std::int32_t* order, std::int64_t first, const std::int32_t* step);

}  // namespace roofline::engine::cuda_ops

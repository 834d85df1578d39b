// The transformer ops' CUDA path (transformer.cu): our kernels on the
// context's stream, activations in F32, BF16 or F16 with fp32 arithmetic.
// Shapes and conventions as roofline/engine/ops_transformer.hpp. No CUDA
// headers: the dispatcher includes this in CUDA builds.
#pragma once
#include <cstdint>

#include "roofline/engine/ops_transformer.hpp"

namespace roofline::engine::cuda_ops {

void embeddings_forward(const CudaState* st, const ops::EmbeddingShape& s, void* out, const std::int32_t* ids,
                        const std::int32_t* positions, const std::int32_t* type_ids, const float* word,
                        const float* pos, const float* type);
void embeddings_backward(const CudaState* st, const ops::EmbeddingShape& s, float* dword, float* dpos, float* dtype,
                         const void* dout, const std::int32_t* ids, const std::int32_t* positions,
                         const std::int32_t* type_ids);
void layernorm_forward(const CudaState* st, const ops::LayerNormShape& s, void* out, float* mean, float* rstd,
                       const void* in, const void* residual, const float* gamma, const float* beta);
void gelu_forward(const CudaState* st, const ops::GeluShape& s, void* out, const void* in);
void layernorm_backward(const CudaState* st, const ops::LayerNormShape& s, void* din, float* dgamma, float* dbeta,
                        const void* dout, const void* in, const void* residual, const float* gamma,
                        const float* mean, const float* rstd);
void gelu_backward(const CudaState* st, const ops::GeluShape& s, void* din, const void* dout, const void* in);
void attention_forward(const CudaState* st, const ops::AttentionShape& s, void* out, float* lse, const void* qkv,
                       const std::int32_t* start, const std::int32_t* len);
// Through cuBLASLt's batched GEMMs with the score matrices in a scratch
// buffer (attention_backward.cu).
void attention_backward(const CudaState* st, const ops::AttentionShape& s, void* dqkv, const void* dout,
                        const void* qkv, const void* out, const float* lse, const std::int32_t* start,
                        const std::int32_t* len);
void span_loss(const CudaState* st, const ops::SpanLossShape& s, float* loss, void* dlogits, const void* logits,
               const std::int32_t* start_pos, const std::int32_t* end_pos);
// The tensor-core path of attention_forward (attention_mma.cu): BF16 and F16
// with 64-wide heads, Q/K/V rows 16-byte aligned. attention_forward takes it
// where it applies; the fp32-arithmetic kernel elsewhere.
bool attention_mma_applies(const ops::AttentionShape& s, const void* out, const void* qkv);
void attention_mma_forward(const CudaState* st, const ops::AttentionShape& s, void* out, float* lse, const void* qkv,
                           const std::int32_t* start, const std::int32_t* len);

}  // namespace roofline::engine::cuda_ops

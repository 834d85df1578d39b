// The transformer ops on the fast CPU path (fast_transformer.cpp); shapes and
// conventions as roofline/engine/ops_transformer.hpp, fp32 only.
#pragma once
#include <cstdint>

#include "roofline/engine/ops_transformer.hpp"

namespace roofline::engine::fast {

void embeddings_forward(const ops::EmbeddingShape& s, float* out, const std::int32_t* ids,
                        const std::int32_t* positions, const std::int32_t* type_ids, const float* word,
                        const float* pos, const float* type);
void embeddings_backward(const ops::EmbeddingShape& s, float* dword, float* dpos, float* dtype, const float* dout,
                         const std::int32_t* ids, const std::int32_t* positions, const std::int32_t* type_ids);
void layernorm_forward(const ops::LayerNormShape& s, float* out, float* mean, float* rstd, const float* in,
                       const float* residual, const float* gamma, const float* beta);
void gelu_forward(const ops::GeluShape& s, float* out, const float* in);
void layernorm_backward(const ops::LayerNormShape& s, float* din, float* dgamma, float* dbeta, const float* dout,
                        const float* in, const float* residual, const float* gamma, const float* mean,
                        const float* rstd);
void gelu_backward(const ops::GeluShape& s, float* din, const float* dout, const float* in);
void attention_forward(const ops::AttentionShape& s, float* out, float* lse, const float* qkv,
                       const std::int32_t* start, const std::int32_t* len);
void attention_backward(const ops::AttentionShape& s, float* dqkv, const float* dout, const float* qkv,
                        const float* out, const float* lse, const std::int32_t* start, const std::int32_t* len);

}  // namespace roofline::engine::fast

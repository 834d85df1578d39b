// The transformer's ops (BERT-base, engine part 3), in ops.hpp's style: a
// shape struct that says how big everything is and what each pass costs, and
// one dispatcher per function over the context's backend (CpuRef plain loops,
// Cpu threaded loops, Cuda our kernels). Activations are (tokens, features)
// row-major, tokens of every sequence one after the other; parameters fp32.
//
// Sequences: a batch is `batch` sequences, sequence b's tokens at rows
// [start[b], start[b] + len[b]) of the token matrix. Padded batches give
// start[b] = b · seq and the real length (the rows after it are padding, their
// outputs computed and ignored, as Hugging Face does); packed batches (padding
// removed) give start[b] = Σ len[<b]. start and len are int32 arrays on the
// context's device.
#pragma once
#include <cstdint>

#include "roofline/engine/context.hpp"
#include "roofline/engine/cost.hpp"

namespace roofline::engine::ops {

// ---- Embeddings: word + position + token type ------------------------------
// out (tokens, hidden) in dtype = word[ids[t]] + pos[positions[t]] + type[type_ids[t]],
// summed in fp32; tables fp32: word (vocab, hidden), pos (positions, hidden),
// type (types, hidden). Ids are trusted (the model checks them on the host).
struct EmbeddingShape {
  std::int64_t tokens = 0, hidden = 0, vocab = 0, positions = 0, types = 0;
  DType dtype = DType::F32;
  // The word row that gets no gradient (nn.Embedding's padding_idx: BERT's
  // [PAD], id 0); -1: none.
  std::int64_t padding_idx = -1;
  PassCosts cost() const;  // forward only; the table gradients in weight_grad
};
void embeddings_forward(Context& ctx, const EmbeddingShape& s, void* out, const std::int32_t* ids,
                        const std::int32_t* positions, const std::int32_t* type_ids, const float* word,
                        const float* pos, const float* type);
// The tables' gradients, fp32, every row overwritten (rows no token used are
// zero, as PyTorch's dense embedding gradient): dword[ids[t]] += dout[t], and
// likewise dpos and dtype; then dword's padding_idx row is zeroed. The CPU paths add in token order; the GPU adds
// with atomics, so its sums may differ from run to run in the last bits.
void embeddings_backward(Context& ctx, const EmbeddingShape& s, float* dword, float* dpos, float* dtype,
                         const void* dout, const std::int32_t* ids, const std::int32_t* positions,
                         const std::int32_t* type_ids);

// ---- LayerNorm over the last dimension, with the residual add before it ----
// out (rows, cols) = (x − mean) · rstd · gamma + beta with x = in + residual
// (residual may be null) summed in fp32 (not rounded to dtype first: the
// residual stream of a bf16 model loses no bits at the add), statistics in
// fp32; mean, rstd (rows) fp32, may be null (inference). out may alias in or
// residual.
struct LayerNormShape {
  std::int64_t rows = 0, cols = 0;
  float eps = 1e-12f;
  bool residual = false;
  DType dtype = DType::F32;
  PassCosts cost() const;
};
void layernorm_forward(Context& ctx, const LayerNormShape& s, void* out, float* mean, float* rstd, const void* in,
                       const void* residual, const float* gamma, const float* beta);
// The backward from the forward's mean and rstd: din (rows, cols) in dtype, the
// gradient of x = in + residual (so of each of them); dgamma, dbeta (cols) fp32,
// overwritten. x̂ = (x − mean)·rstd, g = dout·gamma:
//   din = rstd · (g − mean_j(g) − x̂ · mean_j(g·x̂)),  dgamma = Σ_rows dout·x̂,  dbeta = Σ_rows dout.
void layernorm_backward(Context& ctx, const LayerNormShape& s, void* din, float* dgamma, float* dbeta,
                        const void* dout, const void* in, const void* residual, const float* gamma,
                        const float* mean, const float* rstd);

// ---- GELU, the erf form (BERT's "gelu"): x · Φ(x) = x/2 · (1 + erf(x/√2)) ----
struct GeluShape {
  std::int64_t n = 0;
  DType dtype = DType::F32;
  PassCosts cost() const;
};
// out (n) = gelu(in); out may alias in
void gelu_forward(Context& ctx, const GeluShape& s, void* out, const void* in);
// din (n) = dout ⊙ gelu'(in), gelu'(x) = Φ(x) + x·φ(x); din may alias dout
void gelu_backward(Context& ctx, const GeluShape& s, void* din, const void* dout, const void* in);

// ---- Scaled dot-product attention over packed Q, K, V ----------------------
// qkv (tokens, 3 · heads · head_dim): each token's query, key and value rows
// side by side (the three projections as one GEMM), head h's slice at
// h · head_dim of each; out (tokens, heads · head_dim). For every sequence b,
// head h and query row i of it: out = softmax(q·Kᵀ · scale over the keys
// [0, len[b])) · V, scale = 1/√head_dim, in fp32 whatever dtype holds the
// data. Padding rows' keys are never seen (Hugging Face's mask), padding
// queries still get outputs (AttentionShape::padded). lse (heads, tokens) fp32: each row's log-sum-exp
// of the scaled scores, kept for the backward; may be null.
// The CUDA path is fused: the score matrix is never written to memory.
struct AttentionShape {
  std::int64_t batch = 0, heads = 0, head_dim = 0;
  std::int64_t tokens = 0;   // rows of qkv and out
  std::int64_t max_len = 0;  // the longest sequence (launch shapes; costs when pairs is 0)
  // Padded batches: every sequence's block of `padded` rows gets query outputs
  // (padding queries included, as Hugging Face computes them); 0 for packed
  // batches, whose queries are the len[b] real rows.
  std::int64_t padded = 0;
  DType dtype = DType::F32;
  // F32 data: the GPU backward's GEMMs may run on TF32 tensor cores (the
  // forward's fp32 kernel computes in true fp32 either way).
  bool tf32 = false;
  // Query-key pairs computed, Σ_b queries_b · len_b, for the costs; 0: every
  // one of `tokens` queries sees max_len keys.
  double pairs = 0;
  PassCosts cost() const;
};
void attention_forward(Context& ctx, const AttentionShape& s, void* out, float* lse, const void* qkv,
                       const std::int32_t* start, const std::int32_t* len);
// The backward from the forward's out and lse (the scores recomputed, as
// flash attention does): dqkv (tokens, 3 · heads · head_dim) in qkv's layout,
// every element written (padding rows' key and value gradients are zero).
// With P = exp(scale·q·kᵀ − lse) and D_i = dout_i · out_i:
//   dv_j = Σ_i P_ij dout_i,  dS_ij = P_ij (dout_i · v_j − D_i),
//   dq_i = scale Σ_j dS_ij k_j,  dk_j = scale Σ_i dS_ij q_i.
// The GPU recomputes the scores with tensor-core GEMMs into a scratch buffer
// (b·h·L² fp32 twice and b·h·L² in dtype twice, L the padded length): the
// score matrix is written to memory here, unlike the forward.
void attention_backward(Context& ctx, const AttentionShape& s, void* dqkv, const void* dout, const void* qkv,
                        const void* out, const float* lse, const std::int32_t* start, const std::int32_t* len);

// ---- The question-answering span loss (BertForQuestionAnswering's) ------------
// logits (batch · seq, 2) in dtype: each token's start and end logit, a
// padded batch's rows; start_pos, end_pos (batch) int32 in [0, seq) (the
// caller checks them). loss (1) fp32 = (CE(start) + CE(end)) / 2, each the
// batch mean of −log softmax over the sequence's seq positions (padding
// positions included, as Hugging Face, whose logits are not masked); dlogits
// (batch · seq, 2) in dtype = ∂loss/∂logits, overwritten. loss may be null.
struct SpanLossShape {
  std::int64_t batch = 0, seq = 0;
  DType dtype = DType::F32;
  PassCosts cost() const;  // forward and gradient together in `forward`
};
void span_loss(Context& ctx, const SpanLossShape& s, float* loss, void* dlogits, const void* logits,
               const std::int32_t* start_pos, const std::int32_t* end_pos);

}  // namespace roofline::engine::ops

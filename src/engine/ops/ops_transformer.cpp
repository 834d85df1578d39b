// The transformer ops' costs and dispatchers (ops_transformer.hpp). Costs
// follow cost.hpp's convention: an FMA is 2 FLOPs, an add, multiply, max,
// exp, erf, divide or square root 1; bytes are each input read once and each
// output written once at its width.
#include <fmt/format.h>

#include "roofline/core/error.hpp"
#include "roofline/engine/ops_transformer.hpp"
#include "src/engine/cpu/fast_transformer.hpp"
#include "src/engine/cpu/ref_transformer.hpp"
#include "src/engine/ops/dispatch_util.hpp"

#if ROOFLINE_HAVE_CUDA
#include "src/engine/cuda/ops_cuda_transformer.hpp"
#define ROOFLINE_CUDA_TRANSFORMER(ctx, fn, ...) return cuda_ops::fn((ctx).cuda(), __VA_ARGS__)
#else
#define ROOFLINE_CUDA_TRANSFORMER(ctx, fn, ...) \
  throw_unsupported("this roofline was built without CUDA", "use --device cpu, or rebuild with the CUDA toolkit")
#endif

namespace roofline::engine::ops {

namespace {
double w(DType t) { return double(dtype_size(t)); }
bool float_dtype(DType t) { return t == DType::F32 || t == DType::BF16 || t == DType::F16; }
float* f32(void* p) { return static_cast<float*>(p); }
const float* f32(const void* p) { return static_cast<const float*>(p); }
}  // namespace

PassCosts EmbeddingShape::cost() const {
  PassCosts c;
  const double e = double(tokens) * double(hidden);
  c.forward = {2 * e, 3 * e * 4 + e * w(dtype) + double(tokens) * 3 * 4};
  // Backward: each table row's gradient += the token's output gradient (scatter-add), three tables.
  c.weight_grad = {3 * e, e * w(dtype) + 3 * 2 * e * 4 + double(tokens) * 3 * 4};
  return c;
}

PassCosts LayerNormShape::cost() const {
  PassCosts c;
  const double e = double(rows) * double(cols);
  // x = in + residual (1), mean (1), variance (3: subtract, FMA), normalise and affine (4).
  c.forward = {(residual ? 1 : 0) * e + 8 * e,
               (residual ? 2 : 1) * e * w(dtype) + e * w(dtype) + 2 * double(cols) * 4 + 2 * double(rows) * 4};
  // Input gradient: x̂, g·γ, two row sums, the combination (~8 per element); gamma/beta gradients: 3.
  c.input_grad = {8 * e, (residual ? 3 : 2) * e * w(dtype) + double(cols) * 4 + 2 * double(rows) * 4};
  c.weight_grad = {3 * e, 2 * e * w(dtype) + 2 * double(cols) * 4 + 2 * double(rows) * 4};
  return c;
}

PassCosts GeluShape::cost() const {
  PassCosts c;
  const double e = double(n);
  c.forward = {5 * e, 2 * e * w(dtype)};  // x/√2, erf, +1, ·x, ·½
  c.input_grad = {10 * e, 3 * e * w(dtype)};  // Φ(x) + x·φ(x) (exp), times dout
  return c;
}

PassCosts AttentionShape::cost() const {
  PassCosts c;
  const double p = pairs > 0 ? pairs : double(tokens) * double(max_len);
  const double hp = p * double(heads), d = double(head_dim);
  const double qkv_bytes = double(tokens) * 3 * double(heads) * d * w(dtype);
  const double out_bytes = double(tokens) * double(heads) * d * w(dtype);
  // q·k (2d), scale, max, subtract, exp, sum (5), p·v (2d), per pair and head; the division per row.
  c.forward = {hp * (4 * d + 5), qkv_bytes + out_bytes + double(tokens) * double(heads) * 4};
  // Backward (flash style, scores recomputed): q·k again, dP = dO·Vᵀ, dS, dQ, dK, dV: 4 more GEMM-like
  // products (8d) and ~6 elementwise per pair.
  c.input_grad = {hp * (10 * d + 11), 2 * qkv_bytes + 2 * out_bytes + 2 * double(tokens) * double(heads) * 4};
  return c;
}

PassCosts SpanLossShape::cost() const {
  PassCosts c;
  const double e = double(batch) * double(seq) * 2;
  // max, exp, sum (3) and the gradient's exp, subtract, scale (3) per logit; read once, gradient written.
  c.forward = {6 * e, 2 * e * w(dtype) + double(batch) * 8};
  return c;
}

namespace {
void check_shape(const EmbeddingShape& s) {
  ROOFLINE_ASSERT(s.tokens > 0 && s.hidden > 0 && s.vocab > 0 && s.positions > 0 && s.types > 0 &&
                      float_dtype(s.dtype),
                  fmt::format("embedding shape tokens={} hidden={}", s.tokens, s.hidden));
}
}  // namespace

void embeddings_forward(Context& ctx, const EmbeddingShape& s, void* out, const std::int32_t* ids,
                        const std::int32_t* positions, const std::int32_t* type_ids, const float* word,
                        const float* pos, const float* type) {
  check_shape(s);
  switch (ctx.backend()) {
    case Backend::CpuRef:
      require_cpu_fp32(ctx, s.dtype, "embeddings");
      return ref::embeddings_forward<float>(s, f32(out), ids, positions, type_ids, word, pos, type);
    case Backend::Cpu:
      require_cpu_fp32(ctx, s.dtype, "embeddings");
      return fast::embeddings_forward(s, f32(out), ids, positions, type_ids, word, pos, type);
    case Backend::Cuda:
      ROOFLINE_CUDA_TRANSFORMER(ctx, embeddings_forward, s, out, ids, positions, type_ids, word, pos, type);
  }
}

void embeddings_backward(Context& ctx, const EmbeddingShape& s, float* dword, float* dpos, float* dtype,
                         const void* dout, const std::int32_t* ids, const std::int32_t* positions,
                         const std::int32_t* type_ids) {
  check_shape(s);
  switch (ctx.backend()) {
    case Backend::CpuRef:
      require_cpu_fp32(ctx, s.dtype, "embeddings");
      return ref::embeddings_backward<float>(s, dword, dpos, dtype, f32(dout), ids, positions, type_ids);
    case Backend::Cpu:
      require_cpu_fp32(ctx, s.dtype, "embeddings");
      return fast::embeddings_backward(s, dword, dpos, dtype, f32(dout), ids, positions, type_ids);
    case Backend::Cuda:
      ROOFLINE_CUDA_TRANSFORMER(ctx, embeddings_backward, s, dword, dpos, dtype, dout, ids, positions, type_ids);
  }
}

void layernorm_forward(Context& ctx, const LayerNormShape& s, void* out, float* mean, float* rstd, const void* in,
                       const void* residual, const float* gamma, const float* beta) {
  ROOFLINE_ASSERT(s.rows > 0 && s.cols > 0 && float_dtype(s.dtype) && s.eps >= 0,
                  fmt::format("layernorm shape rows={} cols={}", s.rows, s.cols));
  ROOFLINE_ASSERT(s.residual == (residual != nullptr), "layernorm: the residual pointer and the shape disagree");
  switch (ctx.backend()) {
    case Backend::CpuRef:
      require_cpu_fp32(ctx, s.dtype, "layernorm");
      return ref::layernorm_forward<float>(s, f32(out), mean, rstd, f32(in), f32(residual), gamma, beta);
    case Backend::Cpu:
      require_cpu_fp32(ctx, s.dtype, "layernorm");
      return fast::layernorm_forward(s, f32(out), mean, rstd, f32(in), f32(residual), gamma, beta);
    case Backend::Cuda:
      ROOFLINE_CUDA_TRANSFORMER(ctx, layernorm_forward, s, out, mean, rstd, in, residual, gamma, beta);
  }
}

void layernorm_backward(Context& ctx, const LayerNormShape& s, void* din, float* dgamma, float* dbeta,
                        const void* dout, const void* in, const void* residual, const float* gamma,
                        const float* mean, const float* rstd) {
  ROOFLINE_ASSERT(s.rows > 0 && s.cols > 0 && float_dtype(s.dtype),
                  fmt::format("layernorm shape rows={} cols={}", s.rows, s.cols));
  ROOFLINE_ASSERT(s.residual == (residual != nullptr), "layernorm: the residual pointer and the shape disagree");
  switch (ctx.backend()) {
    case Backend::CpuRef:
      require_cpu_fp32(ctx, s.dtype, "layernorm");
      return ref::layernorm_backward<float>(s, f32(din), dgamma, dbeta, f32(dout), f32(in), f32(residual), gamma,
                                            mean, rstd);
    case Backend::Cpu:
      require_cpu_fp32(ctx, s.dtype, "layernorm");
      return fast::layernorm_backward(s, f32(din), dgamma, dbeta, f32(dout), f32(in), f32(residual), gamma, mean,
                                      rstd);
    case Backend::Cuda:
      ROOFLINE_CUDA_TRANSFORMER(ctx, layernorm_backward, s, din, dgamma, dbeta, dout, in, residual, gamma, mean,
                                rstd);
  }
}

void gelu_backward(Context& ctx, const GeluShape& s, void* din, const void* dout, const void* in) {
  ROOFLINE_ASSERT(s.n > 0 && float_dtype(s.dtype), "gelu shape");
  switch (ctx.backend()) {
    case Backend::CpuRef:
      require_cpu_fp32(ctx, s.dtype, "gelu");
      return ref::gelu_backward<float>(s, f32(din), f32(dout), f32(in));
    case Backend::Cpu:
      require_cpu_fp32(ctx, s.dtype, "gelu");
      return fast::gelu_backward(s, f32(din), f32(dout), f32(in));
    case Backend::Cuda:
      ROOFLINE_CUDA_TRANSFORMER(ctx, gelu_backward, s, din, dout, in);
  }
}

void gelu_forward(Context& ctx, const GeluShape& s, void* out, const void* in) {
  ROOFLINE_ASSERT(s.n > 0 && float_dtype(s.dtype), "gelu shape");
  switch (ctx.backend()) {
    case Backend::CpuRef:
      require_cpu_fp32(ctx, s.dtype, "gelu");
      return ref::gelu_forward<float>(s, f32(out), f32(in));
    case Backend::Cpu:
      require_cpu_fp32(ctx, s.dtype, "gelu");
      return fast::gelu_forward(s, f32(out), f32(in));
    case Backend::Cuda:
      ROOFLINE_CUDA_TRANSFORMER(ctx, gelu_forward, s, out, in);
  }
}

void attention_forward(Context& ctx, const AttentionShape& s, void* out, float* lse, const void* qkv,
                       const std::int32_t* start, const std::int32_t* len) {
  ROOFLINE_ASSERT(s.batch > 0 && s.heads > 0 && s.head_dim > 0 && s.tokens > 0 && s.max_len > 0 &&
                      s.padded >= 0 && float_dtype(s.dtype),
                  fmt::format("attention shape batch={} heads={} head_dim={} tokens={} max_len={}", s.batch,
                              s.heads, s.head_dim, s.tokens, s.max_len));
  switch (ctx.backend()) {
    case Backend::CpuRef:
      require_cpu_fp32(ctx, s.dtype, "attention");
      return ref::attention_forward<float>(s, f32(out), lse, f32(qkv), start, len);
    case Backend::Cpu:
      require_cpu_fp32(ctx, s.dtype, "attention");
      return fast::attention_forward(s, f32(out), lse, f32(qkv), start, len);
    case Backend::Cuda:
      ROOFLINE_CUDA_TRANSFORMER(ctx, attention_forward, s, out, lse, qkv, start, len);
  }
}

void attention_backward(Context& ctx, const AttentionShape& s, void* dqkv, const void* dout, const void* qkv,
                        const void* out, const float* lse, const std::int32_t* start, const std::int32_t* len) {
  ROOFLINE_ASSERT(s.batch > 0 && s.heads > 0 && s.head_dim > 0 && s.tokens > 0 && s.max_len > 0 &&
                      s.padded >= 0 && float_dtype(s.dtype) && lse,
                  fmt::format("attention shape batch={} heads={} head_dim={} tokens={} max_len={}", s.batch,
                              s.heads, s.head_dim, s.tokens, s.max_len));
  switch (ctx.backend()) {
    case Backend::CpuRef:
      require_cpu_fp32(ctx, s.dtype, "attention");
      return ref::attention_backward<float>(s, f32(dqkv), f32(dout), f32(qkv), f32(out), lse, start, len);
    case Backend::Cpu:
      require_cpu_fp32(ctx, s.dtype, "attention");
      return fast::attention_backward(s, f32(dqkv), f32(dout), f32(qkv), f32(out), lse, start, len);
    case Backend::Cuda:
      ROOFLINE_CUDA_TRANSFORMER(ctx, attention_backward, s, dqkv, dout, qkv, out, lse, start, len);
  }
}

void span_loss(Context& ctx, const SpanLossShape& s, float* loss, void* dlogits, const void* logits,
               const std::int32_t* start_pos, const std::int32_t* end_pos) {
  ROOFLINE_ASSERT(s.batch > 0 && s.seq > 0 && float_dtype(s.dtype) && dlogits && logits,
                  fmt::format("span loss shape batch={} seq={}", s.batch, s.seq));
  switch (ctx.backend()) {
    case Backend::CpuRef:
    case Backend::Cpu:  // a few thousand logits: the reference is the fast path too
      require_cpu_fp32(ctx, s.dtype, "span loss");
      return ref::span_loss<float>(s, loss, f32(dlogits), f32(logits), start_pos, end_pos);
    case Backend::Cuda:
      ROOFLINE_CUDA_TRANSFORMER(ctx, span_loss, s, loss, dlogits, logits, start_pos, end_pos);
  }
}

}  // namespace roofline::engine::ops

// One dispatcher per op function: checks the shape, then sends the call to
// the context's backend. Shape mistakes are bugs in the caller (Internal).
#include <fmt/format.h>

#include <cmath>

#include "roofline/core/error.hpp"
#include "roofline/engine/ops.hpp"
#include "src/engine/cpu/fast_ops.hpp"
#include "src/engine/cpu/ref_ops.hpp"
#include "src/engine/ops/dispatch_util.hpp"

#if ROOFLINE_HAVE_CUDA
#include "src/engine/cuda/ops_cuda.hpp"
#include "src/engine/cuda/ops_cuda_cnn.hpp"
#define ROOFLINE_CUDA_PATH(ctx, fn, ...) return cuda_ops::fn((ctx).cuda(), __VA_ARGS__)
#else
#define ROOFLINE_CUDA_PATH(ctx, fn, ...) \
  throw_unsupported("this roofline was built without CUDA", "use --device cpu, or rebuild with the CUDA toolkit")
#endif

#define ROOFLINE_DISPATCH(ctx, fn, ...)         \
  switch ((ctx).backend()) {                    \
    case Backend::CpuRef:                       \
      return ref::fn<float>(__VA_ARGS__);       \
    case Backend::Cpu:                          \
      return fast::fn(__VA_ARGS__);             \
    case Backend::Cuda:                         \
      ROOFLINE_CUDA_PATH(ctx, fn, __VA_ARGS__); \
  }

namespace roofline::engine::ops {

namespace {
bool float_dtype(DType t) { return t == DType::F32 || t == DType::BF16 || t == DType::F16; }
void check_linear(const LinearShape& s) {
  ROOFLINE_ASSERT(s.n > 0 && s.in > 0 && s.out > 0 && float_dtype(s.dtype),
                  fmt::format("linear shape n={} in={} out={} dtype={}", s.n, s.in, s.out, to_string(s.dtype)));
}
void check_conv(const Conv2dShape& s) {
  ROOFLINE_ASSERT(s.valid(), fmt::format("conv2d shape n={} c={} {}x{} k={} {}x{} stride={} pad={} groups={} dtype={}",
                                         s.n, s.c, s.h, s.w, s.k, s.r, s.s, s.stride, s.pad, s.groups,
                                         to_string(s.dtype)));
}
float* f32(void* p) { return static_cast<float*>(p); }
const float* f32(const void* p) { return static_cast<const float*>(p); }
void check_pool(const Pool2dShape& s) {
  ROOFLINE_ASSERT(s.valid(), fmt::format("maxpool2d shape n={} c={} {}x{} kernel={} stride={} pad={}", s.n, s.c, s.h,
                                         s.w, s.kernel, s.stride, s.pad));
}
void check_activation_dtype(DType t) {
  ROOFLINE_ASSERT(t == DType::F32 || t == DType::BF16 || t == DType::F16, "activation dtype");
}
// The pools the small models' GPU kernels take (conv_pool.cu): unpadded NCHW fp32.
bool small_model_pool(const Pool2dShape& s) {
  return s.pad == 0 && s.format == MemoryFormat::NCHW && s.dtype == DType::F32;
}
void check_rows(const RowsShape& s) { ROOFLINE_ASSERT(s.rows > 0 && s.cols > 0, "rows shape"); }
}  // namespace

void linear_forward(Context& ctx, const LinearShape& s, void* out, const void* in, const void* w, const void* b) {
  check_linear(s);
  ROOFLINE_ASSERT(!s.bias || b, "linear with bias needs a bias");
  ROOFLINE_ASSERT(s.bias_dtype == DType::F32 || (ctx.is_cuda() && s.bias_dtype == s.dtype),
                  "a linear bias in another dtype than fp32 is the GPU's, in the activations' dtype");
  if (!s.bias) b = nullptr;
  switch (ctx.backend()) {
    case Backend::CpuRef:
      require_cpu_fp32(ctx, s.dtype, "linear");
      return ref::linear_forward<float>(s, f32(out), f32(in), f32(w), f32(b));
    case Backend::Cpu:
      require_cpu_fp32(ctx, s.dtype, "linear");
      return fast::linear_forward(s, f32(out), f32(in), f32(w), f32(b));
    case Backend::Cuda:
      ROOFLINE_CUDA_PATH(ctx, linear_forward, s, out, in, w, b);
  }
}

void linear_forward_wt(Context& ctx, const LinearShape& s, float* out, const float* in, const float* wt,
                       const float* b) {
  check_linear(s);
  ROOFLINE_ASSERT(!s.bias || b, "linear with bias needs a bias");
  if (s.dtype != DType::F32)
    throw_unsupported(fmt::format("linear over transposed weights in {}", to_string(s.dtype)),
                      "the transposed-weights forward is the CPU's fp32 inference path: use linear_forward");
  if (!s.bias) b = nullptr;
  ROOFLINE_DISPATCH(ctx, linear_forward_wt, s, out, in, wt, b);
}

bool linear_prefers_wt(const Context& ctx) { return ctx.backend() == Backend::Cpu; }

void linear_backward_input(Context& ctx, const LinearShape& s, void* din, const void* dpre, const void* w) {
  check_linear(s);
  switch (ctx.backend()) {
    case Backend::CpuRef:
      require_cpu_fp32(ctx, s.dtype, "linear");
      return ref::linear_backward_input<float>(s, f32(din), f32(dpre), f32(w));
    case Backend::Cpu:
      require_cpu_fp32(ctx, s.dtype, "linear");
      return fast::linear_backward_input(s, f32(din), f32(dpre), f32(w));
    case Backend::Cuda:
      ROOFLINE_CUDA_PATH(ctx, linear_backward_input, s, din, dpre, w);
  }
}

void linear_backward_weight(Context& ctx, const LinearShape& s, float* dw, float* db, const void* dpre,
                            const void* in) {
  check_linear(s);
  if (!s.bias) db = nullptr;
  switch (ctx.backend()) {
    case Backend::CpuRef:
      require_cpu_fp32(ctx, s.dtype, "linear");
      return ref::linear_backward_weight<float>(s, dw, db, f32(dpre), f32(in));
    case Backend::Cpu:
      require_cpu_fp32(ctx, s.dtype, "linear");
      return fast::linear_backward_weight(s, dw, db, f32(dpre), f32(in));
    case Backend::Cuda:
      ROOFLINE_CUDA_PATH(ctx, linear_backward_weight, s, dw, db, dpre, in);
  }
}

bool linear_softmax_head_forward(Context& ctx, const LinearShape& l1, const LinearShape& l2, float* probs,
                                 const float* in, const float* w1, const float* b1, const float* w2, const float* b2) {
  check_linear(l1);
  check_linear(l2);
  ROOFLINE_ASSERT(l1.n == l2.n && l1.out == l2.in, "head layers do not chain");
  ROOFLINE_ASSERT((!l1.bias || b1) && (!l2.bias || b2), "linear with bias needs a bias");
  if (ctx.backend() != Backend::Cuda) return false;  // the CPU paths run the layers and the softmax
  if (l1.dtype != DType::F32 || l2.dtype != DType::F32) return false;  // the head kernel is fp32
#if ROOFLINE_HAVE_CUDA
  return cuda_ops::linear_head_forward(ctx.cuda(), l1, l2, probs, in, w1, l1.bias ? b1 : nullptr, w2,
                                       l2.bias ? b2 : nullptr);
#else
  return false;
#endif
}

void conv2d_forward(Context& ctx, const Conv2dShape& s, void* out, const void* in, const void* w, const float* b) {
  check_conv(s);
  ROOFLINE_ASSERT(!s.bias || b, "conv2d with bias needs a bias");
  if (!s.bias) b = nullptr;
  switch (ctx.backend()) {
    case Backend::CpuRef:
      require_cpu_fp32(ctx, s.dtype, "conv2d");
      return ref::conv2d_forward<float>(s, f32(out), f32(in), f32(w), b);
    case Backend::Cpu:
      require_cpu_fp32(ctx, s.dtype, "conv2d");  // every format and group count (oneDNN takes what our tiles do not)
      return fast::conv2d_forward(s, f32(out), f32(in), f32(w), b);
    case Backend::Cuda:
      ROOFLINE_CUDA_PATH(ctx, conv2d_forward, s, out, in, w, b);
  }
}

void conv2d_backward_input(Context& ctx, const Conv2dShape& s, void* din, const void* dpre, const void* w) {
  check_conv(s);
  switch (ctx.backend()) {
    case Backend::CpuRef:
      require_cpu_fp32(ctx, s.dtype, "conv2d");
      return ref::conv2d_backward_input<float>(s, f32(din), f32(dpre), f32(w));
    case Backend::Cpu:
      require_cpu_fp32(ctx, s.dtype, "conv2d");  // every format and group count (oneDNN takes what our tiles do not)
      return fast::conv2d_backward_input(s, f32(din), f32(dpre), f32(w));
    case Backend::Cuda:
      ROOFLINE_CUDA_PATH(ctx, conv2d_backward_input, s, din, dpre, w);
  }
}

void conv2d_backward_weight(Context& ctx, const Conv2dShape& s, float* dw, float* db, const void* dpre,
                            const void* in) {
  check_conv(s);
  if (!s.bias) db = nullptr;
  switch (ctx.backend()) {
    case Backend::CpuRef:
      require_cpu_fp32(ctx, s.dtype, "conv2d");
      return ref::conv2d_backward_weight<float>(s, dw, db, f32(dpre), f32(in));
    case Backend::Cpu:
      require_cpu_fp32(ctx, s.dtype, "conv2d");  // every format and group count (oneDNN takes what our tiles do not)
      return fast::conv2d_backward_weight(s, dw, db, f32(dpre), f32(in));
    case Backend::Cuda:
      ROOFLINE_CUDA_PATH(ctx, conv2d_backward_weight, s, dw, db, dpre, in);
  }
}

bool conv2d_maxpool_forward(Context& ctx, const Conv2dShape& s, const Pool2dShape& p, float* out, const float* in,
                            const float* w, const float* b) {
  check_conv(s);
  check_pool(p);
  ROOFLINE_ASSERT(!s.bias || b, "conv2d with bias needs a bias");
  if (!s.bias) b = nullptr;
  if (ctx.backend() != Backend::Cuda) return false;  // the CPU paths run the two ops
  // The pooled kernel is our fp32 NCHW register-tiled convolution with an unpadded NCHW fp32 pool.
  if (s.dtype != DType::F32 || s.format != MemoryFormat::NCHW || s.groups != 1) return false;
  if (!small_model_pool(p)) return false;
#if ROOFLINE_HAVE_CUDA
  return cuda_ops::conv2d_maxpool_forward(ctx.cuda(), s, p, out, in, w, b);
#else
  return false;
#endif
}

// The fast CPU path takes every padding and format; the GPU's pooling kernel
// of the small models (conv_pool.cu) unpadded NCHW fp32, the general kernels
// (pool_cnn.cu) the rest.
void maxpool2d_forward(Context& ctx, const Pool2dShape& s, void* out, std::int32_t* argmax, const void* in) {
  check_pool(s);
  require_cpu_fp32(ctx, s.dtype, "maxpool2d");
  switch (ctx.backend()) {
    case Backend::CpuRef:
      return ref::maxpool2d_forward<float>(s, static_cast<float*>(out), argmax, static_cast<const float*>(in));
    case Backend::Cpu:
      return fast::maxpool2d_forward(s, static_cast<float*>(out), argmax, static_cast<const float*>(in));
    case Backend::Cuda:
      if (small_model_pool(s))
        ROOFLINE_CUDA_PATH(ctx, maxpool2d_forward, s, static_cast<float*>(out), argmax, static_cast<const float*>(in));
      ROOFLINE_CUDA_PATH(ctx, maxpool2d_forward_any, s, out, argmax, in);
  }
}

void maxpool2d_backward(Context& ctx, const Pool2dShape& s, void* din, const void* dout, const std::int32_t* argmax) {
  check_pool(s);
  require_cpu_fp32(ctx, s.dtype, "maxpool2d");
  switch (ctx.backend()) {
    case Backend::CpuRef:
      return ref::maxpool2d_backward<float>(s, static_cast<float*>(din), static_cast<const float*>(dout), argmax);
    case Backend::Cpu:
      return fast::maxpool2d_backward(s, static_cast<float*>(din), static_cast<const float*>(dout), argmax);
    case Backend::Cuda:
      if (small_model_pool(s))
        ROOFLINE_CUDA_PATH(ctx, maxpool2d_backward, s, static_cast<float*>(din), static_cast<const float*>(dout),
                           argmax);
      ROOFLINE_CUDA_PATH(ctx, maxpool2d_backward_any, s, din, dout, argmax);
  }
}

// fp32 takes the small models' kernels (elementwise.cu), bf16/fp16 the
// vectorised ones of eltwise_cnn.cu.
void activation_forward(Context& ctx, const EltwiseShape& s, void* out, const void* in) {
  ROOFLINE_ASSERT(s.n > 0, "activation size");
  check_activation_dtype(s.dtype);
  require_cpu_fp32(ctx, s.dtype, "activation");
  switch (ctx.backend()) {
    case Backend::CpuRef:
      return ref::activation_forward<float>(s, static_cast<float*>(out), static_cast<const float*>(in));
    case Backend::Cpu:
      return fast::activation_forward(s, static_cast<float*>(out), static_cast<const float*>(in));
    case Backend::Cuda:
      if (s.dtype == DType::F32)
        ROOFLINE_CUDA_PATH(ctx, activation_forward, s, static_cast<float*>(out), static_cast<const float*>(in));
      ROOFLINE_CUDA_PATH(ctx, activation_forward_half, s, out, in);
  }
}

void activation_backward(Context& ctx, const EltwiseShape& s, void* din, const void* dout, const void* out) {
  ROOFLINE_ASSERT(s.n > 0, "activation size");
  check_activation_dtype(s.dtype);
  require_cpu_fp32(ctx, s.dtype, "activation");
  switch (ctx.backend()) {
    case Backend::CpuRef:
      return ref::activation_backward<float>(s, static_cast<float*>(din), static_cast<const float*>(dout),
                                             static_cast<const float*>(out));
    case Backend::Cpu:
      return fast::activation_backward(s, static_cast<float*>(din), static_cast<const float*>(dout),
                                       static_cast<const float*>(out));
    case Backend::Cuda:
      if (s.dtype == DType::F32)
        ROOFLINE_CUDA_PATH(ctx, activation_backward, s, static_cast<float*>(din), static_cast<const float*>(dout),
                           static_cast<const float*>(out));
      ROOFLINE_CUDA_PATH(ctx, activation_backward_half, s, din, dout, out);
  }
}

void activation_bias_backward(Context& ctx, const BiasGradShape& s, float* dpre, float* db, const float* dout,
                              const float* out) {
  ROOFLINE_ASSERT(s.rows > 0 && s.cols > 0 && db, "bias-gradient shape");
  ROOFLINE_DISPATCH(ctx, activation_bias_backward, s, dpre, db, dout, out);
}

void softmax_forward(Context& ctx, const RowsShape& s, float* out, const float* in) {
  check_rows(s);
  ROOFLINE_DISPATCH(ctx, softmax_forward, s, out, in);
}

void softmax_backward(Context& ctx, const RowsShape& s, float* din, const float* dout, const float* out) {
  check_rows(s);
  ROOFLINE_DISPATCH(ctx, softmax_backward, s, din, dout, out);
}

void log_softmax_forward(Context& ctx, const RowsShape& s, float* out, const float* in) {
  check_rows(s);
  ROOFLINE_DISPATCH(ctx, log_softmax_forward, s, out, in);
}

void log_softmax_backward(Context& ctx, const RowsShape& s, float* din, const float* dout, const float* out) {
  check_rows(s);
  ROOFLINE_DISPATCH(ctx, log_softmax_backward, s, din, dout, out);
}

void nll_loss_forward(Context& ctx, const RowsShape& s, float* loss, const float* logp, const std::int32_t* labels) {
  check_rows(s);
  switch (ctx.backend()) {
    case Backend::CpuRef:
    case Backend::Cpu:
      return ref::nll_loss_forward<float>(s, loss, logp, labels);
    case Backend::Cuda:
      ROOFLINE_CUDA_PATH(ctx, nll_loss_forward, s, loss, logp, labels);
  }
}

void nll_loss_backward(Context& ctx, const RowsShape& s, float* dlogp, const std::int32_t* labels, float dloss) {
  check_rows(s);
  switch (ctx.backend()) {
    case Backend::CpuRef:
    case Backend::Cpu:
      return ref::nll_loss_backward<float>(s, dlogp, labels, dloss);
    case Backend::Cuda:
      ROOFLINE_CUDA_PATH(ctx, nll_loss_backward, s, dlogp, labels, dloss);
  }
}

void cross_entropy(Context& ctx, const RowsShape& s, float* dlogits, const float* logits, const std::int32_t* labels,
                   float grad_scale, const LossStats& stats) {
  check_rows(s);
  if (ctx.is_cuda()) {
    ROOFLINE_CUDA_PATH(ctx, cross_entropy, s, dlogits, logits, labels, grad_scale, stats);
  }
  // CPU backends: the statistics live in host memory.
  std::int64_t correct = 0;
  double total = ctx.backend() == Backend::CpuRef
                     ? static_cast<double>(ref::cross_entropy<float>(s, dlogits, logits, labels, grad_scale, &correct))
                     : fast::cross_entropy(s, dlogits, logits, labels, grad_scale, &correct);
  const std::int32_t step = stats.step ? *stats.step : 0;
  const float mean = static_cast<float>(total / static_cast<double>(s.rows));
  if (stats.loss_sum) *stats.loss_sum += total;
  if (stats.correct) *stats.correct += static_cast<std::int32_t>(correct);
  if (stats.step_loss) stats.step_loss[step] = mean;
  if (stats.first_bad_step && !std::isfinite(mean) && step < *stats.first_bad_step) *stats.first_bad_step = step;
}

// sgd_update: ops_optim.cpp, beside the overload with a copy and gradient unscaling.

void linear_backward_weight_sgd(Context& ctx, const LinearShape& s, const LinearSgdBuffers& p, const float* dpre,
                                const float* in, const SgdConfig& cfg) {
  check_linear(s);
  const bool momentum = cfg.momentum != 0.0f;
  if (s.dtype != DType::F32)
    throw_unsupported(fmt::format("linear weight gradient + SGD in one op with {} activations", to_string(s.dtype)),
                      "call linear_backward_weight and the optimizer's update separately");
  ROOFLINE_ASSERT(p.w && p.dw && (!s.bias || (p.b && p.db)) && (!momentum || (p.mw && (!s.bias || p.mb))),
                  "linear weight-gradient + sgd buffers");
  if (cfg.nesterov && !momentum)
    throw_unsupported("SGD with Nesterov momentum and momentum 0 (torch.optim.SGD refuses it too)",
                      "give a positive momentum, or turn Nesterov off");
  if (ctx.backend() == Backend::Cpu) return fast::linear_backward_weight_sgd(s, p, dpre, in, cfg);
  linear_backward_weight(ctx, s, p.dw, s.bias ? p.db : nullptr, dpre, in);
  sgd_update(ctx, {s.out * s.in, momentum}, p.w, p.dw, p.mw, cfg);
  if (s.bias) sgd_update(ctx, {s.out, momentum}, p.b, p.db, p.mb, cfg);
}

bool fuses_weight_grad_sgd(const Context& ctx) { return ctx.backend() == Backend::Cpu; }

void for_row_chunks(Context& ctx, std::int64_t n, const std::function<void(std::int64_t, std::int64_t)>& f,
                    double row_flops) {
  ROOFLINE_ASSERT(n > 0, "row count");
  if (ctx.backend() == Backend::Cpu) return fast::for_row_chunks(n, f, row_flops);
  f(0, n);
}

bool linear_joins_row_split(Context& ctx, std::int64_t in) {
  return ctx.backend() != Backend::Cpu || fast::linear_joins_row_split(in);
}

void gather_batch(Context& ctx, const BatchShape& s, float* x, std::int32_t* y, const std::uint8_t* images,
                  const std::uint8_t* labels, const std::int32_t* order, std::int64_t first, const std::int32_t* step) {
  ROOFLINE_ASSERT(s.batch > 0 && s.in_h > 0 && s.in_w > 0 && s.out_h > 0 && s.out_w > 0, "batch shape");
  switch (ctx.backend()) {
    case Backend::CpuRef:
      return ref::gather_batch<float>(s, x, y, images, labels, order, first, step ? *step : 0);
    case Backend::Cpu:
      return fast::gather_batch(s, x, y, images, labels, order, first, step ? *step : 0);
    case Backend::Cuda:
      ROOFLINE_CUDA_PATH(ctx, gather_batch, s, x, y, images, labels, order, first, step);
  }
}

}  // namespace roofline::engine::ops

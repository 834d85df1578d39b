// The dispatchers of the CNN ops (ops_cnn.hpp): check the shape and the
// pointers, refuse bf16/fp16 on the CPU backends, then send the call to the
// reference (CpuRef), the fast CPU path (Cpu) or the CUDA path.
#include <fmt/format.h>

#include "roofline/core/error.hpp"
#include "roofline/engine/ops_cnn.hpp"
#include "src/engine/cpu/fast_cnn.hpp"
#include "src/engine/cpu/ref_cnn.hpp"
#include "src/engine/ops/dispatch_util.hpp"

#if ROOFLINE_HAVE_CUDA
#include "src/engine/cuda/ops_cuda_cnn.hpp"
#define ROOFLINE_CNN_CUDA(ctx, fn, ...) return cuda_ops::fn((ctx).cuda(), __VA_ARGS__)
#else
#define ROOFLINE_CNN_CUDA(ctx, fn, ...) \
  throw_unsupported("this roofline was built without CUDA", "use --device cpu, or rebuild with the CUDA toolkit")
#endif

namespace roofline::engine::ops {

namespace {

float* f32(void* p) { return static_cast<float*>(p); }
const float* f32(const void* p) { return static_cast<const float*>(p); }

std::string describe(const BatchNormShape& s) {
  return fmt::format("batchnorm n={} c={} {}x{} {} {} eps={} momentum={}", s.n, s.c, s.h, s.w, to_string(s.format),
                     to_string(s.dtype), s.eps, s.momentum);
}

void check_bn(const Context& ctx, const BatchNormShape& s) {
  ROOFLINE_ASSERT(s.valid(), describe(s));
  require_cpu_fp32(ctx, s.dtype, "batchnorm");
}
void check_residual(const BatchNormShape& s, const void* residual) {
  ROOFLINE_ASSERT(s.residual == (residual != nullptr), "batchnorm: a residual exactly when s.residual");
}

}  // namespace

void batchnorm_forward_train(Context& ctx, const BatchNormShape& s, void* out, const void* in, const void* residual,
                             const float* gamma, const float* beta, float* running_mean, float* running_var,
                             float* save_mean, float* save_invstd) {
  check_bn(ctx, s);
  check_residual(s, residual);
  ROOFLINE_ASSERT(gamma && beta && running_mean && running_var && save_mean && save_invstd,
                  "batchnorm: parameters and statistics");
  if (s.count() < 2)
    throw_usage(fmt::format("BatchNorm2d in training needs more than 1 value per channel ({}: n·h·w = {})", describe(s),
                            s.count()),
                "train with a batch of 2 or more, or run the layer in eval mode");
  switch (ctx.backend()) {
    case Backend::CpuRef:
      return ref::batchnorm_forward_train<float>(s, f32(out), f32(in), f32(residual), gamma, beta, running_mean,
                                                 running_var, save_mean, save_invstd);
    case Backend::Cpu:
      return fast::batchnorm_forward_train(s, f32(out), f32(in), f32(residual), gamma, beta, running_mean, running_var,
                                           save_mean, save_invstd);
    case Backend::Cuda:
      ROOFLINE_CNN_CUDA(ctx, batchnorm_forward_train, s, out, in, residual, gamma, beta, running_mean, running_var,
                        save_mean, save_invstd);
  }
}

void batchnorm_forward_eval(Context& ctx, const BatchNormShape& s, void* out, const void* in, const void* residual,
                            const float* gamma, const float* beta, const float* running_mean,
                            const float* running_var) {
  check_bn(ctx, s);
  check_residual(s, residual);
  ROOFLINE_ASSERT(gamma && beta && running_mean && running_var, "batchnorm: parameters and statistics");
  switch (ctx.backend()) {
    case Backend::CpuRef:
      return ref::batchnorm_forward_eval<float>(s, f32(out), f32(in), f32(residual), gamma, beta, running_mean,
                                                running_var);
    case Backend::Cpu:
      return fast::batchnorm_forward_eval(s, f32(out), f32(in), f32(residual), gamma, beta, running_mean, running_var);
    case Backend::Cuda:
      ROOFLINE_CNN_CUDA(ctx, batchnorm_forward_eval, s, out, in, residual, gamma, beta, running_mean, running_var);
  }
}

void batchnorm_backward(Context& ctx, const BatchNormShape& s, void* din, float* dgamma, float* dbeta, void* dout,
                        const void* out, const void* in, const float* gamma, const float* save_mean,
                        const float* save_invstd) {
  check_bn(ctx, s);  // no residual argument: the residual's gradient is dpre
  ROOFLINE_ASSERT(din && dgamma && dbeta && dout && in && gamma && save_mean && save_invstd,
                  "batchnorm backward buffers");
  ROOFLINE_ASSERT(s.act == Activation::None || out, "batchnorm backward with ReLU reads the forward output");
  ROOFLINE_ASSERT(din != dout, "batchnorm backward: din may not alias dout");
  switch (ctx.backend()) {
    case Backend::CpuRef:
      return ref::batchnorm_backward<float>(s, f32(din), dgamma, dbeta, f32(dout), f32(out), f32(in), gamma, save_mean,
                                            save_invstd);
    case Backend::Cpu:
      return fast::batchnorm_backward(s, f32(din), dgamma, dbeta, f32(dout), f32(out), f32(in), gamma, save_mean,
                                      save_invstd);
    case Backend::Cuda:
      ROOFLINE_CNN_CUDA(ctx, batchnorm_backward, s, din, dgamma, dbeta, dout, out, in, gamma, save_mean, save_invstd);
  }
}

void adaptive_avgpool2d_forward(Context& ctx, const AvgPoolShape& s, void* out, const void* in) {
  ROOFLINE_ASSERT(s.valid(), "adaptive avgpool shape");
  require_cpu_fp32(ctx, s.dtype, "adaptive_avgpool2d");
  switch (ctx.backend()) {
    case Backend::CpuRef:
      return ref::adaptive_avgpool2d_forward<float>(s, f32(out), f32(in));
    case Backend::Cpu:
      return fast::adaptive_avgpool2d_forward(s, f32(out), f32(in));
    case Backend::Cuda:
      ROOFLINE_CNN_CUDA(ctx, adaptive_avgpool2d_forward, s, out, in);
  }
}

void adaptive_avgpool2d_backward(Context& ctx, const AvgPoolShape& s, void* din, const void* dout) {
  ROOFLINE_ASSERT(s.valid(), "adaptive avgpool shape");
  require_cpu_fp32(ctx, s.dtype, "adaptive_avgpool2d");
  switch (ctx.backend()) {
    case Backend::CpuRef:
      return ref::adaptive_avgpool2d_backward<float>(s, f32(din), f32(dout));
    case Backend::Cpu:
      return fast::adaptive_avgpool2d_backward(s, f32(din), f32(dout));
    case Backend::Cuda:
      ROOFLINE_CNN_CUDA(ctx, adaptive_avgpool2d_backward, s, din, dout);
  }
}

void add_forward(Context& ctx, const EltwiseShape& s, void* out, const void* a, const void* b) {
  ROOFLINE_ASSERT(s.n > 0 && out && a && b, "add shape");
  ROOFLINE_ASSERT(s.dtype == DType::F32 || s.dtype == DType::BF16 || s.dtype == DType::F16, "add dtype");
  require_cpu_fp32(ctx, s.dtype, "add");
  switch (ctx.backend()) {
    case Backend::CpuRef:
      return ref::add_forward<float>(s, f32(out), f32(a), f32(b));
    case Backend::Cpu:
      return fast::add_forward(s, f32(out), f32(a), f32(b));
    case Backend::Cuda:
      ROOFLINE_CNN_CUDA(ctx, add_forward, s, out, a, b);
  }
}

void dropout_forward(Context& ctx, const DropoutShape& s, void* out, const void* in, std::uint64_t seed,
                     const std::int32_t* step) {
  ROOFLINE_ASSERT(s.valid(), fmt::format("dropout n={} p={}", s.n, s.p));
  require_cpu_fp32(ctx, s.dtype, "dropout");
  switch (ctx.backend()) {
    case Backend::CpuRef:
      return ref::dropout_forward<float>(s, f32(out), f32(in), seed, step ? *step : 0);
    case Backend::Cpu:
      return fast::dropout_forward(s, f32(out), f32(in), seed, step ? *step : 0);
    case Backend::Cuda:
      ROOFLINE_CNN_CUDA(ctx, dropout_forward, s, out, in, seed, step);
  }
}

void dropout_backward(Context& ctx, const DropoutShape& s, void* din, const void* dout, std::uint64_t seed,
                      const std::int32_t* step) {
  ROOFLINE_ASSERT(s.valid(), fmt::format("dropout n={} p={}", s.n, s.p));
  require_cpu_fp32(ctx, s.dtype, "dropout");
  switch (ctx.backend()) {
    case Backend::CpuRef:
      return ref::dropout_backward<float>(s, f32(din), f32(dout), seed, step ? *step : 0);
    case Backend::Cpu:
      return fast::dropout_backward(s, f32(din), f32(dout), seed, step ? *step : 0);
    case Backend::Cuda:
      ROOFLINE_CNN_CUDA(ctx, dropout_backward, s, din, dout, seed, step);
  }
}

}  // namespace roofline::engine::ops

// The dispatchers and costs of roofline/engine/ops_optim.hpp (and of the plain
// sgd_update of ops.hpp, which is the same update without a copy or scaling).
// On the CPU backends the scalars (scale, found_inf, step counters) are host
// memory and read here; on Cuda they stay on the device and the kernels read them.
#include "roofline/engine/ops_optim.hpp"

#include <fmt/format.h>

#include <cmath>

#include "roofline/core/error.hpp"
#include "src/engine/cpu/fast_optim.hpp"
#include "src/engine/cpu/ref_ops.hpp"
#include "src/engine/cpu/ref_optim.hpp"

#if ROOFLINE_HAVE_CUDA
#include "src/engine/cuda/ops_cuda_optim.hpp"
#define ROOFLINE_CUDA_PATH(ctx, fn, ...) return cuda_ops::fn((ctx).cuda(), __VA_ARGS__)
#else
#define ROOFLINE_CUDA_PATH(ctx, fn, ...) \
  throw_unsupported("this roofline was built without CUDA", "use --device cpu, or rebuild with the CUDA toolkit")
#endif

namespace roofline::engine::ops {

namespace {

double d(std::int64_t v) { return static_cast<double>(v); }
double width(DType t) { return static_cast<double>(dtype_size(t)); }

bool is_float_type(DType t) { return t == DType::F32 || t == DType::BF16 || t == DType::F16; }

void check_float_type(DType t, const char* what) {
  if (!is_float_type(t))
    throw_unsupported(fmt::format("{} in {}: only F32, BF16 and F16 are supported", what, to_string(t)),
                      "cast to or from fp32, bf16 or fp16");
}

void check_copy(const ParamCopy& c) {
  if (c.data) check_float_type(c.dtype, "a parameter copy");
}

void check_sgd(const SgdShape& s, const float* buf, const SgdConfig& cfg) {
  ROOFLINE_ASSERT(s.n > 0 && (!s.momentum || buf), "sgd shape");
  if (cfg.nesterov && (!s.momentum || cfg.momentum <= 0.0f))
    throw_unsupported(fmt::format("SGD with Nesterov momentum and momentum {} (torch.optim.SGD refuses it too)",
                                  s.momentum ? cfg.momentum : 0.0f),
                      "give a positive momentum, or turn Nesterov off");
}

void check_adamw(const AdamWConfig& c) {
  auto bad = [](const std::string& what, const char* hint) { throw_usage("AdamW: " + what, hint); };
  if (!(c.lr >= 0.0) || !std::isfinite(c.lr)) bad(fmt::format("learning rate {} is not ≥ 0", c.lr), "give lr ≥ 0");
  if (!(c.beta1 >= 0.0 && c.beta1 < 1.0) || !(c.beta2 >= 0.0 && c.beta2 < 1.0))
    bad(fmt::format("betas ({}, {}) are not in [0, 1)", c.beta1, c.beta2), "give betas in [0, 1), as torch");
  if (!(c.eps >= 0.0) || !std::isfinite(c.eps))
    bad(fmt::format("eps {} is not ≥ 0", c.eps), "give eps ≥ 0 (torch's default is 1e-8)");
  if (!(c.weight_decay >= 0.0) || !std::isfinite(c.weight_decay))
    bad(fmt::format("weight decay {} is not ≥ 0", c.weight_decay), "give wd ≥ 0");
}

void check_loss_scale(const LossScaleConfig& c) {
  if (!(c.init > 0.0) || !std::isfinite(static_cast<float>(c.init)) || !(c.growth > 1.0) || !std::isfinite(c.growth) ||
      !(c.backoff > 0.0 && c.backoff < 1.0) || c.interval < 1)
    throw_usage(fmt::format("loss scaling: init {}, growth {}, backoff {}, interval {}", c.init, c.growth, c.backoff,
                            c.interval),
                "give a positive finite init, growth > 1, backoff in (0, 1) and interval ≥ 1 (torch.amp.GradScaler's "
                "rules)");
}

// The host-side view of GradScale (CPU backends).
bool host_skip(const GradScale& g) { return g.found_inf && *g.found_inf != 0; }
float host_inv(const GradScale& g) { return g.inv_scale ? *g.inv_scale : 1.0f; }

OpCost scale_cost(std::int64_t n, const GradScale& g) {
  OpCost c;
  if (g.inv_scale) c += {d(n), 4};
  if (g.found_inf) c.bytes += 4;
  if (g.skipped) c.bytes += 4;
  return c;
}

}  // namespace

// ---- costs --------------------------------------------------------------------------
OpCost sgd_cost(const SgdShape& s, const SgdConfig& cfg, const ParamCopy& copy, const GradScale& scale) {
  OpCost c = s.cost();
  if (cfg.nesterov && s.momentum) c.flops += 2 * d(s.n);
  if (copy.data) c.bytes += width(copy.dtype) * d(s.n);
  return c + scale_cost(s.n, scale);
}

OpCost AdamWShape::cost(const ParamCopy& copy, const GradScale& scale) const {
  OpCost c{14 * d(n), 28 * d(n) + 4 /*step*/};
  if (copy.data) c.bytes += width(copy.dtype) * d(n);
  return c + scale_cost(n, scale);
}

OpCost CastShape::cost() const { return {0, (width(from) + width(to)) * d(n)}; }

// ---- dispatchers ------------------------------------------------------------------------
void sgd_update(Context& ctx, const SgdShape& s, float* param, const float* grad, float* buf, const SgdConfig& cfg,
                std::int32_t* advance_step) {
  sgd_update(ctx, s, param, grad, buf, cfg, advance_step, ParamCopy{}, GradScale{});
}

void sgd_update(Context& ctx, const SgdShape& s, float* param, const float* grad, float* buf, const SgdConfig& cfg,
                std::int32_t* advance_step, const ParamCopy& copy, const GradScale& scale) {
  check_sgd(s, buf, cfg);
  check_copy(copy);
  switch (ctx.backend()) {
    case Backend::CpuRef:
      if (!host_skip(scale)) {
        ref::sgd_update<float>(s, param, grad, buf, cfg, host_inv(scale));
        ref::write_copy(copy, s.n, param);
      }
      break;
    case Backend::Cpu:
      if (!host_skip(scale)) fast::sgd_update_ext(s, param, grad, buf, cfg, host_inv(scale), copy);
      break;
    case Backend::Cuda:
      ROOFLINE_CUDA_PATH(ctx, sgd_update, s, param, grad, buf, cfg, advance_step, copy, scale);
  }
  if (advance_step) ++*advance_step;
}

void adamw_update(Context& ctx, const AdamWShape& s, float* param, const float* grad, float* m, float* v,
                  const AdamWConfig& cfg, const std::int32_t* step, std::int32_t* advance_step, const ParamCopy& copy,
                  const GradScale& scale) {
  ROOFLINE_ASSERT(s.n > 0 && param && grad && m && v, "adamw shape");
  check_adamw(cfg);
  check_copy(copy);
  if (ctx.backend() == Backend::Cuda) {
    ROOFLINE_CUDA_PATH(ctx, adamw_update, s, param, grad, m, v, cfg, step, advance_step, copy, scale);
  }
  if (!host_skip(scale)) {
    const std::int64_t t = std::int64_t{step ? *step : 0} - (scale.skipped ? *scale.skipped : 0) + 1;
    ROOFLINE_ASSERT(t >= 1, fmt::format("adamw step t = {} (step counter below the skipped count)", t));
    const auto sc = ref::adamw_scalars<float>(cfg, t, host_inv(scale));
    if (ctx.backend() == Backend::CpuRef) {
      ref::adamw_update<float>(s.n, param, grad, m, v, sc);
      ref::write_copy(copy, s.n, param);
    } else {
      fast::adamw_update(s, param, grad, m, v, sc, copy);
    }
  }
  if (advance_step) ++*advance_step;
}

void cast(Context& ctx, const CastShape& s, void* out, const void* in) {
  ROOFLINE_ASSERT(s.n > 0 && out && in, "cast shape");
  check_float_type(s.from, "a cast's input");
  check_float_type(s.to, "a cast's output");
  switch (ctx.backend()) {
    case Backend::CpuRef:
      return ref::cast(s, out, in);
    case Backend::Cpu:
      return fast::cast(s, out, in);
    case Backend::Cuda:
      ROOFLINE_CUDA_PATH(ctx, cast, s, out, in);
  }
}

void scale_loss_grad(Context& ctx, std::int64_t n, float* grad, const float* scale) {
  ROOFLINE_ASSERT(n > 0 && grad && scale, "scale_loss_grad shape");
  if (ctx.backend() == Backend::Cuda) {
    ROOFLINE_CUDA_PATH(ctx, scale_loss_grad, n, grad, scale);
  }
  ref::scale_loss_grad(n, grad, *scale);  // batch × classes elements: the loop is the fast path too
}

void grads_check_finite(Context& ctx, std::int64_t n, const float* grad, std::int32_t* found_inf) {
  ROOFLINE_ASSERT(n > 0 && grad && found_inf, "grads_check_finite shape");
  switch (ctx.backend()) {
    case Backend::CpuRef:
      return ref::grads_check_finite(n, grad, found_inf);
    case Backend::Cpu:
      return fast::grads_check_finite(n, grad, found_inf);
    case Backend::Cuda:
      ROOFLINE_CUDA_PATH(ctx, grads_check_finite, n, grad, found_inf);
  }
}

void loss_scale_init(Context& ctx, const LossScaleConfig& cfg, float* scale, float* inv_scale, std::int32_t* tracker,
                     std::int32_t* found_inf, std::int32_t* skipped) {
  check_loss_scale(cfg);
  ROOFLINE_ASSERT(scale && inv_scale && tracker && found_inf && skipped, "loss scale buffers");
  if (ctx.backend() == Backend::Cuda) {
    ROOFLINE_CUDA_PATH(ctx, loss_scale_init, cfg, scale, inv_scale, tracker, found_inf, skipped);
  }
  ref::loss_scale_init(cfg, scale, inv_scale, tracker, found_inf, skipped);
}

void loss_scale_update(Context& ctx, const LossScaleConfig& cfg, float* scale, float* inv_scale, std::int32_t* tracker,
                       std::int32_t* found_inf, std::int32_t* skipped) {
  check_loss_scale(cfg);
  ROOFLINE_ASSERT(scale && inv_scale && tracker && found_inf && skipped, "loss scale buffers");
  if (ctx.backend() == Backend::Cuda) {
    ROOFLINE_CUDA_PATH(ctx, loss_scale_update, cfg, scale, inv_scale, tracker, found_inf, skipped);
  }
  ref::loss_scale_update(cfg, scale, inv_scale, tracker, found_inf, skipped);
}

}  // namespace roofline::engine::ops

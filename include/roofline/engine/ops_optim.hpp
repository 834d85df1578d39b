// The optimizers and the mixed-precision plumbing: SGD (momentum, weight
// decay, Nesterov) and AdamW updating fp32 master parameters in place, each
// able to write a low-precision copy of the updated parameters in the same
// pass and to unscale the gradients and skip the update when a loss-scaled
// backward overflowed; dynamic loss scaling as torch.amp.GradScaler; casts
// between F32, BF16 and F16. Same conventions as ops.hpp.
//
// Mixed precision (PyTorch's autocast with fp32 master weights):
//  - parameters, their gradients and the optimizer state stay fp32; the
//    layers that read their weights in bf16/fp16 read a copy that the
//    optimizer writes right after each update (ParamCopy), so no step spends a
//    pass on casting the weights. cast() makes the first copy, before the
//    first forward.
//  - fp16 only (bf16 has fp32's range): the loss gradient is multiplied by
//    *scale before backward; grads_check_finite() sets found_inf when a
//    gradient overflowed; the update multiplies every gradient by *inv_scale
//    and is skipped as a whole when *found_inf != 0 (GradScale);
//    loss_scale_update() then moves the scale (torch.amp.GradScaler.update)
//    and clears found_inf for the next step.
//
// Every scalar these ops read or write (step counters, scale, found_inf) is a
// pointer into the context's memory (device memory on Cuda, host memory on the
// CPU backends): nothing is read back on the host, so a whole training step
// can be captured in a CUDA graph and replayed, and the skip is decided on the
// device.
#pragma once
#include <cstdint>

#include "roofline/engine/ops.hpp"

namespace roofline::engine::ops {

// Where an update also writes the updated parameters rounded to `dtype`
// (round to nearest even, as cast()): data (n) in dtype; null: no copy. F32
// is a plain copy. A skipped update (GradScale) leaves the copy as it was.
struct ParamCopy {
  void* data = nullptr;
  DType dtype = DType::F32;
};

// Dynamic loss scaling seen from the update (pointers as above; null reads as
// the value in brackets):
//   inv_scale (1): every gradient is multiplied by *inv_scale before use [1];
//   found_inf (1): the whole update is skipped when *found_inf != 0 [0] (the
//     advance_step counter still advances: it counts the loop's steps);
//   skipped (1): steps skipped so far (loss_scale_update's counter) [0]: AdamW
//     counts only the updates that ran in its bias correction, as torch, where
//     GradScaler.step() does not call optimizer.step() on an overflow.
struct GradScale {
  const float* inv_scale = nullptr;
  const std::int32_t* found_inf = nullptr;
  const std::int32_t* skipped = nullptr;
};

// sgd_update (ops.hpp) with a copy of the updated parameters and unscaled
// gradients: g = grad·inv_scale, then the update of ops.hpp, then copy =
// round(p). The whole call is skipped (param, buf, copy unchanged) when
// *found_inf != 0. Nesterov without momentum throws Error(Unsupported).
void sgd_update(Context& ctx, const SgdShape& s, float* param, const float* grad, float* buf, const SgdConfig& cfg,
                std::int32_t* advance_step, const ParamCopy& copy, const GradScale& scale = {});
// The cost of that update: SgdShape::cost() plus the Nesterov step (2 FLOPs),
// the unscaling (1 FLOP) and the copy's bytes at its width, per parameter.
OpCost sgd_cost(const SgdShape& s, const SgdConfig& cfg, const ParamCopy& copy = {}, const GradScale& scale = {});

// ---- AdamW: torch.optim.AdamW (amsgrad off, maximize off) ----------------------
// In double, as torch's Python floats: 1 − β and the bias corrections are
// computed from them in double (1 − 0.999f would be 1.3e-5 off 0.001), and the
// kernels take each per-element factor rounded to float, as torch's do.
struct AdamWConfig {
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 1e-2;
};
struct AdamWShape {
  std::int64_t n = 0;  // parameters
  // 14 FLOPs and 28 bytes a parameter (p, g, m, v read; p, m, v written), the
  // unscaling (1 FLOP) and the copy (its width) when given.
  OpCost cost(const ParamCopy& copy = {}, const GradScale& scale = {}) const;
};
// With t = *step − *scale.skipped + 1 (step: the loop's step counter, 0-based;
// null reads as 0), g = grad·inv_scale, PyTorch's single-tensor AdamW:
//   p ← p·(1 − lr·wd)
//   m ← lerp(m, g, 1 − β1)             (= β1·m + (1 − β1)·g)
//   v ← β2·v + (1 − β2)·g²
//   p ← p − (lr / (1 − β1^t)) · m / (√v / √(1 − β2^t) + eps)
// then copy = round(p). param, grad, m, v (n); m and v start at 0. Skipped as
// a whole when *found_inf != 0. advance_step as in sgd_update; it may be the
// same counter as `step` (it is advanced after every element has read it).
void adamw_update(Context& ctx, const AdamWShape& s, float* param, const float* grad, float* m, float* v,
                  const AdamWConfig& cfg, const std::int32_t* step, std::int32_t* advance_step = nullptr,
                  const ParamCopy& copy = {}, const GradScale& scale = {});

// ---- Casts -----------------------------------------------------------------------
struct CastShape {
  std::int64_t n = 0;
  DType from = DType::F32, to = DType::BF16;
  OpCost cost() const;  // no FLOPs; n elements read and written at their widths
};
// out (n) in s.to = in (n) in s.from, for any pair of F32, BF16 and F16 (the
// same type: a copy): widening is exact, narrowing rounds to nearest even
// (overflow to ±inf, NaN stays NaN), bit for bit as roofline/engine/half.hpp.
void cast(Context& ctx, const CastShape& s, void* out, const void* in);

// ---- Dynamic loss scaling (fp16) ------------------------------------------------------
// The loss gradient scaled before backward (GradScaler.scale(loss)):
// grad (n) ·= *scale, the scale read where it lives (device memory on Cuda),
// so the step needs no host read. A power-of-two scale multiplies exactly
// (absent overflow); a product past fp32's range is ±inf, as torch's.
void scale_loss_grad(Context& ctx, std::int64_t n, float* grad, const float* scale);

// found_inf (1): set to 1 when any of grad (n) is ±inf or NaN; never cleared
// here, so one flag can collect every gradient buffer of a step.
void grads_check_finite(Context& ctx, std::int64_t n, const float* grad, std::int32_t* found_inf);

struct LossScaleConfig {  // torch.amp.GradScaler's defaults; factors in double, as its update kernel takes them
  double init = 65536.0, growth = 2.0, backoff = 0.5;
  std::int32_t interval = 2000;
};
// The state before the first step: scale = init (rounded to float), inv_scale = 1/scale,
// tracker = found_inf = skipped = 0 (each pointer (1)).
void loss_scale_init(Context& ctx, const LossScaleConfig& cfg, float* scale, float* inv_scale, std::int32_t* tracker,
                     std::int32_t* found_inf, std::int32_t* skipped);
// torch.amp.GradScaler.update, after the step's update: when *found_inf,
// scale ·= backoff, tracker = 0, ++*skipped; else ++tracker, and when it
// reaches interval, tracker = 0 and scale ·= growth unless that would be
// infinite. Then inv_scale = 1/scale (rounded from double, as GradScaler) and
// found_inf = 0.
void loss_scale_update(Context& ctx, const LossScaleConfig& cfg, float* scale, float* inv_scale, std::int32_t* tracker,
                       std::int32_t* found_inf, std::int32_t* skipped);

}  // namespace roofline::engine::ops

// The reference optimizers and mixed-precision ops (roofline/engine/ops_optim.hpp):
// plain loops. adamw_update is a template (float: the CpuRef backend, double:
// the harness's reference); the casts and the loss-scale bookkeeping are the
// host conversions of half.hpp and GradScaler's rules, written once.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

#include "roofline/engine/half.hpp"
#include "roofline/engine/ops_optim.hpp"

namespace roofline::engine::ref {

// AdamW's per-call scalars, from the config and t (1-based), as PyTorch
// computes them: in double (Python floats) and then taken as T by the kernels.
template <class T>
struct AdamWScalars {
  T decay;        // 1 − lr·wd
  T w1;           // 1 − β1, the lerp weight
  bool w1_small;  // |w1| < 0.5 picks lerp's form (ATen's lerp)
  T beta2, w2;    // β2, 1 − β2
  T eps;
  T step_size;  // lr / (1 − β1^t)
  T bc2_sqrt;   // √(1 − β2^t)
  T inv_scale;
};

template <class T>
AdamWScalars<T> adamw_scalars(const ops::AdamWConfig& c, std::int64_t t, double inv_scale) {
  const double lr = c.lr, b1 = c.beta1, b2 = c.beta2;
  const double bc1 = 1.0 - std::pow(b1, static_cast<double>(t));
  const double bc2 = 1.0 - std::pow(b2, static_cast<double>(t));
  AdamWScalars<T> s;
  s.decay = static_cast<T>(1.0 - lr * c.weight_decay);
  s.w1 = static_cast<T>(1.0 - b1);
  s.w1_small = std::abs(1.0 - b1) < 0.5;
  s.beta2 = static_cast<T>(b2);
  s.w2 = static_cast<T>(1.0 - b2);
  s.eps = static_cast<T>(c.eps);
  s.step_size = static_cast<T>(lr / bc1);
  s.bc2_sqrt = static_cast<T>(std::sqrt(bc2));
  s.inv_scale = static_cast<T>(inv_scale);
  return s;
}

// torch.optim.AdamW, amsgrad off (its documented algorithm, in the operation
// order of torch.optim.adam._single_tensor_adam with decoupled weight decay):
//   g = grad·inv_scale
//   p ← p·(1 − lr·wd)                                   param.mul_(1 - lr * weight_decay)
//   m ← lerp(m, g, 1 − β1)                              exp_avg.lerp_(grad, 1 - beta1)
//       = m + w·(g − m) for w < 0.5, else g − (g − m)·(1 − w)   (ATen's lerp)
//   v ← v·β2 + ((1 − β2)·g)·g                           exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
//   denom = √v / √(1 − β2^t) + eps                      (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
//   p ← p − (lr / (1 − β1^t))·(m / denom)               param.addcdiv_(exp_avg, denom, value=-step_size)
// (ATen's CUDA addcdiv computes value·(m/denom), its CPU one (value·m)/denom;
// the CUDA form is taken. PyTorch's CUDA division by a scalar multiplies by
// its float reciprocal; the division is kept: both differ by an ulp at most.)
// That is the documented p ← p − lr·m̂/(√v̂ + eps) with m̂ = m/(1 − β1^t) and
// v̂ = v/(1 − β2^t), eps added after the bias correction of √v.
template <class T>
void adamw_update(std::int64_t n, T* p, const T* g, T* m, T* v, const AdamWScalars<T>& s) {
  for (int64_t i = 0; i < n; ++i) {
    const T gi = g[i] * s.inv_scale;
    const T pi = p[i] * s.decay;
    const T mi = s.w1_small ? m[i] + s.w1 * (gi - m[i]) : gi - (gi - m[i]) * (T(1) - s.w1);
    const T vi = v[i] * s.beta2 + (s.w2 * gi) * gi;
    const T denom = std::sqrt(vi) / s.bc2_sqrt + s.eps;
    m[i] = mi;
    v[i] = vi;
    p[i] = pi - s.step_size * (mi / denom);
  }
}

// One value between the three floating formats, as half.hpp rounds it.
inline float load_as_float(DType t, const void* base, std::int64_t i) {
  switch (t) {
    case DType::BF16:
      return float_from_bf16(static_cast<const std::uint16_t*>(base)[i]);
    case DType::F16:
      return float_from_f16(static_cast<const std::uint16_t*>(base)[i]);
    default:
      return static_cast<const float*>(base)[i];
  }
}
inline void store_from_float(DType t, void* base, std::int64_t i, float v) {
  switch (t) {
    case DType::BF16:
      static_cast<std::uint16_t*>(base)[i] = bf16_from_float(v);
      break;
    case DType::F16:
      static_cast<std::uint16_t*>(base)[i] = f16_from_float(v);
      break;
    default:
      static_cast<float*>(base)[i] = v;
  }
}

// out (n) in s.to = in (n) in s.from, through fp32 (exact: fp32 holds every
// bf16 and f16 value, so only the final narrowing rounds). The same type is
// copied bit for bit (a NaN's payload too).
inline void cast(const ops::CastShape& s, void* out, const void* in) {
  if (s.from == s.to) {
    std::memcpy(out, in, static_cast<size_t>(s.n) * dtype_size(s.to));
    return;
  }
  for (std::int64_t i = 0; i < s.n; ++i) store_from_float(s.to, out, i, load_as_float(s.from, in, i));
}

// copy (n) in `dtype` = the n fp32 parameters p, rounded.
inline void write_copy(const ops::ParamCopy& c, std::int64_t n, const float* p) {
  if (c.data) cast({n, DType::F32, c.dtype}, c.data, p);
}

inline void scale_loss_grad(std::int64_t n, float* g, float scale) {
  for (std::int64_t i = 0; i < n; ++i) g[i] *= scale;
}

inline void grads_check_finite(std::int64_t n, const float* g, std::int32_t* found_inf) {
  for (std::int64_t i = 0; i < n; ++i)
    if (!std::isfinite(g[i])) {
      *found_inf = 1;
      return;
    }
}

// torch.amp.GradScaler.update (ATen's _amp_update_scale_): the scale times a
// factor in double, rounded to float; growth only when the result is finite.
// inv_scale as GradScaler.unscale_ makes it: scale.double().reciprocal().float().
inline void loss_scale_update(const ops::LossScaleConfig& c, float* scale, float* inv_scale, std::int32_t* tracker,
                              std::int32_t* found_inf, std::int32_t* skipped) {
  if (*found_inf != 0) {
    *scale = static_cast<float>(static_cast<double>(*scale) * c.backoff);
    *tracker = 0;
    ++*skipped;
  } else {
    const std::int32_t successful = *tracker + 1;
    if (successful == c.interval) {
      const float grown = static_cast<float>(static_cast<double>(*scale) * c.growth);
      if (std::isfinite(grown)) *scale = grown;
      *tracker = 0;
    } else {
      *tracker = successful;
    }
  }
  *inv_scale = static_cast<float>(1.0 / static_cast<double>(*scale));
  *found_inf = 0;
}

inline void loss_scale_init(const ops::LossScaleConfig& c, float* scale, float* inv_scale, std::int32_t* tracker,
                            std::int32_t* found_inf, std::int32_t* skipped) {
  *scale = static_cast<float>(c.init);
  *inv_scale = static_cast<float>(1.0 / static_cast<double>(*scale));
  *tracker = *found_inf = *skipped = 0;
}

}  // namespace roofline::engine::ref

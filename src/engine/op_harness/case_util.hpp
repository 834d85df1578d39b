// Helpers the harness's case builders share (op_cases*.cpp): typed views of
// the device pointers, fp32 rounding, random fills.
#pragma once
#include <cstdint>
#include <vector>

#include "roofline/engine/half.hpp"
#include "roofline/engine/ops.hpp"
#include "roofline/engine/rng.hpp"
#include "src/engine/op_harness/op_case.hpp"

namespace roofline::engine::harness::case_util {

// An activation buffer in its dtype (fp32, bf16 or fp16): the ops take void*.
inline void* P(const DevPtrs& p, int i) { return p[static_cast<size_t>(i)]; }
inline float* F(const DevPtrs& p, int i) { return static_cast<float*>(p[static_cast<size_t>(i)]); }
inline double* D(const DevPtrs& p, int i) { return static_cast<double*>(p[static_cast<size_t>(i)]); }
inline std::int32_t* I(const DevPtrs& p, int i) { return static_cast<std::int32_t*>(p[static_cast<size_t>(i)]); }
inline std::uint8_t* U(const DevPtrs& p, int i) { return static_cast<std::uint8_t*>(p[static_cast<size_t>(i)]); }

// A uniform integer in [lo, hi].
inline std::int64_t pick(Rng& r, std::int64_t lo, std::int64_t hi) {
  return lo + static_cast<std::int64_t>(r.below(static_cast<std::uint64_t>(hi - lo + 1)));
}
// fp32 half the time (the only dtype the CPU backends run), bf16 and fp16 a quarter each.
inline DType random_dtype(Rng& r) {
  const auto k = r.below(4);
  return k == 0 ? DType::BF16 : k == 1 ? DType::F16 : DType::F32;
}
inline double rf(double v) { return static_cast<double>(static_cast<float>(v)); }  // round to fp32

inline void normal(Rng& r, HostBuf& b, std::int64_t n) {
  b.f.resize(static_cast<size_t>(n));
  for (auto& v : b.f) v = r.normal();
}
inline void round_all(HostBuf& b) {
  for (auto& v : b.f) v = rf(v);
}
// Rounds b's values to dtype t (F32, BF16 or F16) as the harness will when it
// uploads them: fills that derive a buffer from another (a forward output a
// backward reads) round first, so the derived values are those of the inputs
// the backend sees.
inline void round_to(DType t, HostBuf& b) {
  for (auto& v : b.f) {
    const float f = static_cast<float>(v);
    v = t == DType::BF16  ? float_from_bf16(bf16_from_float(f))
        : t == DType::F16 ? float_from_f16(f16_from_float(f))
                          : f;
  }
}
inline double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}
// Learning rate, momentum (none one time in four), weight decay (none one
// time in two) and, with momentum, Nesterov one time in three.
inline ops::SgdConfig random_sgd(Rng& r) {
  ops::SgdConfig c{r.uniform(0.001f, 0.1f), r.below(4) == 0 ? 0.f : r.uniform(0.f, 0.95f),
                   r.below(2) == 0 ? 0.f : r.uniform(0.f, 0.01f)};
  c.nesterov = c.momentum > 0.f && r.below(3) == 0;
  return c;
}

}  // namespace roofline::engine::harness::case_util

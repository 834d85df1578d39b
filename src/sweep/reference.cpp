#include "src/sweep/reference.hpp"

#include <cfenv>
#include <cmath>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include <algorithm>

#include "roofline/sweep/input.hpp"

namespace roofline::sweep::ref {

namespace {

struct Format {
  int mantissa_bits;  // stored fraction bits
  int min_exp;        // exponent of the smallest normal number
  int max_exp;        // exponent of the largest finite number
  int exp_bias;
};
constexpr Format kHalf{10, -14, 15, 15};
constexpr Format kBf16{7, -126, 127, 127};

// Rounds v to the format (nearest, ties to even). Scaling by powers of two is
// exact in double, and nearbyint rounds ties to even in the default mode.
double round_to(double v, const Format& f) {
  if (!std::isfinite(v) || v == 0) return v;
  int e = std::ilogb(v);
  if (e < f.min_exp) e = f.min_exp;  // subnormal: fixed quantum
  double quantum = std::ldexp(1.0, e - f.mantissa_bits);
  double r = std::nearbyint(v / quantum) * quantum;
  double largest = std::ldexp(2.0 - std::ldexp(1.0, -f.mantissa_bits), f.max_exp);
  if (std::fabs(r) > largest) return std::copysign(std::numeric_limits<double>::infinity(), v);
  return r;
}

std::uint16_t encode(double r, const Format& f) {
  std::uint16_t sign = std::signbit(r) ? 0x8000 : 0;
  double a = std::fabs(r);
  int exp_field_max = (1 << (15 - f.mantissa_bits)) - 1;
  if (std::isinf(a)) return sign | static_cast<std::uint16_t>(exp_field_max << f.mantissa_bits);
  if (std::isnan(a)) return sign | static_cast<std::uint16_t>((exp_field_max << f.mantissa_bits) | 1);
  if (a == 0) return sign;
  int e = std::ilogb(a);
  if (e < f.min_exp) {  // subnormal: fraction = a / 2^(min_exp - mantissa_bits)
    auto frac = static_cast<std::uint16_t>(std::ldexp(a, f.mantissa_bits - f.min_exp));
    return sign | frac;
  }
  auto frac = static_cast<std::uint16_t>(std::ldexp(a, f.mantissa_bits - e) - std::ldexp(1.0, f.mantissa_bits));
  return sign | static_cast<std::uint16_t>((e + f.exp_bias) << f.mantissa_bits) | frac;
}

double decode(std::uint16_t bits, const Format& f) {
  int exp_field_max = (1 << (15 - f.mantissa_bits)) - 1;
  int ef = (bits >> f.mantissa_bits) & exp_field_max;
  int frac = bits & ((1 << f.mantissa_bits) - 1);
  double s = (bits & 0x8000) ? -1.0 : 1.0;
  if (ef == exp_field_max) return frac ? std::numeric_limits<double>::quiet_NaN() : s * HUGE_VAL;
  if (ef == 0) return s * std::ldexp(frac, f.min_exp - f.mantissa_bits);
  return s * std::ldexp(1.0 + std::ldexp(frac, -f.mantissa_bits), ef - f.exp_bias);
}

template <class Round>
double seed_loop(double x, std::int64_t k, Round round) {
  // The seed's loop with every result rounded to the kernel's type. A sum or
  // product of two such values is exact in double, so rounding it once is
  // exactly the device's correctly rounded operation.
  double result = 0, power = x;
  for (std::int64_t j = 0; j < k; ++j) {
    result = round(result + power);
    power = round(power * x);
  }
  return result;
}

}  // namespace

std::uint16_t to_half_bits(double v) { return encode(round_to(v, kHalf), kHalf); }
std::uint16_t to_bf16_bits(double v) { return encode(round_to(v, kBf16), kBf16); }
double half_value(std::uint16_t bits) { return decode(bits, kHalf); }
double bf16_value(std::uint16_t bits) { return decode(bits, kBf16); }

double input(Variant v, std::uint64_t i, std::uint32_t seed) {
  float x = input_value(i, seed);
  switch (v) {
    case Variant::Fp16: return half_value(to_half_bits(x));
    case Variant::Bf16: return bf16_value(to_bf16_bits(x));
    default: return x;
  }
}

double expected(Variant v, double x, std::int64_t k) {
  switch (v) {
    case Variant::Fp32: {
      float xf = static_cast<float>(x), result = 0.0f, power = xf;
      for (std::int64_t j = 0; j < k; ++j) {
        result += power;
        power *= xf;
      }
      return result;
    }
    case Variant::Fma: {  // Horner: 1 + x + ... + x^k
      float xf = static_cast<float>(x), r = 1.0f;
      for (std::int64_t j = 0; j < k; ++j) r = std::fmaf(r, xf, 1.0f);
      return r;
    }
    case Variant::Fp64: {
      double result = 0, power = x;
      for (std::int64_t j = 0; j < k; ++j) {
        result += power;
        power *= x;
      }
      return result;
    }
    case Variant::Fp16: return seed_loop(x, k, [](double t) { return round_to(t, kHalf); });
    case Variant::Bf16: return seed_loop(x, k, [](double t) { return round_to(t, kBf16); });
  }
  return 0;
}

double tolerance(Variant v, std::int64_t k) {
  double kk = static_cast<double>(k);
  switch (v) {
    case Variant::Fp32: return 4 * kk * std::numeric_limits<float>::epsilon() + 1e-6;
    case Variant::Fma: return 1e-6;  // fmaf on both sides: identical roundings
    case Variant::Fp64: return 4 * kk * std::numeric_limits<double>::epsilon() + 1e-14;
    case Variant::Fp16: return 2 * std::ldexp(1.0, -10);  // two units in the last place
    case Variant::Bf16: return 2 * std::ldexp(1.0, -7);
  }
  return 0;
}

std::vector<std::int64_t> sample_indices(std::int64_t n, int count, std::uint32_t seed) {
  std::vector<std::int64_t> idx;
  if (n <= 0) return idx;
  idx.push_back(0);
  if (n > 1) idx.push_back(n - 1);
  if (count <= 0 || n <= 2) return idx;
  double step = static_cast<double>(n) / count;
  for (int s = 0; s < count; ++s) {
    auto base = static_cast<std::int64_t>(s * step);
    auto span = std::max<std::int64_t>(1, static_cast<std::int64_t>(step));
    std::int64_t i = base + static_cast<std::int64_t>(mix32(static_cast<std::uint32_t>(s) ^ (seed * 0x2545F491u)) % span);
    idx.push_back(std::min(i, n - 1));
  }
  return idx;
}

double decode(Variant v, std::uint64_t bits) {
  switch (v) {
    case Variant::Fp16: return half_value(static_cast<std::uint16_t>(bits));
    case Variant::Bf16: return bf16_value(static_cast<std::uint16_t>(bits));
    case Variant::Fp64: {
      double d;
      std::memcpy(&d, &bits, sizeof d);
      return d;
    }
    default: {
      auto b32 = static_cast<std::uint32_t>(bits);
      float f;
      std::memcpy(&f, &b32, sizeof f);
      return f;
    }
  }
}

Check compare(Variant v, std::int64_t k, std::uint32_t seed, const std::vector<std::int64_t>& idx,
              const std::vector<double>& got) {
  Check c;
  c.tolerance = tolerance(v, k);
  for (size_t s = 0; s < idx.size() && s < got.size(); ++s) {
    double want = expected(v, input(v, static_cast<std::uint64_t>(idx[s]), seed), k);
    double err = std::fabs(got[s] - want) / std::max(std::fabs(want), 1e-30);
    ++c.checked;
    if (!(err <= c.tolerance)) {  // NaN fails too
      if (c.mismatches == 0)
        c.first_mismatch = fmt::format("b[{}] = {:.9g}, host {:.9g} (relative error {:.3g})", idx[s], got[s], want,
                                       err);
      ++c.mismatches;
    }
    if (std::isfinite(err)) c.max_rel_err = std::max(c.max_rel_err, err);
  }
  return c;
}

}  // namespace roofline::sweep::ref

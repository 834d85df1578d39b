#include "roofline/hardware/formats.hpp"

#include <cmath>
#include <limits>

#include "roofline/core/error.hpp"
#include "roofline/core/strings.hpp"

namespace roofline::hw {

namespace {

std::uint64_t ones(int n) { return n >= 64 ? ~0ull : ((1ull << n) - 1); }

}  // namespace

const std::vector<NumberFormat>& number_formats() {
  static const std::vector<NumberFormat> formats = {
      {"fp64", "FP64", "IEEE 754 binary64", 1, 11, 52, Encoding::Ieee, "CUDA and tensor cores, CPU SIMD"},
      {"fp32", "FP32", "IEEE 754 binary32", 1, 8, 23, Encoding::Ieee, "CUDA cores, CPU SIMD, accumulators"},
      {"tf32", "TF32", "NVIDIA TensorFloat-32, stored in 32 bits", 1, 8, 10, Encoding::Ieee,
       "tensor cores (Ampere on), FP32 inputs"},
      {"fp16", "FP16", "IEEE 754 binary16", 1, 5, 10, Encoding::Ieee, "tensor cores, CUDA cores (half2)"},
      {"bf16", "BF16", "bfloat16", 1, 8, 7, Encoding::Ieee, "tensor cores (Ampere on), AVX512_BF16, AMX"},
      {"fp8e4m3", "FP8 E4M3", "OCP FP8 E4M3 (no Inf)", 1, 4, 3, Encoding::FiniteNan,
       "tensor cores (Ada, Hopper on), forward"},
      {"fp8e5m2", "FP8 E5M2", "OCP FP8 E5M2", 1, 5, 2, Encoding::Ieee, "tensor cores (Ada, Hopper on), gradients"},
      {"fp4e2m1", "FP4 E2M1", "OCP MX FP4 (no Inf, no NaN)", 1, 2, 1, Encoding::Finite,
       "tensor cores (Blackwell on), block-scaled"},
      {"int8", "INT8", "two's complement", 1, 0, 7, Encoding::Integer, "tensor cores (Turing on), VNNI, AMX"},
      {"int4", "INT4", "two's complement", 1, 0, 3, Encoding::Integer, "tensor cores (Turing, Ampere)"},
  };
  return formats;
}

const NumberFormat* find_format(const std::string& id) {
  std::string k = to_lower(id);
  for (const auto& f : number_formats())
    if (f.id == k) return &f;
  return nullptr;
}

int NumberFormat::bias() const { return is_integer() ? 0 : static_cast<int>(ones(exponent_bits - 1)); }

double decode(const NumberFormat& f, std::uint64_t bits) {
  ROOFLINE_ASSERT(f.total_bits() <= 64, "format wider than 64 bits: " + f.id);
  bits &= ones(f.total_bits());
  if (f.is_integer()) {
    // Sign-extend the two's complement value.
    int n = f.total_bits();
    std::int64_t v = static_cast<std::int64_t>(bits << (64 - n)) >> (64 - n);
    return static_cast<double>(v);
  }
  const int m = f.mantissa_bits, e = f.exponent_bits;
  const bool negative = (bits >> (m + e)) & 1;
  const std::uint64_t exp = (bits >> m) & ones(e);
  const std::uint64_t man = bits & ones(m);
  double v;
  if (f.encoding == Encoding::Ieee && exp == ones(e)) {
    v = man == 0 ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
  } else if (f.encoding == Encoding::FiniteNan && exp == ones(e) && man == ones(m)) {
    v = std::numeric_limits<double>::quiet_NaN();
  } else if (exp == 0) {
    // Subnormal: 0.man x 2^(1 - bias).
    v = std::ldexp(static_cast<double>(man), 1 - f.bias() - m);
  } else {
    // Normal: 1.man x 2^(exp - bias); (2^m + man) is exact in a double for m <= 52.
    v = std::ldexp(static_cast<double>((1ull << m) + man), static_cast<int>(exp) - f.bias() - m);
  }
  return negative ? -v : v;
}

std::uint64_t max_finite_bits(const NumberFormat& f) {
  const int m = f.mantissa_bits, e = f.exponent_bits;
  switch (f.encoding) {
    case Encoding::Ieee:
      return ((ones(e) - 1) << m) | ones(m);  // exponent below all-ones
    case Encoding::FiniteNan:
      return (ones(e) << m) | (ones(m) - 1);  // all-ones is NaN
    case Encoding::Finite:
      return (ones(e) << m) | ones(m);  // every pattern is a number
    case Encoding::Integer:
      return ones(f.total_bits() - 1);  // 0111...1
  }
  return 0;
}

double NumberFormat::max_finite() const { return decode(*this, max_finite_bits(*this)); }
double NumberFormat::min_normal() const { return is_integer() ? 1.0 : decode(*this, 1ull << mantissa_bits); }
double NumberFormat::min_subnormal() const { return decode(*this, 1); }
double NumberFormat::epsilon() const {
  if (is_integer()) return 1.0;
  const std::uint64_t one = static_cast<std::uint64_t>(bias()) << mantissa_bits;  // the pattern of 1.0
  return decode(*this, one + 1) - decode(*this, one);
}
std::int64_t NumberFormat::int_min() const {
  return is_integer() ? static_cast<std::int64_t>(decode(*this, 1ull << (total_bits() - 1))) : 0;
}
std::int64_t NumberFormat::int_max() const {
  return is_integer() ? static_cast<std::int64_t>(decode(*this, max_finite_bits(*this))) : 0;
}

}  // namespace roofline::hw

// Number formats that GPUs and CPUs compute in: sign/exponent/mantissa bits
// and every figure that follows from the bit layout (bias, largest finite
// value, smallest normal, machine epsilon). The figures are computed by
// decoding bit patterns, never typed in, so the table cannot drift from the
// layout it describes.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace roofline::hw {

enum class Encoding {
  Ieee,       // IEEE 754: all-ones exponent is Inf (mantissa 0) or NaN
  FiniteNan,  // OCP FP8 E4M3 ("fn"): no Inf; only the all-ones pattern is NaN
  Finite,     // OCP FP4 E2M1: no Inf, no NaN
  Integer,    // two's complement integer
};

struct NumberFormat {
  std::string id;        // "fp32", "fp8e4m3", "int8"
  std::string name;      // "FP32", "FP8 E4M3"
  std::string standard;  // "IEEE 754 binary32", "OCP FP8 E4M3 (no Inf)"
  int sign_bits = 1;
  int exponent_bits = 0;
  int mantissa_bits = 0;  // stored fraction bits (integers: value bits, sign excluded)
  Encoding encoding = Encoding::Ieee;
  std::string used_for;  // where it appears: "CUDA cores, tensor cores (FP32 accumulate)"

  int total_bits() const { return sign_bits + exponent_bits + mantissa_bits; }
  bool is_integer() const { return encoding == Encoding::Integer; }
  int bias() const;  // 2^(e-1) - 1; 0 for integers
  bool has_infinity() const { return encoding == Encoding::Ieee; }
  bool has_nan() const { return encoding == Encoding::Ieee || encoding == Encoding::FiniteNan; }

  // Floating-point formats (all computed by decode()):
  double max_finite() const;
  double min_normal() const;
  double min_subnormal() const;
  double epsilon() const;  // distance from 1.0 to the next larger value
  // Integer formats:
  std::int64_t int_min() const;
  std::int64_t int_max() const;
};

// FP64, FP32, TF32, FP16, BF16, FP8 E4M3, FP8 E5M2, FP4 E2M1, INT8, INT4.
const std::vector<NumberFormat>& number_formats();
const NumberFormat* find_format(const std::string& id);

// The value of a bit pattern (its low total_bits() bits) in a floating-point
// format: NaN and ±Inf where the encoding has them. Integers: the signed value.
double decode(const NumberFormat& f, std::uint64_t bits);
// The bit pattern of the largest finite value.
std::uint64_t max_finite_bits(const NumberFormat& f);

}  // namespace roofline::hw

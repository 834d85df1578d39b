// Host conversions between fp32 and the 16-bit floating formats, bit for bit
// as the GPU's conversion instructions do them (round to nearest even; NaN
// stays NaN). The one home of these conversions on the host: the safetensors
// reader, the op harness, the CPU casts and the tests use them.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

namespace roofline::engine {

inline std::uint32_t float_bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float bits_float(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// bfloat16: the upper 16 bits of an fp32, rounded to nearest even.
inline std::uint16_t bf16_from_float(float f) {
  std::uint32_t u = float_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((u >> 16) | 0x40u);  // quiet NaN
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<std::uint16_t>(u >> 16);
}
inline float float_from_bf16(std::uint16_t h) { return bits_float(static_cast<std::uint32_t>(h) << 16); }

// IEEE binary16: 1 sign, 5 exponent, 10 mantissa bits; overflow to infinity,
// subnormals kept, round to nearest even.
inline std::uint16_t f16_from_float(float f) {
  std::uint32_t u = float_bits(f);
  std::uint32_t sign = (u >> 16) & 0x8000u;
  std::uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return static_cast<std::uint16_t>(sign | 0x7e00u);  // NaN
  if (a >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // rounds to ≥ 65520: infinity
  if (a < 0x38800000u) {                                                    // below 2^-14: subnormal or zero
    // a as a float times 2^24 is the subnormal's integer mantissa; rint rounds to nearest even.
    float v = bits_float(a) * 16777216.0f;
    return static_cast<std::uint16_t>(sign | static_cast<std::uint32_t>(std::nearbyint(v)));
  }
  std::uint32_t r = a - 0x38000000u;          // rebias the exponent (127 -> 15), mantissa kept
  r += 0xfffu + ((r >> 13) & 1u);              // round to nearest even at bit 13
  return static_cast<std::uint16_t>(sign | (r >> 13));
}
inline float float_from_f16(std::uint16_t h) {
  std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  std::uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0) return bits_float(sign) + (sign ? -1.0f : 1.0f) * std::ldexp(static_cast<float>(m), -24);
  if (e == 31) return bits_float(sign | 0x7f800000u | (m << 13));
  return bits_float(sign | ((e + 112u) << 23) | (m << 13));
}

}  // namespace roofline::engine

// Number formats: figures computed from the bit layout must equal the values
// the standards and <cfloat> give, and decode() must agree with the hardware's
// own FP32/FP64 on random bit patterns.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "roofline/hardware/formats.hpp"

using namespace roofline::hw;

namespace {
const NumberFormat& fmt_of(const char* id) {
  const NumberFormat* f = find_format(id);
  if (!f) throw std::runtime_error(std::string("no format ") + id);
  return *f;
}
}  // namespace

TEST(Formats, TableHasEveryFormatWithItsLayout) {
  struct Want {
    const char* id;
    int e, m, bits;
  };
  for (Want w :
       {Want{"fp64", 11, 52, 64}, Want{"fp32", 8, 23, 32}, Want{"tf32", 8, 10, 19}, Want{"fp16", 5, 10, 16},
        Want{"bf16", 8, 7, 16}, Want{"fp8e4m3", 4, 3, 8}, Want{"fp8e5m2", 5, 2, 8}, Want{"fp4e2m1", 2, 1, 4}}) {
    const NumberFormat& f = fmt_of(w.id);
    EXPECT_EQ(f.sign_bits, 1) << w.id;
    EXPECT_EQ(f.exponent_bits, w.e) << w.id;
    EXPECT_EQ(f.mantissa_bits, w.m) << w.id;
    EXPECT_EQ(f.total_bits(), w.bits) << w.id;
  }
  EXPECT_TRUE(fmt_of("int8").is_integer());
  EXPECT_EQ(find_format("fp7"), nullptr);
}

TEST(Formats, Fp64AndFp32MatchCfloat) {
  const NumberFormat& d = fmt_of("fp64");
  EXPECT_EQ(d.bias(), 1023);
  EXPECT_EQ(d.max_finite(), DBL_MAX);
  EXPECT_EQ(d.min_normal(), DBL_MIN);
  EXPECT_EQ(d.min_subnormal(), std::numeric_limits<double>::denorm_min());
  EXPECT_EQ(d.epsilon(), DBL_EPSILON);
  const NumberFormat& f = fmt_of("fp32");
  EXPECT_EQ(f.bias(), 127);
  EXPECT_EQ(f.max_finite(), static_cast<double>(FLT_MAX));
  EXPECT_EQ(f.min_normal(), static_cast<double>(FLT_MIN));
  EXPECT_EQ(f.min_subnormal(), static_cast<double>(std::numeric_limits<float>::denorm_min()));
  EXPECT_EQ(f.epsilon(), static_cast<double>(FLT_EPSILON));
}

TEST(Formats, HalfPrecisionAndNarrowerMatchPublishedValues) {
  const NumberFormat& h = fmt_of("fp16");
  EXPECT_EQ(h.bias(), 15);
  EXPECT_EQ(h.max_finite(), 65504.0);
  EXPECT_EQ(h.min_normal(), std::ldexp(1.0, -14));  // 6.103515625e-05
  EXPECT_EQ(h.min_subnormal(), std::ldexp(1.0, -24));
  EXPECT_EQ(h.epsilon(), std::ldexp(1.0, -10));

  const NumberFormat& b = fmt_of("bf16");
  EXPECT_EQ(b.bias(), 127);
  EXPECT_EQ(b.max_finite(), 3.3895313892515355e38);         // (2 - 2^-7) x 2^127
  EXPECT_EQ(b.min_normal(), static_cast<double>(FLT_MIN));  // same exponent range as FP32
  EXPECT_EQ(b.epsilon(), 0.0078125);

  const NumberFormat& t = fmt_of("tf32");
  EXPECT_EQ(t.max_finite(), (2 - std::ldexp(1.0, -10)) * std::ldexp(1.0, 127));
  EXPECT_EQ(t.epsilon(), std::ldexp(1.0, -10));  // FP16's precision, FP32's range

  const NumberFormat& e4 = fmt_of("fp8e4m3");
  EXPECT_EQ(e4.bias(), 7);
  EXPECT_EQ(e4.max_finite(), 448.0);  // OCP: no Inf, S.1111.111 is NaN
  EXPECT_EQ(e4.min_normal(), std::ldexp(1.0, -6));
  EXPECT_EQ(e4.min_subnormal(), std::ldexp(1.0, -9));
  EXPECT_EQ(e4.epsilon(), 0.125);
  EXPECT_FALSE(e4.has_infinity());
  EXPECT_TRUE(e4.has_nan());

  const NumberFormat& e5 = fmt_of("fp8e5m2");
  EXPECT_EQ(e5.bias(), 15);
  EXPECT_EQ(e5.max_finite(), 57344.0);
  EXPECT_EQ(e5.min_normal(), std::ldexp(1.0, -14));
  EXPECT_EQ(e5.min_subnormal(), std::ldexp(1.0, -16));
  EXPECT_EQ(e5.epsilon(), 0.25);
  EXPECT_TRUE(e5.has_infinity());

  const NumberFormat& f4 = fmt_of("fp4e2m1");
  EXPECT_EQ(f4.max_finite(), 6.0);
  EXPECT_EQ(f4.min_normal(), 1.0);
  EXPECT_EQ(f4.min_subnormal(), 0.5);
  EXPECT_FALSE(f4.has_nan());
}

TEST(Formats, SpecialPatternsDecodeAsTheStandardsSay) {
  const NumberFormat& h = fmt_of("fp16");
  EXPECT_TRUE(std::isinf(decode(h, 0x7C00)));
  EXPECT_TRUE(std::isnan(decode(h, 0x7E00)));
  EXPECT_EQ(decode(h, 0x3C00), 1.0);
  EXPECT_EQ(decode(h, 0xC000), -2.0);
  const NumberFormat& e4 = fmt_of("fp8e4m3");
  EXPECT_TRUE(std::isnan(decode(e4, 0x7F)));  // S.1111.111
  EXPECT_EQ(decode(e4, 0x7E), 448.0);         // S.1111.110 is a number
  EXPECT_EQ(decode(e4, 0x78), 256.0);         // all-ones exponent is not Inf
  const NumberFormat& e5 = fmt_of("fp8e5m2");
  EXPECT_TRUE(std::isinf(decode(e5, 0x7C)));
  EXPECT_TRUE(std::isnan(decode(e5, 0x7D)));
  const NumberFormat& f4 = fmt_of("fp4e2m1");
  // Every E2M1 value: 0, 0.5, 1, 1.5, 2, 3, 4, 6 and their negatives.
  const double values[] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
  for (unsigned i = 0; i < 8; ++i) {
    EXPECT_EQ(decode(f4, i), values[i]);
    EXPECT_EQ(decode(f4, i | 8), -values[i]);
  }
}

TEST(Formats, DecodeAgreesWithHardwareOnRandomBits) {
  std::mt19937_64 rng(std::random_device{}());
  const NumberFormat& f = fmt_of("fp32");
  const NumberFormat& d = fmt_of("fp64");
  for (int i = 0; i < 20000; ++i) {
    std::uint32_t b32 = static_cast<std::uint32_t>(rng());
    float x;
    std::memcpy(&x, &b32, 4);
    double got = decode(f, b32);
    if (std::isnan(x))
      EXPECT_TRUE(std::isnan(got));
    else
      EXPECT_EQ(got, static_cast<double>(x)) << std::hex << b32;
    std::uint64_t b64 = rng();
    double y;
    std::memcpy(&y, &b64, 8);
    double got64 = decode(d, b64);
    if (std::isnan(y))
      EXPECT_TRUE(std::isnan(got64));
    else
      EXPECT_EQ(got64, y) << std::hex << b64;
  }
  // BF16 is the top half of an FP32: the same value.
  const NumberFormat& b = fmt_of("bf16");
  for (int i = 0; i < 5000; ++i) {
    std::uint16_t hi = static_cast<std::uint16_t>(rng());
    std::uint32_t b32 = static_cast<std::uint32_t>(hi) << 16;
    float x;
    std::memcpy(&x, &b32, 4);
    if (std::isnan(x))
      EXPECT_TRUE(std::isnan(decode(b, hi)));
    else
      EXPECT_EQ(decode(b, hi), static_cast<double>(x));
  }
}

TEST(Formats, IntegersAreTwosComplement) {
  const NumberFormat& i8 = fmt_of("int8");
  EXPECT_EQ(i8.int_min(), -128);
  EXPECT_EQ(i8.int_max(), 127);
  EXPECT_EQ(decode(i8, 0xFF), -1.0);
  const NumberFormat& i4 = fmt_of("int4");
  EXPECT_EQ(i4.int_min(), -8);
  EXPECT_EQ(i4.int_max(), 7);
  EXPECT_EQ(i4.total_bits(), 4);
}

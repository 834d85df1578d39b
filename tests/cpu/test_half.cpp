// The host conversions of roofline/engine/half.hpp: every 16-bit value round
// trips, and fp32 values round to the nearest representable one (ties to even).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "roofline/engine/half.hpp"
#include "roofline/engine/rng.hpp"

using namespace roofline::engine;

TEST(Half, EveryValueRoundTrips) {
  for (std::uint32_t h = 0; h < 65536; ++h) {
    const auto v = static_cast<std::uint16_t>(h);
    float f = float_from_f16(v);
    if (!std::isnan(f)) EXPECT_EQ(f16_from_float(f), v) << std::hex << h;
    float b = float_from_bf16(v);
    if (!std::isnan(b)) EXPECT_EQ(bf16_from_float(b), v) << std::hex << h;
  }
}

TEST(Half, RoundsToNearestEven) {
  EXPECT_EQ(float_from_f16(f16_from_float(1.0f + 1.0f / 2048)), 1.0f);                // tie: down to even
  EXPECT_EQ(float_from_f16(f16_from_float(1.0f + 3.0f / 2048)), 1.0f + 2.0f / 1024);  // tie: up to even
  EXPECT_EQ(float_from_bf16(bf16_from_float(1.0f + 1.0f / 256)), 1.0f);
  EXPECT_EQ(float_from_bf16(bf16_from_float(1.0f + 3.0f / 256)), 1.0f + 2.0f / 128);
  EXPECT_TRUE(std::isinf(float_from_f16(f16_from_float(65520.0f))));
  EXPECT_EQ(float_from_f16(f16_from_float(65519.0f)), 65504.0f);
  EXPECT_TRUE(std::isnan(float_from_f16(f16_from_float(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_TRUE(std::isnan(float_from_bf16(bf16_from_float(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_EQ(float_from_f16(f16_from_float(std::ldexp(1.0f, -24))), std::ldexp(1.0f, -24));  // smallest subnormal
  Rng rng(7);
  for (int i = 0; i < 200000; ++i) {
    float f = rng.uniform(-60000.0f, 60000.0f) * std::ldexp(1.0f, -static_cast<int>(rng.uniform(0.0f, 30.0f)));
    for (bool bf : {false, true}) {
      std::uint16_t h = bf ? bf16_from_float(f) : f16_from_float(f);
      auto back = [&](std::uint16_t x) { return bf ? float_from_bf16(x) : float_from_f16(x); };
      double e = std::fabs(static_cast<double>(back(h)) - f);
      for (int d : {-1, 1}) {
        std::uint16_t n = static_cast<std::uint16_t>(h + d);
        float nv = back(n);
        if (std::isfinite(nv)) EXPECT_LE(e, std::fabs(static_cast<double>(nv) - f)) << f << (bf ? " bf16" : " f16");
      }
    }
  }
}

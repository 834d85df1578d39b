// The optimizers and mixed-precision ops (roofline/engine/ops_optim.hpp) on the
// CPU backends, beyond the op harness's float64 checks: the low-precision
// parameter copy equals the rounding of the updated fp32 parameter bit for
// bit; casts bit for bit as half.hpp over every 16-bit pattern (NaN included);
// torch's SGD (Nesterov) and AdamW on values worked out by hand; GradScaler's
// update over a scripted run; the skip and its step accounting; the errors.
// The CUDA side: tests/gpu/test_optim_gpu.cpp.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "roofline/core/error.hpp"
#include "roofline/engine/half.hpp"
#include "roofline/engine/ops_optim.hpp"
#include "roofline/engine/rng.hpp"

using namespace roofline;
using namespace roofline::engine;

namespace {

const Backend kCpuBackends[] = {Backend::CpuRef, Backend::Cpu};

std::vector<float> normals(std::int64_t n, std::uint64_t seed, float scale = 1.0f) {
  Rng r(seed);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = r.normal() * scale;
  return v;
}

std::uint16_t round16(DType t, float v) { return t == DType::BF16 ? bf16_from_float(v) : f16_from_float(v); }

// The copy (n) holds round(p) for every element, bit for bit.
void expect_copy_is_rounding(DType t, const std::vector<float>& p, const void* copy, const std::string& what) {
  size_t wrong = 0, first = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    bool ok;
    if (t == DType::F32) {
      ok = std::memcmp(&p[i], static_cast<const float*>(copy) + i, 4) == 0;
    } else {
      ok = static_cast<const std::uint16_t*>(copy)[i] == round16(t, p[i]);
    }
    if (!ok && wrong++ == 0) first = i;
  }
  EXPECT_EQ(wrong, 0u) << what << ": " << wrong << " of " << p.size() << " copies differ, first at " << first;
}

bool same_bits(float a, float b) { return std::memcmp(&a, &b, 4) == 0; }

}  // namespace

// ---- the parameter copy ------------------------------------------------------------------------

TEST(OptimCpu, SgdCopyIsTheRoundingOfTheUpdatedParameterBitForBit) {
  for (Backend b : kCpuBackends)
    for (DType t : {DType::BF16, DType::F16, DType::F32})
      for (bool nesterov : {false, true}) {
        Context ctx(b);
        const std::int64_t n = 100003;  // several threads' chunks and an odd tail
        std::vector<float> p = normals(n, 1), g = normals(n, 2, 1000.0f), buf = normals(n, 3);
        std::vector<std::uint8_t> copy(static_cast<size_t>(n) * dtype_size(t), 0xa5);
        const float inv = 1.0f / 1024;
        const std::int32_t no_inf = 0;
        ops::SgdConfig cfg{0.05f, 0.9f, 1e-3f, nesterov};
        ops::sgd_update(ctx, {n, true}, p.data(), g.data(), buf.data(), cfg, nullptr, {copy.data(), t},
                        {&inv, &no_inf});
        expect_copy_is_rounding(t, p, copy.data(), std::string(to_string(b)) + " " + to_string(t));
      }
}

TEST(OptimCpu, AdamWCopyIsTheRoundingOfTheUpdatedParameterBitForBit) {
  for (Backend b : kCpuBackends)
    for (DType t : {DType::BF16, DType::F16}) {
      Context ctx(b);
      const std::int64_t n = 70001;
      std::vector<float> p = normals(n, 4), g = normals(n, 5), m = normals(n, 6), v = normals(n, 7);
      for (auto& x : v) x = x * x;
      std::vector<std::uint16_t> copy(static_cast<size_t>(n), 0xa5a5);
      const std::int32_t step = 3;
      ops::adamw_update(ctx, {n}, p.data(), g.data(), m.data(), v.data(), {}, &step, nullptr, {copy.data(), t});
      expect_copy_is_rounding(t, p, copy.data(), std::string(to_string(b)) + " " + to_string(t));
    }
}

// The fast path computes each element with the reference's float operations
// in their order (no contraction, IEEE sqrt and division): the same bits.
TEST(OptimCpu, FastPathGivesTheReferenceBits) {
  const std::int64_t n = 50001;
  for (int variant = 0; variant < 4; ++variant) {
    std::vector<float> p[2], g = normals(n, 8), buf[2], m[2], v[2];
    for (int k = 0; k < 2; ++k) {
      p[k] = normals(n, 9);
      buf[k] = normals(n, 10);
      m[k] = normals(n, 11);
      v[k] = normals(n, 12);
      for (auto& x : v[k]) x = x * x;
      Context ctx(kCpuBackends[k]);
      const float inv = 0.37f;
      const std::int32_t step = 41, skipped = 3, no_inf = 0;
      const ops::GradScale scale{&inv, &no_inf, &skipped};
      if (variant < 3) {
        ops::SgdConfig cfg{0.03f, variant == 0 ? 0.f : 0.8f, 5e-4f, variant == 2};
        ops::sgd_update(ctx, {n, variant != 0}, p[k].data(), g.data(), buf[k].data(), cfg, nullptr, {}, scale);
      } else {
        ops::AdamWConfig cfg{3e-3f, 0.3f /* lerp's other form */, 0.99f, 1e-6f, 0.05f};
        ops::adamw_update(ctx, {n}, p[k].data(), g.data(), m[k].data(), v[k].data(), cfg, &step, nullptr, {}, scale);
      }
    }
    for (size_t i = 0; i < p[0].size(); ++i) {
      ASSERT_TRUE(same_bits(p[0][i], p[1][i])) << "variant " << variant << " at " << i;
      ASSERT_TRUE(same_bits(buf[0][i], buf[1][i])) << "variant " << variant << " at " << i;
      ASSERT_TRUE(same_bits(m[0][i], m[1][i])) << "variant " << variant << " at " << i;
      ASSERT_TRUE(same_bits(v[0][i], v[1][i])) << "variant " << variant << " at " << i;
    }
  }
}

// ---- torch's algorithms on values worked out by hand ----------------------------------------------

// torch.optim.SGD(lr=0.1, momentum=0.9, weight_decay=0.1, nesterov=True), p = 1, g = 0.5 twice:
//   step 1: g' = 0.5 + 0.1·1 = 0.6; buf = 0.6; step = 0.6 + 0.9·0.6 = 1.14; p = 1 − 0.114 = 0.886
//   step 2: g' = 0.5 + 0.0886 = 0.5886; buf = 0.54 + 0.5886 = 1.1286;
//           step = 0.5886 + 0.9·1.1286 = 1.60434; p = 0.886 − 0.160434 = 0.725566
TEST(OptimCpu, SgdNesterovFollowsTorch) {
  for (Backend b : kCpuBackends) {
    Context ctx(b);
    float p = 1.0f, g = 0.5f, buf = 0.0f;
    std::int32_t step = 0;
    const ops::SgdConfig cfg{0.1f, 0.9f, 0.1f, true};
    ops::sgd_update(ctx, {1, true}, &p, &g, &buf, cfg, &step);
    EXPECT_NEAR(p, 0.886, 1e-6);
    EXPECT_NEAR(buf, 0.6, 1e-6);
    ops::sgd_update(ctx, {1, true}, &p, &g, &buf, cfg, &step);
    EXPECT_NEAR(p, 0.725566, 1e-6);
    EXPECT_NEAR(buf, 1.1286, 1e-6);
    EXPECT_EQ(step, 2);
  }
}

// torch.optim.AdamW(lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2)
// from m = v = 0, the documented algorithm written out in double.
TEST(OptimCpu, AdamWFollowsTorchsAlgorithm) {
  const double lr = 1e-3, b1 = 0.9, b2 = 0.999, eps = 1e-8, wd = 1e-2;
  const double grads[] = {0.5, -0.25, 2.0, 0.125};
  for (Backend b : kCpuBackends) {
    Context ctx(b);
    float p = 1.0f, m = 0.0f, v = 0.0f;
    double pd = 1.0, md = 0.0, vd = 0.0;
    std::int32_t step = 0;
    for (double gd : grads) {
      const float g = static_cast<float>(gd);
      ops::adamw_update(ctx, {1}, &p, &g, &m, &v, {}, &step, &step);
      const double t = step;  // already advanced
      pd *= 1 - lr * wd;
      md = b1 * md + (1 - b1) * gd;
      vd = b2 * vd + (1 - b2) * gd * gd;
      const double mhat = md / (1 - std::pow(b1, t)), vhat = vd / (1 - std::pow(b2, t));
      pd -= lr * mhat / (std::sqrt(vhat) + eps);
      EXPECT_NEAR(p, pd, 1e-6 * std::abs(pd)) << to_string(b) << " t=" << t;
      EXPECT_NEAR(m, md, 1e-6 * std::abs(md));
      EXPECT_NEAR(v, vd, 1e-6 * std::abs(vd));
    }
    EXPECT_EQ(step, 4);
  }
}

// ---- loss scaling ---------------------------------------------------------------------------------

struct ScaleState {
  float scale = 0, inv = 0;
  std::int32_t tracker = -1, found_inf = -1, skipped = -1;
};

// torch.amp.GradScaler(init_scale=65536, growth_interval=3): an overflow halves
// the scale and is counted; 3 good steps in a row double it.
TEST(OptimCpu, LossScaleFollowsGradScalerOverARun) {
  const ops::LossScaleConfig cfg{65536.0f, 2.0f, 0.5f, 3};
  struct Step {
    bool overflow;
    float scale;
    std::int32_t tracker, skipped;
  };
  const Step run[] = {{true, 32768, 0, 1},  {false, 32768, 1, 1}, {false, 32768, 2, 1}, {false, 65536, 0, 1},
                      {false, 65536, 1, 1}, {true, 32768, 0, 2},  {true, 16384, 0, 3},  {false, 16384, 1, 3},
                      {false, 16384, 2, 3}, {false, 32768, 0, 3}};
  for (Backend b : kCpuBackends) {
    Context ctx(b);
    ScaleState s;
    ops::loss_scale_init(ctx, cfg, &s.scale, &s.inv, &s.tracker, &s.found_inf, &s.skipped);
    EXPECT_EQ(s.scale, 65536.0f);
    EXPECT_EQ(s.inv, 1.0f / 65536);
    EXPECT_EQ(s.tracker + s.found_inf + s.skipped, 0);
    int k = 0;
    for (const Step& st : run) {
      std::vector<float> grad = {1.0f, st.overflow ? INFINITY : 2.0f, 3.0f};
      ops::grads_check_finite(ctx, 3, grad.data(), &s.found_inf);
      EXPECT_EQ(s.found_inf, st.overflow ? 1 : 0) << "step " << k;
      ops::loss_scale_update(ctx, cfg, &s.scale, &s.inv, &s.tracker, &s.found_inf, &s.skipped);
      EXPECT_EQ(s.scale, st.scale) << "step " << k;
      EXPECT_EQ(s.inv, 1.0f / st.scale) << "step " << k;
      EXPECT_EQ(s.tracker, st.tracker) << "step " << k;
      EXPECT_EQ(s.skipped, st.skipped) << "step " << k;
      EXPECT_EQ(s.found_inf, 0) << "cleared for the next step";
      ++k;
    }
  }
}

TEST(OptimCpu, LossScaleNeverGrowsToInfinityAndRoundsItsInverseFromDouble) {
  Context ctx(Backend::Cpu);
  ScaleState s{2e38f, 0, 0, 0, 0};
  const ops::LossScaleConfig cfg{1.0f, 2.0f, 0.5f, 1};
  ops::loss_scale_update(ctx, cfg, &s.scale, &s.inv, &s.tracker, &s.found_inf, &s.skipped);
  EXPECT_EQ(s.scale, 2e38f) << "GradScaler keeps the scale when growing it would overflow";
  EXPECT_EQ(s.tracker, 0);
  // inv_scale = float(1 / double(scale)), as GradScaler.unscale_
  ScaleState t{3.0f, 0, 0, 1, 0};
  ops::loss_scale_update(ctx, cfg, &t.scale, &t.inv, &t.tracker, &t.found_inf, &t.skipped);
  EXPECT_EQ(t.scale, 1.5f);
  EXPECT_EQ(t.inv, static_cast<float>(1.0 / 1.5));
}

// An overflowing step changes nothing but the loop's counter; AdamW's bias
// correction then counts the updates that ran (t = step − skipped + 1).
TEST(OptimCpu, SkippedStepsLeaveEverythingAndAdamWCountsOnlyTheUpdatesThatRan) {
  for (Backend b : kCpuBackends) {
    Context ctx(b);
    const std::int64_t n = 1000;
    std::vector<float> p = normals(n, 20), g = normals(n, 21), m = normals(n, 22), v = normals(n, 23);
    for (auto& x : v) x = x * x;
    std::vector<std::uint16_t> copy(static_cast<size_t>(n), 0x1234);
    const auto p0 = p, m0 = m, v0 = v;
    const float inv = 0.5f;
    const std::int32_t inf = 1, no_inf = 0;
    std::int32_t step = 7, skipped = 2;
    ops::adamw_update(ctx, {n}, p.data(), g.data(), m.data(), v.data(), {}, &step, &step, {copy.data(), DType::BF16},
                      {&inv, &inf, &skipped});
    EXPECT_EQ(step, 8) << "the loop's counter advances over a skipped step";
    EXPECT_EQ(p, p0);
    EXPECT_EQ(m, m0);
    EXPECT_EQ(v, v0);
    EXPECT_EQ(copy, std::vector<std::uint16_t>(static_cast<size_t>(n), 0x1234));
    // step 8 with 2 skipped is the 7th update: the same as step 6 with none.
    std::vector<float> p2 = p, m2 = m, v2 = v;
    const std::int32_t six = 6;
    ops::adamw_update(ctx, {n}, p.data(), g.data(), m.data(), v.data(), {}, &step, nullptr, {},
                      {&inv, &no_inf, &skipped});
    ops::adamw_update(ctx, {n}, p2.data(), g.data(), m2.data(), v2.data(), {}, &six, nullptr, {}, {&inv, &no_inf});
    EXPECT_EQ(p, p2);
    EXPECT_EQ(m, m2);
    std::vector<float> q = p, buf = normals(n, 24);
    const auto q0 = q, buf0 = buf;
    ops::sgd_update(ctx, {n, true}, q.data(), g.data(), buf.data(), {}, &step, {}, {&inv, &inf});
    EXPECT_EQ(q, q0);
    EXPECT_EQ(buf, buf0);
    EXPECT_EQ(step, 9);
  }
}

TEST(OptimCpu, FiniteCheckFindsOneBadValueAnywhereAndNeverClearsTheFlag) {
  Context ctx(Backend::Cpu);
  const std::int64_t n = 1 << 20;  // many threads' chunks
  std::vector<float> g = normals(n, 30);
  g[5] = FLT_MAX;
  g[6] = -FLT_MAX;
  g[7] = std::numeric_limits<float>::denorm_min();
  std::int32_t found = 0;
  ops::grads_check_finite(ctx, n, g.data(), &found);
  EXPECT_EQ(found, 0);
  Rng r(31);
  for (float bad : {INFINITY, -INFINITY, NAN}) {
    const auto at = static_cast<size_t>(r.below(static_cast<std::uint64_t>(n)));
    g[at] = bad;
    for (Backend b : kCpuBackends) {
      Context c2(b);
      found = 0;
      ops::grads_check_finite(c2, n, g.data(), &found);
      EXPECT_EQ(found, 1) << bad << " at " << at << " on " << to_string(b);
    }
    g[at] = 1.0f;
  }
  found = 1;
  ops::grads_check_finite(ctx, n, g.data(), &found);
  EXPECT_EQ(found, 1);
}

// ---- casts ----------------------------------------------------------------------------------------

// Every bf16 and fp16 bit pattern widened, and narrowed back and across; fp32
// patterns sampled over the whole range (every exponent, NaNs, ties).
TEST(OptimCpu, CastsMatchHalfHppBitForBit) {
  const std::int64_t n16 = 65536;
  std::vector<std::uint16_t> all(n16);
  for (std::int64_t i = 0; i < n16; ++i) all[static_cast<size_t>(i)] = static_cast<std::uint16_t>(i);
  std::vector<float> f32s;
  for (std::uint64_t u = 0; u < (std::uint64_t{1} << 32); u += 4099)
    f32s.push_back(bits_float(static_cast<std::uint32_t>(u)));
  for (std::uint32_t u : {0x7f800001u, 0xffc00000u, 0x7fffffffu, 0x477fefffu, 0x477ff000u, 0x38800000u, 0x387fffffu,
                          0x33000000u, 0x33000001u, 0x3f808000u, 0x3f818000u})
    f32s.push_back(bits_float(u));
  const auto nf = static_cast<std::int64_t>(f32s.size());
  for (Backend b : kCpuBackends) {
    Context ctx(b);
    for (DType t : {DType::BF16, DType::F16}) {
      auto widen = [t](std::uint16_t h) { return t == DType::BF16 ? float_from_bf16(h) : float_from_f16(h); };
      std::vector<float> wide(n16);
      ops::cast(ctx, {n16, t, DType::F32}, wide.data(), all.data());
      for (std::int64_t i = 0; i < n16; ++i)
        ASSERT_TRUE(same_bits(wide[static_cast<size_t>(i)], widen(static_cast<std::uint16_t>(i))))
            << to_string(b) << " " << to_string(t) << " -> f32 of 0x" << std::hex << i;
      std::vector<std::uint16_t> narrow(static_cast<size_t>(nf));
      ops::cast(ctx, {nf, DType::F32, t}, narrow.data(), f32s.data());
      for (std::int64_t i = 0; i < nf; ++i)
        ASSERT_EQ(narrow[static_cast<size_t>(i)], round16(t, f32s[static_cast<size_t>(i)]))
            << to_string(b) << " f32 0x" << std::hex << float_bits(f32s[static_cast<size_t>(i)]) << " -> "
            << to_string(t);
      const DType other = t == DType::BF16 ? DType::F16 : DType::BF16;
      std::vector<std::uint16_t> across(n16), same(n16);
      ops::cast(ctx, {n16, t, other}, across.data(), all.data());
      ops::cast(ctx, {n16, t, t}, same.data(), all.data());
      EXPECT_EQ(same, all);
      for (std::int64_t i = 0; i < n16; ++i)
        ASSERT_EQ(across[static_cast<size_t>(i)], round16(other, widen(static_cast<std::uint16_t>(i))))
            << to_string(b) << " " << to_string(t) << " 0x" << std::hex << i << " -> " << to_string(other);
    }
  }
}

// ---- what is refused --------------------------------------------------------------------------------

TEST(OptimCpu, UnsupportedCombinationsAndBadSettingsAreRefused) {
  Context ctx(Backend::Cpu);
  float p = 1, g = 1, b = 0, m = 0, v = 0;
  std::int32_t i = 0;
  auto kind_of = [](auto&& f) {
    try {
      f();
    } catch (const Error& e) {
      EXPECT_FALSE(e.hint().empty()) << e.what();
      return e.kind();
    }
    return ErrorKind::Internal;  // nothing thrown
  };
  EXPECT_EQ(kind_of([&] {
              ops::sgd_update(ctx, {1, true}, &p, &g, &b, {0.1f, 0.0f, 0.0f, true});
            }),
            ErrorKind::Unsupported);
  EXPECT_EQ(kind_of([&] {
              ops::sgd_update(ctx, {1, false}, &p, &g, nullptr, {0.1f, 0.9f, 0.0f, true});
            }),
            ErrorKind::Unsupported);
  EXPECT_EQ(kind_of([&] {
              ops::sgd_update(ctx, {1, false}, &p, &g, nullptr, {}, nullptr, {&i, DType::I32});
            }),
            ErrorKind::Unsupported);
  EXPECT_EQ(kind_of([&] { ops::cast(ctx, {1, DType::F32, DType::I32}, &i, &p); }), ErrorKind::Unsupported);
  EXPECT_EQ(kind_of([&] { ops::cast(ctx, {1, DType::U8, DType::F32}, &p, &i); }), ErrorKind::Unsupported);
  ops::AdamWConfig bad;
  bad.beta2 = 1.0f;
  EXPECT_EQ(kind_of([&] { ops::adamw_update(ctx, {1}, &p, &g, &m, &v, bad, nullptr); }), ErrorKind::Usage);
  bad = {};
  bad.eps = -1;
  EXPECT_EQ(kind_of([&] { ops::adamw_update(ctx, {1}, &p, &g, &m, &v, bad, nullptr); }), ErrorKind::Usage);
  float s = 1, inv = 1;
  std::int32_t t = 0, f = 0, k = 0;
  EXPECT_EQ(kind_of([&] {
              ops::loss_scale_update(ctx, {65536.0f, 1.0f, 0.5f, 2000}, &s, &inv, &t, &f, &k);
            }),
            ErrorKind::Usage);
  EXPECT_EQ(kind_of([&] {
              ops::loss_scale_init(ctx, {65536.0f, 2.0f, 0.5f, 0}, &s, &inv, &t, &f, &k);
            }),
            ErrorKind::Usage);
}

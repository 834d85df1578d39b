// The optimizers and mixed-precision ops on the GPU, beyond the op harness:
// the CUDA kernels against the CPU reference bit for bit (SGD; AdamW up to its
// bias corrections' rounding) on aligned and misaligned buffers, the bf16/fp16
// copy equal to the rounding of the GPU's own updated parameter, every 16-bit
// pattern cast, and a captured CUDA graph that replays an fp16 step — finite
// check, unscaled SGD/AdamW with their step counters, loss-scale update — and
// skips the step whose gradients overflowed, all decided on the device.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "roofline/cuda/memory.hpp"
#include "roofline/engine/half.hpp"
#include "roofline/engine/ops_optim.hpp"
#include "roofline/engine/rng.hpp"
#include "tests/support/gpu.hpp"

using namespace roofline;
using namespace roofline::engine;

namespace {

std::vector<float> normals(std::int64_t n, std::uint64_t seed, float scale = 1.0f) {
  Rng r(seed);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = r.normal() * scale;
  return v;
}

// A device copy of host values, `pad` elements in (a misaligned start when pad % 4 != 0).
template <class T>
struct Dev {
  Tensor t;
  std::int64_t pad = 0;
  Dev(Context& ctx, const std::vector<T>& v, std::int64_t pad_ = 0) : pad(pad_) {
    t = ctx.empty({static_cast<std::int64_t>(v.size() * sizeof(T)) + 16 + pad * static_cast<std::int64_t>(sizeof(T))},
                  DType::U8, "test buffer");
    // On the context's stream, then waited for: ordered before every op the test enqueues.
    ctx.copy_async(ptr(), t.device(), v.data(), Device::cpu(), v.size() * sizeof(T));
    ctx.synchronize();
  }
  T* ptr() const { return reinterpret_cast<T*>(t.raw()) + pad; }
  std::vector<T> get(size_t n) const {
    std::vector<T> v(n);
    copy_bytes(v.data(), Device::cpu(), ptr(), t.device(), n * sizeof(T));
    return v;
  }
};

bool same_bits(float a, float b) { return std::memcmp(&a, &b, 4) == 0; }

std::uint16_t round16(DType t, float v) { return t == DType::BF16 ? bf16_from_float(v) : f16_from_float(v); }

}  // namespace

TEST(OptimGpu, SgdMatchesTheCpuReferenceBitForBitWithItsCopy) {
  ROOFLINE_REQUIRE_GPU();
  Context gpu(Backend::Cuda), cpu(Backend::CpuRef);
  for (std::int64_t n : {1, 7, 4099, 300001})
    for (std::int64_t pad : {0, 1})
      for (int mode = 0; mode < 3; ++mode)
        for (DType t : {DType::BF16, DType::F16, DType::F32}) {
          const bool momentum = mode > 0;
          const ops::SgdConfig cfg{0.05f, momentum ? 0.9f : 0.f, 1e-3f, mode == 2};
          std::vector<float> p = normals(n, 1), g = normals(n, 2, 512.0f), buf = normals(n, 3);
          const std::vector<float> inv = {1.0f / 512};
          const std::vector<std::int32_t> no_inf = {0}, step = {5};
          Dev<float> dp(gpu, p, pad), dg(gpu, g, pad), dbuf(gpu, buf, pad), dinv(gpu, inv);
          Dev<std::int32_t> dfi(gpu, no_inf), dstep(gpu, step);
          Dev<std::uint8_t> dcopy(gpu, std::vector<std::uint8_t>(static_cast<size_t>(n) * 4, 0),
                                  pad * static_cast<std::int64_t>(dtype_size(t)));
          ops::sgd_update(gpu, {n, momentum}, dp.ptr(), dg.ptr(), dbuf.ptr(), cfg, dstep.ptr(), {dcopy.ptr(), t},
                          {dinv.ptr(), dfi.ptr()});
          ops::sgd_update(cpu, {n, momentum}, p.data(), g.data(), buf.data(), cfg, nullptr, {}, {inv.data()});
          const auto gp = dp.get(static_cast<size_t>(n)), gbuf = dbuf.get(static_cast<size_t>(n));
          const auto copy = dcopy.get(static_cast<size_t>(n) * dtype_size(t));
          for (size_t i = 0; i < p.size(); ++i) {
            ASSERT_TRUE(same_bits(gp[i], p[i])) << "n=" << n << " pad=" << pad << " mode=" << mode << " at " << i;
            if (momentum) ASSERT_TRUE(same_bits(gbuf[i], buf[i])) << "n=" << n << " at " << i;
            if (t == DType::F32) {
              ASSERT_EQ(std::memcmp(copy.data() + 4 * i, &gp[i], 4), 0) << i;
            } else {
              std::uint16_t h;
              std::memcpy(&h, copy.data() + 2 * i, 2);
              ASSERT_EQ(h, round16(t, gp[i])) << to_string(t) << " copy at " << i;
            }
          }
          EXPECT_EQ(dstep.get(1)[0], 6);
        }
}

TEST(OptimGpu, AdamWMatchesTheCpuReferenceAndItsCopyIsItsOwnRounding) {
  ROOFLINE_REQUIRE_GPU();
  Context gpu(Backend::Cuda), cpu(Backend::CpuRef);
  for (std::int64_t n : {3, 4101, 250003})
    for (std::int64_t pad : {0, 3})
      for (float beta1 : {0.9f, 0.2f})
        for (DType t : {DType::BF16, DType::F16}) {
          ops::AdamWConfig cfg;
          cfg.beta1 = beta1;
          std::vector<float> p = normals(n, 4), g = normals(n, 5), m = normals(n, 6), v = normals(n, 7);
          for (auto& x : v) x = x * x;
          const std::vector<std::int32_t> step = {9}, skipped = {4};
          Dev<float> dp(gpu, p, pad), dg(gpu, g, pad), dm(gpu, m, pad), dv(gpu, v, pad);
          Dev<std::int32_t> dstep(gpu, step), dskipped(gpu, skipped);
          Dev<std::uint16_t> dcopy(gpu, std::vector<std::uint16_t>(static_cast<size_t>(n), 0), pad);
          // The step counter advances itself: the launcher must do it after every block read it.
          ops::adamw_update(gpu, {n}, dp.ptr(), dg.ptr(), dm.ptr(), dv.ptr(), cfg, dstep.ptr(), dstep.ptr(),
                            {dcopy.ptr(), t}, {nullptr, nullptr, dskipped.ptr()});
          const std::int32_t t_cpu = 5;  // 9 − 4 skipped → the 6th update, as step 5 with none
          ops::adamw_update(cpu, {n}, p.data(), g.data(), m.data(), v.data(), cfg, &t_cpu);
          const auto gp = dp.get(static_cast<size_t>(n)), gm = dm.get(static_cast<size_t>(n)),
                     gv = dv.get(static_cast<size_t>(n));
          const auto copy = dcopy.get(static_cast<size_t>(n));
          double num = 0, den = 0;
          for (size_t i = 0; i < p.size(); ++i) {
            num += (gp[i] - p[i]) * double(gp[i] - p[i]);
            den += double(p[i]) * p[i];
            ASSERT_TRUE(same_bits(gm[i], m[i])) << "m at " << i;  // no bias correction in m and v
            ASSERT_TRUE(same_bits(gv[i], v[i])) << "v at " << i;
            ASSERT_EQ(copy[i], round16(t, gp[i])) << to_string(t) << " copy at " << i;
          }
          EXPECT_LE(std::sqrt(num / den), 1e-7) << "n=" << n;
          EXPECT_EQ(dstep.get(1)[0], 10);
        }
}

TEST(OptimGpu, CastsMatchHalfHppBitForBit) {
  ROOFLINE_REQUIRE_GPU();
  Context gpu(Backend::Cuda);
  const std::int64_t n16 = 65536;
  std::vector<std::uint16_t> all(n16);
  for (std::int64_t i = 0; i < n16; ++i) all[static_cast<size_t>(i)] = static_cast<std::uint16_t>(i);
  std::vector<float> f32s;
  for (std::uint64_t u = 0; u < (std::uint64_t{1} << 32); u += 4099)
    f32s.push_back(bits_float(static_cast<std::uint32_t>(u)));
  const auto nf = static_cast<std::int64_t>(f32s.size());
  for (std::int64_t pad : {0, 1})
    for (DType t : {DType::BF16, DType::F16}) {
      auto widen = [t](std::uint16_t h) { return t == DType::BF16 ? float_from_bf16(h) : float_from_f16(h); };
      auto is_nan16 = [t](std::uint16_t h) {
        return t == DType::BF16 ? (h & 0x7fffu) > 0x7f80u : (h & 0x7fffu) > 0x7c00u;
      };
      Dev<std::uint16_t> din(gpu, all, pad), dout16(gpu, std::vector<std::uint16_t>(n16), pad);
      Dev<float> dwide(gpu, std::vector<float>(n16), pad), df(gpu, f32s, pad);
      ops::cast(gpu, {n16, t, DType::F32}, dwide.ptr(), din.ptr());
      const auto wide = dwide.get(n16);
      for (std::int64_t i = 0; i < n16; ++i) {
        const auto h = static_cast<std::uint16_t>(i);
        if (is_nan16(h))
          ASSERT_TRUE(std::isnan(wide[static_cast<size_t>(i)])) << std::hex << i;
        else
          ASSERT_TRUE(same_bits(wide[static_cast<size_t>(i)], widen(h))) << to_string(t) << " 0x" << std::hex << i;
      }
      Dev<std::uint16_t> dnarrow(gpu, std::vector<std::uint16_t>(static_cast<size_t>(nf)), pad);
      ops::cast(gpu, {nf, DType::F32, t}, dnarrow.ptr(), df.ptr());
      const auto narrow = dnarrow.get(static_cast<size_t>(nf));
      for (std::int64_t i = 0; i < nf; ++i) {
        const float f = f32s[static_cast<size_t>(i)];
        if (std::isnan(f))
          ASSERT_TRUE(is_nan16(narrow[static_cast<size_t>(i)])) << "NaN stays NaN";
        else
          ASSERT_EQ(narrow[static_cast<size_t>(i)], round16(t, f)) << "0x" << std::hex << float_bits(f);
      }
      const DType other = t == DType::BF16 ? DType::F16 : DType::BF16;
      ops::cast(gpu, {n16, t, other}, dout16.ptr(), din.ptr());
      const auto across = dout16.get(n16);
      for (std::int64_t i = 0; i < n16; ++i) {
        const auto h = static_cast<std::uint16_t>(i);
        if (!is_nan16(h)) ASSERT_EQ(across[static_cast<size_t>(i)], round16(other, widen(h))) << std::hex << i;
      }
    }
}

TEST(OptimGpu, FiniteCheckFindsOneBadValueAnywhere) {
  ROOFLINE_REQUIRE_GPU();
  Context gpu(Backend::Cuda);
  const std::int64_t n = 3000001;
  Rng r(40);
  for (std::int64_t pad : {0, 2})
    for (float bad : {INFINITY, -INFINITY, NAN, 0.0f}) {
      std::vector<float> g = normals(n, 41);
      const auto at = bad == 0.0f ? 0 : static_cast<size_t>(r.below(static_cast<std::uint64_t>(n)));
      g[at] = bad;
      Dev<float> dg(gpu, g, pad);
      Dev<std::int32_t> dfi(gpu, std::vector<std::int32_t>{0});
      ops::grads_check_finite(gpu, n, dg.ptr(), dfi.ptr());
      EXPECT_EQ(dfi.get(1)[0], bad == 0.0f ? 0 : 1) << bad << " at " << at << " pad " << pad;
      g[at] = NAN;
      g[static_cast<size_t>(n - 1)] = NAN;  // the tail after the vector loop
      Dev<float> dtail(gpu, std::vector<float>(g.end() - 3, g.end()), pad);
      ops::grads_check_finite(gpu, 3, dtail.ptr(), dfi.ptr());
      EXPECT_EQ(dfi.get(1)[0], 1);
    }
}

// One fp16 training step's optimizer part, captured once and replayed: check
// the gradients, update with unscaled gradients (SGD on one buffer, AdamW on
// another, each writing its fp16 copy), update the loss scale. The third
// replay's gradients overflow: nothing changes but the counters and the
// scale, as the CPU backend computes the same sequence.
TEST(OptimGpu, ACapturedStepReplaysAndSkipsOnOverflowOnTheDevice) {
  ROOFLINE_REQUIRE_GPU();
  const std::int64_t n = 10001;
  const ops::LossScaleConfig lcfg{1024.0f, 2.0f, 0.5f, 2};
  const ops::SgdConfig scfg{0.05f, 0.9f, 1e-4f, true};
  const ops::AdamWConfig acfg;
  struct State {
    std::vector<float> p, buf, q, m, v;
    float scale = 0, inv = 0;
    std::int32_t tracker = 0, found_inf = 0, skipped = 0, loop_step = 0;
    std::vector<std::uint16_t> pcopy, qcopy;
  };
  auto grads_of = [&](int replay) {
    std::vector<float> g = normals(n, 100 + static_cast<std::uint64_t>(replay), 1024.0f);
    if (replay == 2) g[1234] = INFINITY;
    return g;
  };
  State cpu_state;
  cpu_state.p = normals(n, 50);
  cpu_state.buf = std::vector<float>(static_cast<size_t>(n), 0.0f);
  cpu_state.q = normals(n, 51);
  cpu_state.m = std::vector<float>(static_cast<size_t>(n), 0.0f);
  cpu_state.v = cpu_state.m;
  cpu_state.pcopy = std::vector<std::uint16_t>(static_cast<size_t>(n), 0);
  cpu_state.qcopy = cpu_state.pcopy;
  const State start = cpu_state;
  const int replays = 5;
  {  // the CPU backend, step by step
    Context cpu(Backend::Cpu);
    State& s = cpu_state;
    ops::loss_scale_init(cpu, lcfg, &s.scale, &s.inv, &s.tracker, &s.found_inf, &s.skipped);
    for (int k = 0; k < replays; ++k) {
      const std::vector<float> g = grads_of(k);
      ops::grads_check_finite(cpu, n, g.data(), &s.found_inf);
      const ops::GradScale gs{&s.inv, &s.found_inf, &s.skipped};
      ops::sgd_update(cpu, {n, true}, s.p.data(), g.data(), s.buf.data(), scfg, nullptr, {s.pcopy.data(), DType::F16},
                      gs);
      ops::adamw_update(cpu, {n}, s.q.data(), g.data(), s.m.data(), s.v.data(), acfg, &s.loop_step, &s.loop_step,
                        {s.qcopy.data(), DType::F16}, gs);
      ops::loss_scale_update(cpu, lcfg, &s.scale, &s.inv, &s.tracker, &s.found_inf, &s.skipped);
    }
    EXPECT_EQ(s.skipped, 1);
    EXPECT_EQ(s.loop_step, replays);
  }
  Context gpu(Backend::Cuda);
  Dev<float> p(gpu, start.p), buf(gpu, start.buf), q(gpu, start.q), m(gpu, start.m), v(gpu, start.v),
      g(gpu, std::vector<float>(static_cast<size_t>(n))), scale(gpu, std::vector<float>{0}),
      inv(gpu, std::vector<float>{0});
  Dev<std::int32_t> tracker(gpu, std::vector<std::int32_t>{9}), found_inf(gpu, std::vector<std::int32_t>{9}),
      skipped(gpu, std::vector<std::int32_t>{9}), loop_step(gpu, std::vector<std::int32_t>{0});
  Dev<std::uint16_t> pcopy(gpu, start.pcopy), qcopy(gpu, start.qcopy);
  ops::loss_scale_init(gpu, lcfg, scale.ptr(), inv.ptr(), tracker.ptr(), found_inf.ptr(), skipped.ptr());
  auto stream = static_cast<cudaStream_t>(gpu.stream());
  cuda::Graph graph;
  graph.begin_capture(stream);
  ops::grads_check_finite(gpu, n, g.ptr(), found_inf.ptr());
  const ops::GradScale gs{inv.ptr(), found_inf.ptr(), skipped.ptr()};
  ops::sgd_update(gpu, {n, true}, p.ptr(), g.ptr(), buf.ptr(), scfg, nullptr, {pcopy.ptr(), DType::F16}, gs);
  ops::adamw_update(gpu, {n}, q.ptr(), g.ptr(), m.ptr(), v.ptr(), acfg, loop_step.ptr(), loop_step.ptr(),
                    {qcopy.ptr(), DType::F16}, gs);
  ops::loss_scale_update(gpu, lcfg, scale.ptr(), inv.ptr(), tracker.ptr(), found_inf.ptr(), skipped.ptr());
  graph.end_capture(stream);
  for (int k = 0; k < replays; ++k) {
    const std::vector<float> host_g = grads_of(k);
    gpu.synchronize();  // the previous replay has read g
    gpu.copy_async(g.ptr(), Device::cuda(0), host_g.data(), Device::cpu(), host_g.size() * 4);
    graph.launch(stream);
  }
  gpu.synchronize();
  const State& s = cpu_state;
  EXPECT_EQ(scale.get(1)[0], s.scale);
  EXPECT_EQ(inv.get(1)[0], s.inv);
  EXPECT_EQ(tracker.get(1)[0], s.tracker);
  EXPECT_EQ(skipped.get(1)[0], 1);
  EXPECT_EQ(found_inf.get(1)[0], 0);
  EXPECT_EQ(loop_step.get(1)[0], replays);
  const auto gp = p.get(static_cast<size_t>(n)), gq = q.get(static_cast<size_t>(n));
  const auto gpc = pcopy.get(static_cast<size_t>(n)), gqc = qcopy.get(static_cast<size_t>(n));
  for (size_t i = 0; i < gp.size(); ++i) {
    ASSERT_TRUE(same_bits(gp[i], s.p[i])) << "SGD parameter " << i;  // SGD: the same bits
    ASSERT_NEAR(gq[i], s.q[i], 1e-6 * (1 + std::abs(s.q[i]))) << "AdamW parameter " << i;
    ASSERT_EQ(gpc[i], f16_from_float(gp[i]));
    ASSERT_EQ(gqc[i], f16_from_float(gq[i]));
  }
}

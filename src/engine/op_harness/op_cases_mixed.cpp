// The harness's mixed-precision cases: casts between F32, BF16 and F16, the
// finiteness check of the gradients, and dynamic loss scaling.
//
// The harness has no 16-bit buffers, and a cast must be right to the bit, not
// within a relative error: every value of a cast case travels as its bit
// pattern in int32 buffers (fp32 one to a word, bf16/fp16 two to a word, the
// element 2k in the low half), which the harness compares exactly, against
// roofline/engine/half.hpp's conversions. NaN inputs are left to
// tests/cpu/test_optim.cpp and tests/gpu/test_optim_gpu.cpp: the GPU's
// conversions keep NaN a NaN, but not its payload bits.
#include <fmt/format.h>

#include <cfloat>
#include <cmath>
#include <limits>

#include "roofline/engine/half.hpp"
#include "roofline/engine/ops_optim.hpp"
#include "src/engine/cpu/ref_optim.hpp"
#include "src/engine/op_harness/case_util.hpp"
#include "src/engine/op_harness/op_case.hpp"

namespace roofline::engine::harness {

using std::int64_t;
using std::uint16_t;
using std::uint32_t;
using namespace case_util;

namespace {

std::int32_t* I32(const DevPtrs& p, int i) { return static_cast<std::int32_t*>(p[static_cast<size_t>(i)]); }

// Element i of 16-bit values packed two to an int32 word.
uint16_t get16(const HostBuf& b, int64_t i) {
  const auto w = static_cast<uint32_t>(b.i[static_cast<size_t>(i / 2)]);
  return static_cast<uint16_t>(w >> (16 * (i % 2)));
}
void set16(HostBuf& b, int64_t i, uint16_t v) {
  auto& w = b.i[static_cast<size_t>(i / 2)];
  const int sh = 16 * static_cast<int>(i % 2);
  const uint32_t word = (static_cast<uint32_t>(w) & ~(0xffffu << sh)) | (static_cast<uint32_t>(v) << sh);
  w = static_cast<std::int32_t>(word);
}

std::int32_t as_i32(uint32_t u) { return static_cast<std::int32_t>(u); }

// fp32 values for a cast: every range the narrowing must get right (overflow,
// the fp16 subnormals, the ties of both formats) and random bit patterns; no NaN.
uint32_t random_f32_bits(Rng& r) {
  static const float special[] = {0.0f,     -0.0f,    INFINITY, -INFINITY,    FLT_MAX,       -FLT_MAX,
                                  FLT_MIN,  1e-45f,   65504.0f, 65519.996f,   65520.0f,      -65536.0f,
                                  5.96e-8f, 2.98e-8f, 8.9e-8f,  6.103515e-5f, 6.1035156e-5f, 1.0f};
  switch (r.below(6)) {
    case 0:
      return float_bits(special[r.below(sizeof(special) / sizeof(special[0]))]);
    case 1: {  // a bf16 tie: the dropped half exactly 0x8000
      const uint32_t hi = static_cast<uint32_t>(r.next()) & 0x7f7f0000u;
      return hi | 0x8000u | (r.below(2) ? 0x80000000u : 0u);
    }
    case 2: {  // an fp16 tie in its normal range: the 13 dropped bits exactly 0x1000
      const uint32_t e = 113 + static_cast<uint32_t>(r.below(30));  // 2^-14 .. 2^15
      const uint32_t m = (static_cast<uint32_t>(r.next()) & 0x7fe000u) | 0x1000u;
      return (e << 23) | m | (r.below(2) ? 0x80000000u : 0u);
    }
    case 3: {  // fp16 subnormal range, ties and not
      const float v = std::ldexp(static_cast<float>(r.below(2048)) * 0.5f, -24);
      return float_bits(r.below(2) ? v : v * r.uniform(0.9f, 1.1f));
    }
    case 4:
      return float_bits(r.normal() * std::ldexp(1.0f, static_cast<int>(r.below(61)) - 30));
    default: {
      uint32_t u = static_cast<uint32_t>(r.next());
      if ((u & 0x7f800000u) == 0x7f800000u) u &= 0xff800000u;  // NaN -> inf
      return u;
    }
  }
}
uint16_t random_bf16_bits(Rng& r) {
  uint32_t u = static_cast<uint32_t>(r.next()) & 0xffffu;
  if ((u & 0x7f80u) == 0x7f80u) u &= 0xff80u;  // NaN -> inf
  return static_cast<uint16_t>(u);
}
uint16_t random_f16_bits(Rng& r) {
  uint32_t u = static_cast<uint32_t>(r.next()) & 0xffffu;
  if ((u & 0x7c00u) == 0x7c00u) u &= 0xfc00u;  // NaN -> inf
  return static_cast<uint16_t>(u);
}

}  // namespace

// Every pair of F32, BF16 and F16 (9 passes) on the same n values.
OpCase cast_case(int64_t n, Rng& /*rng*/) {
  enum { X32, XB, XH, O32, OB, OH };
  const int64_t words = (n + 1) / 2;
  // An odd count leaves the upper half of the last word alone: those outputs
  // start from random values, which the reference keeps.
  const Role half_role = n % 2 == 0 ? Role::Output : Role::InOut;
  OpCase c;
  c.op = "cast";
  c.shape = fmt::format("n={}", n);
  c.bufs = {{"f32 in (bits)", DType::I32, n},
            {"bf16 in (bits)", DType::I32, words},
            {"f16 in (bits)", DType::I32, words},
            {"f32 out (bits)", DType::I32, n, Role::Output},
            {"bf16 out (bits)", DType::I32, words, half_role},
            {"f16 out (bits)", DType::I32, words, half_role}};
  c.fill = [=](Rng& r, HostBufs& h) {
    h[X32].i.resize(static_cast<size_t>(n));
    for (auto& v : h[X32].i) v = as_i32(random_f32_bits(r));
    for (int b : {XB, XH, OB, OH}) {
      h[b].i.resize(static_cast<size_t>(words));
      for (auto& v : h[b].i) v = as_i32(static_cast<uint32_t>(r.next()));
    }
    for (int64_t i = 0; i < n; ++i) {
      set16(h[XB], i, random_bf16_bits(r));
      set16(h[XH], i, random_f16_bits(r));
    }
  };
  const DType types[] = {DType::F32, DType::BF16, DType::F16};
  auto in_buf = [](DType t) { return t == DType::F32 ? X32 : t == DType::BF16 ? XB : XH; };
  auto out_buf = [](DType t) { return t == DType::F32 ? O32 : t == DType::BF16 ? OB : OH; };
  for (DType from : types)
    for (DType to : types) {
      const ops::CastShape s{n, from, to};
      const int ib = in_buf(from), ob = out_buf(to);
      c.passes.push_back({fmt::format("{}->{}", to_string(from), to_string(to)),
                          s.cost(),
                          {ib},
                          {ob},
                          [=](Context& ctx, const DevPtrs& p) {
                            ops::cast(ctx, s, p[static_cast<size_t>(ob)], p[static_cast<size_t>(ib)]);
                          },
                          [=](HostBufs& h) {
                            for (int64_t i = 0; i < n; ++i) {
                              const auto k = static_cast<size_t>(i);
                              float v = 0;
                              uint32_t same = 0;  // the input's own bits, for from == to
                              switch (from) {
                                case DType::BF16:
                                  same = get16(h[ib], i);
                                  v = float_from_bf16(static_cast<uint16_t>(same));
                                  break;
                                case DType::F16:
                                  same = get16(h[ib], i);
                                  v = float_from_f16(static_cast<uint16_t>(same));
                                  break;
                                default:
                                  same = static_cast<uint32_t>(h[ib].i[k]);
                                  v = bits_float(same);
                              }
                              switch (to) {
                                case DType::BF16:
                                  set16(h[ob], i, from == to ? static_cast<uint16_t>(same) : bf16_from_float(v));
                                  break;
                                case DType::F16:
                                  set16(h[ob], i, from == to ? static_cast<uint16_t>(same) : f16_from_float(v));
                                  break;
                                default:
                                  h[ob].i[k] = as_i32(from == to ? same : float_bits(v));
                              }
                            }
                          }});
    }
  return c;
}

// Gradients with no, one +inf, one −inf or one NaN among them (at a random
// position, and a NaN at the last element, the vector loops' tail), into a
// flag that starts at 0, and once into one already set (never cleared).
OpCase finite_case(int64_t n, Rng& rng) {
  enum { OK, PINF, NINF, NAN_AT, NAN_LAST, FI0, FI1 };
  const auto at = static_cast<size_t>(rng.below(static_cast<std::uint64_t>(n)));
  OpCase c;
  c.op = "grads_check_finite";
  c.shape = fmt::format("n={} bad at {}", n, at);
  c.bufs = {{"grad", DType::F32, n},
            {"grad +inf", DType::F32, n},
            {"grad -inf", DType::F32, n},
            {"grad NaN", DType::F32, n},
            {"grad NaN last", DType::F32, n},
            {"found_inf=0", DType::I32, 1, Role::InOut},
            {"found_inf=1", DType::I32, 1, Role::InOut}};
  c.fill = [=](Rng& r, HostBufs& h) {
    normal(r, h[OK], n);
    for (auto& v : h[OK].f) {  // the largest and smallest finite values are finite
      const auto k = r.below(50);
      if (k == 0) v = (r.below(2) ? 1 : -1) * static_cast<double>(FLT_MAX);
      if (k == 1) v = static_cast<double>(std::numeric_limits<float>::denorm_min());
    }
    for (int b : {PINF, NINF, NAN_AT, NAN_LAST}) h[b].f = h[OK].f;
    h[PINF].f[at] = std::numeric_limits<double>::infinity();
    h[NINF].f[at] = -std::numeric_limits<double>::infinity();
    h[NAN_AT].f[at] = std::numeric_limits<double>::quiet_NaN();
    h[NAN_LAST].f[static_cast<size_t>(n - 1)] = std::numeric_limits<double>::quiet_NaN();
    h[FI0].i = {0};
    h[FI1].i = {1};
  };
  const OpCost cost{static_cast<double>(n), 4.0 * static_cast<double>(n) + 4};
  auto pass = [&](const char* name, int g, int fi, std::int32_t expect) {
    c.passes.push_back({name,
                        cost,
                        {g},
                        {fi},
                        [=](Context& ctx, const DevPtrs& p) { ops::grads_check_finite(ctx, n, F(p, g), I32(p, fi)); },
                        [=](HostBufs& h) { h[fi].i[0] = expect; }});
  };
  pass("finite", OK, FI0, 0);
  pass("finite, flag already set", OK, FI1, 1);
  pass("+inf", PINF, FI0, 1);
  pass("-inf", NINF, FI0, 1);
  pass("NaN", NAN_AT, FI0, 1);
  pass("NaN last", NAN_LAST, FI0, 1);
  return c;
}

// The loss gradient times a scale read from the context's memory: a power of
// two (GradScaler's scales: exact) or any value, kept in fp32's range.
OpCase scale_loss_grad_case(int64_t n, Rng& rng) {
  enum { G, SCALE };
  const float scale = rng.below(2) ? std::ldexp(1.0f, static_cast<int>(rng.below(31))) : rng.uniform(1e-3f, 1e5f);
  OpCase c;
  c.op = "scale_loss_grad";
  c.shape = fmt::format("n={} scale={}", n, scale);
  c.bufs = {{"grad", DType::F32, n, Role::InOut}, {"scale", DType::F32, 1}};
  c.fill = [=](Rng& r, HostBufs& h) {
    normal(r, h[G], n);
    h[SCALE].f = {scale};
  };
  c.passes.push_back({"scale",
                      {static_cast<double>(n), 8.0 * static_cast<double>(n) + 4},
                      {SCALE},
                      {G},
                      [=](Context& ctx, const DevPtrs& p) { ops::scale_loss_grad(ctx, n, F(p, G), F(p, SCALE)); },
                      [=](HostBufs& h) {
                        for (auto& v : h[G].f) v *= h[SCALE].f[0];
                      }});
  return c;
}

// A run of GradScaler updates: the overflow flag of each step comes from
// `flags` (copied into found_inf on the context before the update), and the
// scale, inv_scale and tracker after each step are kept as bits, compared
// exactly; then the state at the end. Scales from torch's default, from any
// value (inv_scale's rounding) and from near FLT_MAX (growth would overflow).
OpCase loss_scale_case(Rng& rng) {
  enum { SCALE, INV, TRACKER, FI, SKIPPED, FLAGS, HIST };
  ops::LossScaleConfig cfg;
  cfg.interval = static_cast<std::int32_t>(1 + rng.below(5));
  cfg.growth = rng.below(2) ? 2.0 : 1.1 + 2.9 * rng.uniform_double();
  cfg.backoff = rng.below(2) ? 0.5 : 0.1 + 0.8 * rng.uniform_double();
  const auto k = rng.below(3);
  cfg.init = k == 0 ? 65536.0 : k == 1 ? 1.0 + 1e5 * rng.uniform_double() : 3e38;
  const int64_t steps = 12 + static_cast<int64_t>(rng.below(20));
  OpCase c;
  c.op = "loss_scale_update";
  c.shape = fmt::format("init={} growth={} backoff={} interval={} steps={}", cfg.init, cfg.growth, cfg.backoff,
                        cfg.interval, steps);
  c.bufs = {{"scale", DType::F32, 1, Role::InOut},
            {"inv_scale", DType::F32, 1, Role::InOut},
            {"tracker", DType::I32, 1, Role::InOut},
            {"found_inf", DType::I32, 1, Role::InOut},
            {"skipped", DType::I32, 1, Role::InOut},
            {"overflow flags", DType::I32, steps},
            {"history (bits)", DType::I32, 3 * steps, Role::Output}};
  c.fill = [=](Rng& r, HostBufs& h) {
    h[SCALE].f = {static_cast<float>(cfg.init)};
    h[INV].f = {static_cast<float>(1.0 / static_cast<double>(static_cast<float>(cfg.init)))};
    h[TRACKER].i = {static_cast<std::int32_t>(r.below(static_cast<std::uint64_t>(cfg.interval)))};
    h[FI].i = {0};
    h[SKIPPED].i = {static_cast<std::int32_t>(r.below(5))};
    h[FLAGS].i.resize(static_cast<size_t>(steps));
    for (auto& f : h[FLAGS].i) f = r.below(10) < 3 ? static_cast<std::int32_t>(1 + r.below(2)) : 0;
  };
  const OpCost cost{4.0 * static_cast<double>(steps), 20.0 * static_cast<double>(steps)};
  c.passes.push_back({"sequence",
                      cost,
                      {FLAGS},
                      {SCALE, INV, TRACKER, FI, SKIPPED, HIST},
                      [=](Context& ctx, const DevPtrs& p) {
                        const Device d = ctx.device();
                        for (int64_t s = 0; s < steps; ++s) {
                          ctx.copy_async(I32(p, FI), d, I32(p, FLAGS) + s, d, 4);
                          ops::loss_scale_update(ctx, cfg, F(p, SCALE), F(p, INV), I32(p, TRACKER), I32(p, FI),
                                                 I32(p, SKIPPED));
                          ctx.copy_async(I32(p, HIST) + 3 * s, d, F(p, SCALE), d, 4);
                          ctx.copy_async(I32(p, HIST) + 3 * s + 1, d, F(p, INV), d, 4);
                          ctx.copy_async(I32(p, HIST) + 3 * s + 2, d, I32(p, TRACKER), d, 4);
                        }
                      },
                      [=](HostBufs& h) {
                        float scale = static_cast<float>(h[SCALE].f[0]), inv = static_cast<float>(h[INV].f[0]);
                        std::int32_t tracker = h[TRACKER].i[0], fi = 0, skipped = h[SKIPPED].i[0];
                        h[HIST].i.resize(static_cast<size_t>(3 * steps));
                        for (int64_t s = 0; s < steps; ++s) {
                          fi = h[FLAGS].i[static_cast<size_t>(s)];
                          ref::loss_scale_update(cfg, &scale, &inv, &tracker, &fi, &skipped);
                          h[HIST].i[static_cast<size_t>(3 * s)] = as_i32(float_bits(scale));
                          h[HIST].i[static_cast<size_t>(3 * s + 1)] = as_i32(float_bits(inv));
                          h[HIST].i[static_cast<size_t>(3 * s + 2)] = tracker;
                        }
                        h[SCALE].f = {scale};
                        h[INV].f = {inv};
                        h[TRACKER].i = {tracker};
                        h[FI].i = {fi};
                        h[SKIPPED].i = {skipped};
                      }});
  c.passes.push_back({"init",
                      {0, 20},
                      {},
                      {SCALE, INV, TRACKER, FI, SKIPPED},
                      [=](Context& ctx, const DevPtrs& p) {
                        ops::loss_scale_init(ctx, cfg, F(p, SCALE), F(p, INV), I32(p, TRACKER), I32(p, FI),
                                             I32(p, SKIPPED));
                      },
                      [=](HostBufs& h) {
                        float scale = 0, inv = 0;
                        std::int32_t tracker = 7, fi = 7, skipped = 7;
                        ref::loss_scale_init(cfg, &scale, &inv, &tracker, &fi, &skipped);
                        h[SCALE].f = {scale};
                        h[INV].f = {inv};
                        h[TRACKER].i = {tracker};
                        h[FI].i = {fi};
                        h[SKIPPED].i = {skipped};
                      }});
  return c;
}

}  // namespace roofline::engine::harness

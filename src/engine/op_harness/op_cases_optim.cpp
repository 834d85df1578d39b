// The harness's optimiser cases: SGD alone (plain, Nesterov, with gradient
// unscaling and a skipped step), a Linear layer's weight gradient with the SGD
// update of its parameters (one pass on the fast CPU backend), and AdamW over
// several steps against float64 (ref_optim.hpp writes torch's algorithm out).
// The 16-bit parameter copies are checked bit for bit in tests/cpu/test_optim.cpp
// and tests/gpu/test_optim_gpu.cpp (a copy must equal the rounding of the
// backend's own fp32 parameter, which a float64 reference cannot give); here
// the copy is fp32, so its plumbing is checked on every backend.
#include <fmt/format.h>

#include "roofline/core/error.hpp"
#include "roofline/engine/ops_optim.hpp"
#include "src/engine/cpu/ref_ops.hpp"
#include "src/engine/cpu/ref_optim.hpp"
#include "src/engine/op_harness/case_util.hpp"
#include "src/engine/op_harness/op_case.hpp"

namespace roofline::engine::harness {

using std::int64_t;
using namespace case_util;

OpCase sgd_case(int64_t n, const ops::SgdConfig& cfg) {
  enum { P, G, BUF };
  const ops::SgdShape s{n, cfg.momentum != 0.f};
  OpCase c;
  c.op = "sgd";
  c.shape = fmt::format("n={} lr={} momentum={} wd={}", n, cfg.lr, cfg.momentum, cfg.weight_decay);
  c.bufs = {{"param", DType::F32, n, Role::InOut}, {"grad", DType::F32, n}, {"buf", DType::F32, n, Role::InOut}};
  c.fill = [=](Rng& r, HostBufs& h) {
    normal(r, h[P], n);
    normal(r, h[G], n);
    normal(r, h[BUF], n);
  };
  c.passes.push_back(
      {"optimizer",
       s.cost(),
       {G},
       {P, BUF},
       [s, cfg](Context& ctx, const DevPtrs& p) { ops::sgd_update(ctx, s, F(p, P), F(p, G), F(p, BUF), cfg); },
       [=](HostBufs& h) { ref::sgd_update<double>(s, h[P].f.data(), h[G].f.data(), h[BUF].f.data(), cfg); }});
  return c;
}

OpCase linear_weight_sgd_case(const ops::LinearShape& s, const ops::SgdConfig& cfg) {
  enum { IN, DPRE, W, B, MW, MB, DW, DB };
  const bool momentum = cfg.momentum != 0.f;
  const int64_t nb = s.bias ? s.out : 1, nw = s.out * s.in;
  OpCase c;
  c.op = "linear_weight_sgd";
  c.shape = fmt::format("n={} in={} out={}{} lr={} momentum={} wd={}", s.n, s.in, s.out, s.bias ? "" : " nobias",
                        cfg.lr, cfg.momentum, cfg.weight_decay);
  c.bufs = {{"in", DType::F32, s.n * s.in},        {"dpre", DType::F32, s.n * s.out},
            {"w", DType::F32, nw, Role::InOut},    {"b", DType::F32, nb, Role::InOut},
            {"mw", DType::F32, nw, Role::InOut},   {"mb", DType::F32, nb, Role::InOut},
            {"dw", DType::F32, nw, Role::Output},  {"db", DType::F32, nb, Role::Output}};
  c.fill = [=](Rng& r, HostBufs& h) {
    for (int b : {IN, DPRE, W, B, MW, MB})
      normal(r, h[b], c.bufs[static_cast<size_t>(b)].count);
  };
  std::vector<int> outs = {W, DW};
  if (momentum) outs.push_back(MW);
  if (s.bias) outs.insert(outs.end(), {B, DB});
  if (s.bias && momentum) outs.push_back(MB);
  // The weight gradient's FLOPs and the update's bytes.
  OpCost cost = s.cost().weight_grad;
  const OpCost upd = ops::SgdShape{nw + (s.bias ? s.out : 0), momentum}.cost();
  cost.bytes += upd.bytes;
  cost.flops += upd.flops;
  c.passes.push_back({"weight-grad+optimizer", cost, {IN, DPRE}, outs,
                      [s, cfg, momentum](Context& ctx, const DevPtrs& p) {
                        ops::LinearSgdBuffers b;
                        b.w = F(p, W);
                        b.dw = F(p, DW);
                        b.mw = momentum ? F(p, MW) : nullptr;
                        if (s.bias) {
                          b.b = F(p, B);
                          b.db = F(p, DB);
                          b.mb = momentum ? F(p, MB) : nullptr;
                        }
                        ops::linear_backward_weight_sgd(ctx, s, b, F(p, DPRE), F(p, IN), cfg);
                      },
                      [=](HostBufs& h) {
                        ref::linear_backward_weight<double>(s, h[DW].f.data(), s.bias ? h[DB].f.data() : nullptr,
                                                            h[DPRE].f.data(), h[IN].f.data());
                        ref::sgd_update<double>({nw, momentum}, h[W].f.data(), h[DW].f.data(), h[MW].f.data(), cfg);
                        if (s.bias)
                          ref::sgd_update<double>({s.out, momentum}, h[B].f.data(), h[DB].f.data(), h[MB].f.data(),
                                                  cfg);
                      }});
  return c;
}

namespace {

std::int32_t* I32(const DevPtrs& p, int i) { return static_cast<std::int32_t*>(p[static_cast<size_t>(i)]); }
int64_t pick_n(Rng& r, int64_t lo, int64_t hi) {
  return lo + static_cast<int64_t>(r.below(static_cast<std::uint64_t>(hi - lo + 1)));
}

}  // namespace

OpCase sgd_nesterov_case(int64_t n, const ops::SgdConfig& cfg) {
  enum { P, G, BUF, STEP };
  const ops::SgdShape s{n, true};
  OpCase c;
  c.op = "sgd_nesterov";
  c.shape = fmt::format("n={} lr={} momentum={} wd={} nesterov", n, cfg.lr, cfg.momentum, cfg.weight_decay);
  c.bufs = {{"param", DType::F32, n, Role::InOut},
            {"grad", DType::F32, n},
            {"buf", DType::F32, n, Role::InOut},
            {"step", DType::I32, 1, Role::InOut}};
  c.fill = [=](Rng& r, HostBufs& h) {
    for (int b : {P, G, BUF}) normal(r, h[b], n);
    h[STEP].i = {static_cast<std::int32_t>(r.below(1000))};
  };
  c.passes.push_back({"optimizer",
                      ops::sgd_cost(s, cfg),
                      {G},
                      {P, BUF, STEP},
                      [s, cfg](Context& ctx, const DevPtrs& p) {
                        ops::sgd_update(ctx, s, F(p, P), F(p, G), F(p, BUF), cfg, I32(p, STEP));
                      },
                      [=](HostBufs& h) {
                        ref::sgd_update<double>(s, h[P].f.data(), h[G].f.data(), h[BUF].f.data(), cfg);
                        h[STEP].i[0] += 1;
                      }});
  return c;
}

// SGD on gradients of a loss scaled by 1/inv: an fp32 copy of the updated
// parameters, then the same call with found_inf set (nothing but the step
// counter changes).
OpCase sgd_scaled_case(int64_t n, const ops::SgdConfig& cfg, bool momentum, float inv) {
  enum { P, G, BUF, COPY, INV, FI0, FI1, STEP };
  const ops::SgdShape s{n, momentum};
  OpCase c;
  c.op = "sgd_scaled";
  c.shape = fmt::format("n={} lr={} momentum={} wd={}{} inv_scale={}", n, cfg.lr, momentum ? cfg.momentum : 0.f,
                        cfg.weight_decay, cfg.nesterov ? " nesterov" : "", inv);
  c.bufs = {{"param", DType::F32, n, Role::InOut}, {"grad", DType::F32, n},
            {"buf", DType::F32, n, Role::InOut},   {"copy", DType::F32, n, Role::InOut},
            {"inv_scale", DType::F32, 1},          {"found_inf=0", DType::I32, 1},
            {"found_inf=1", DType::I32, 1},        {"step", DType::I32, 1, Role::InOut}};
  c.fill = [=](Rng& r, HostBufs& h) {
    for (int b : {P, G, BUF, COPY}) normal(r, h[b], n);
    for (auto& g : h[G].f) g = rf(g / inv);  // gradients of the scaled loss
    h[INV].f = {inv};
    h[FI0].i = {0};
    h[FI1].i = {static_cast<std::int32_t>(1 + r.below(3))};  // any nonzero value skips
    h[STEP].i = {static_cast<std::int32_t>(r.below(1000))};
  };
  auto run = [s, cfg](int fi) {
    return [s, cfg, fi](Context& ctx, const DevPtrs& p) {
      const ops::ParamCopy copy{F(p, COPY), DType::F32};
      const ops::GradScale scale{F(p, INV), I32(p, fi)};
      ops::sgd_update(ctx, s, F(p, P), F(p, G), s.momentum ? F(p, BUF) : nullptr, cfg, I32(p, STEP), copy, scale);
    };
  };
  float any_copy = 0;  // the costs look at which pointers are given, not at what they hold
  const std::int32_t any_flag = 0;
  const OpCost cost = ops::sgd_cost(s, cfg, {&any_copy, DType::F32}, {&inv, &any_flag});
  std::vector<int> outs = {P, COPY, STEP};
  if (momentum) outs.push_back(BUF);
  c.passes.push_back({"optimizer", cost, {G, INV, FI0, FI1}, outs, run(FI0), [=](HostBufs& h) {
                        ref::sgd_update<double>(s, h[P].f.data(), h[G].f.data(), h[BUF].f.data(), cfg, inv);
                        h[COPY].f = h[P].f;
                        h[STEP].i[0] += 1;
                      }});
  c.passes.push_back({"optimizer (overflow: skipped)", cost, {G, INV, FI0, FI1}, outs, run(FI1), [=](HostBufs& h) {
                        h[STEP].i[0] += 1;
                      }});
  return c;
}

namespace {

// State that could come from earlier steps: m any sign, v ≥ 0 (never zero).
void adamw_fill(Rng& r, HostBufs& h, int P, int G, int M, int V, int64_t n) {
  normal(r, h[P], n);
  normal(r, h[G], n);
  normal(r, h[M], n);
  normal(r, h[V], n);
  for (auto& v : h[V].f) v = rf(0.01 * v * v + 1e-6);
}

void adamw_ref(HostBufs& h, int P, int G, int M, int V, int64_t n, const ops::AdamWConfig& cfg, int64_t t, double inv) {
  const auto sc = ref::adamw_scalars<double>(cfg, t, inv);
  ref::adamw_update<double>(n, h[P].f.data(), h[G].f.data(), h[M].f.data(), h[V].f.data(), sc);
}

std::string adamw_shape(int64_t n, const ops::AdamWConfig& cfg) {
  return fmt::format("n={} lr={} betas=({}, {}) eps={} wd={}", n, cfg.lr, cfg.beta1, cfg.beta2, cfg.eps,
                     cfg.weight_decay);
}

}  // namespace

// `steps` AdamW updates from a step counter at `first`, the counter advanced by
// the update itself (the same buffer as advance_step); with an fp32 copy when
// `copy`.
OpCase adamw_case(int64_t n, const ops::AdamWConfig& cfg, int steps, std::int32_t first, bool copy) {
  enum { P, G, M, V, COPY, STEP };
  const ops::AdamWShape s{n};
  OpCase c;
  c.op = "adamw";
  c.shape = fmt::format("{} steps {}..{}{}", adamw_shape(n, cfg), first, first + steps - 1, copy ? " copy" : "");
  c.bufs = {{"param", DType::F32, n, Role::InOut}, {"grad", DType::F32, n},
            {"m", DType::F32, n, Role::InOut},     {"v", DType::F32, n, Role::InOut},
            {"copy", DType::F32, n, Role::InOut},  {"step", DType::I32, 1, Role::InOut}};
  c.fill = [=](Rng& r, HostBufs& h) {
    adamw_fill(r, h, P, G, M, V, n);
    normal(r, h[COPY], n);
    h[STEP].i = {first};
  };
  std::vector<int> outs = {P, M, V, STEP};
  if (copy) outs.push_back(COPY);
  float any_copy = 0;
  OpCost cost = s.cost(copy ? ops::ParamCopy{&any_copy, DType::F32} : ops::ParamCopy{});
  cost.flops *= steps;
  cost.bytes *= steps;
  c.passes.push_back({fmt::format("optimizer x{}", steps),
                      cost,
                      {G},
                      outs,
                      [=](Context& ctx, const DevPtrs& p) {
                        const ops::ParamCopy pc = copy ? ops::ParamCopy{F(p, COPY), DType::F32} : ops::ParamCopy{};
                        for (int k = 0; k < steps; ++k)
                          ops::adamw_update(ctx, s, F(p, P), F(p, G), F(p, M), F(p, V), cfg, I32(p, STEP), I32(p, STEP),
                                            pc);
                      },
                      [=](HostBufs& h) {
                        for (int k = 0; k < steps; ++k) {
                          adamw_ref(h, P, G, M, V, n, cfg, int64_t{h[STEP].i[0]} + 1, 1.0);
                          h[STEP].i[0] += 1;
                        }
                        if (copy) h[COPY].f = h[P].f;
                      }});
  return c;
}

// AdamW on gradients of a loss scaled by 1/inv after `skipped` overflowing
// steps (so t = step − skipped + 1), then the same call with found_inf set.
OpCase adamw_scaled_case(int64_t n, const ops::AdamWConfig& cfg, float inv, std::int32_t step, std::int32_t skipped) {
  enum { P, G, M, V, INV, FI0, FI1, SKIPPED, STEP };
  const ops::AdamWShape s{n};
  OpCase c;
  c.op = "adamw_scaled";
  c.shape = fmt::format("{} step {} skipped {} inv_scale={}", adamw_shape(n, cfg), step, skipped, inv);
  c.bufs = {{"param", DType::F32, n, Role::InOut}, {"grad", DType::F32, n},      {"m", DType::F32, n, Role::InOut},
            {"v", DType::F32, n, Role::InOut},     {"inv_scale", DType::F32, 1}, {"found_inf=0", DType::I32, 1},
            {"found_inf=1", DType::I32, 1},        {"skipped", DType::I32, 1},   {"step", DType::I32, 1, Role::InOut}};
  c.fill = [=](Rng& r, HostBufs& h) {
    adamw_fill(r, h, P, G, M, V, n);
    for (auto& g : h[G].f) g = rf(g / inv);
    h[INV].f = {inv};
    h[FI0].i = {0};
    h[FI1].i = {1};
    h[SKIPPED].i = {skipped};
    h[STEP].i = {step};
  };
  auto run = [s, cfg](int fi) {
    return [s, cfg, fi](Context& ctx, const DevPtrs& p) {
      const ops::GradScale scale{F(p, INV), I32(p, fi), I32(p, SKIPPED)};
      ops::adamw_update(ctx, s, F(p, P), F(p, G), F(p, M), F(p, V), cfg, I32(p, STEP), I32(p, STEP), {}, scale);
    };
  };
  const std::int32_t one = 1;
  const OpCost cost = s.cost({}, {&inv, &one, &one});
  c.passes.push_back({"optimizer", cost, {G, INV, FI0, FI1, SKIPPED}, {P, M, V, STEP}, run(FI0), [=](HostBufs& h) {
                        adamw_ref(h, P, G, M, V, n, cfg, int64_t{step} - skipped + 1, inv);
                        h[STEP].i[0] += 1;
                      }});
  c.passes.push_back(
      {"optimizer (overflow: skipped)", cost, {G, INV, FI0, FI1, SKIPPED}, {P, M, V, STEP}, run(FI1), [=](HostBufs& h) {
         h[STEP].i[0] += 1;
       }});
  return c;
}

namespace {

// Random AdamW settings around torch's defaults: β1 below 0.5 at times (the
// other form of ATen's lerp), weight decay off at times.
ops::AdamWConfig random_adamw(Rng& r) {
  ops::AdamWConfig c;
  c.lr = r.uniform(1e-4f, 1e-2f);
  c.beta1 = r.below(2) == 0 ? 0.9 : 0.99 * r.uniform_double();
  c.beta2 = r.below(2) == 0 ? 0.999 : 0.5 + 0.4999 * r.uniform_double();
  c.eps = r.below(2) == 0 ? 1e-8 : r.uniform(1e-6f, 1e-3f);
  c.weight_decay = r.below(3) == 0 ? 0.0 : r.uniform(0.0f, 0.1f);
  return c;
}

// The sizes the models update: simple-mlp's 235,146 parameters, and at model
// batches (perf runs, ≥ 16) ResNet-18's 11,689,512 (the check suites call this
// at batch ≤ 3 and keep every buffer in float64 on the host).
std::vector<int64_t> model_param_counts(int64_t batch) {
  std::vector<int64_t> v = {235146};
  if (batch >= 16) v.push_back(11689512);
  return v;
}

}  // namespace

bool is_optim_op(const std::string& op) {
  for (const char* name :
       {"sgd_nesterov", "sgd_scaled", "adamw", "adamw_scaled", "cast", "grads_check_finite", "scale_loss_grad",
        "loss_scale_update"})
    if (op == name) return true;
  return false;
}

OpCase optim_case(const std::string& op, Rng& r) {
  const int64_t n = pick_n(r, 1, 20000);
  if (op == "sgd_nesterov") {
    ops::SgdConfig cfg{r.uniform(0.001f, 0.1f), r.uniform(0.1f, 0.95f), r.below(4) == 0 ? 0.f : r.uniform(0.f, 0.01f),
                       true};
    return sgd_nesterov_case(n, cfg);
  }
  if (op == "sgd_scaled") {
    ops::SgdConfig cfg = random_sgd(r);
    const bool momentum = cfg.momentum != 0.f;
    // Powers of two as GradScaler's default factors make them, and any value.
    const float inv = r.below(2) == 0 ? std::ldexp(1.0f, -static_cast<int>(r.below(17))) : r.uniform(1e-5f, 1.0f);
    return sgd_scaled_case(n, cfg, momentum, inv);
  }
  if (op == "adamw") {
    const ops::AdamWConfig cfg = random_adamw(r);
    const auto first = static_cast<std::int32_t>(r.below(3) == 0 ? 0 : r.below(2000));
    return adamw_case(n, cfg, static_cast<int>(pick_n(r, 1, 4)), first, r.below(2) == 0);
  }
  if (op == "adamw_scaled") {
    const ops::AdamWConfig cfg = random_adamw(r);
    const float inv = r.below(2) == 0 ? std::ldexp(1.0f, -static_cast<int>(r.below(17))) : r.uniform(1e-5f, 1.0f);
    const auto step = static_cast<std::int32_t>(r.below(100));
    return adamw_scaled_case(n, cfg, inv, step,
                             static_cast<std::int32_t>(r.below(static_cast<std::uint64_t>(step) + 1)));
  }
  if (op == "cast") return cast_case(n, r);
  if (op == "grads_check_finite") return finite_case(n, r);
  if (op == "scale_loss_grad") return scale_loss_grad_case(n, r);
  if (op == "loss_scale_update") return loss_scale_case(r);
  throw_usage(fmt::format("unknown op '{}'", op), "see roofline ops --list");
}

std::vector<OpCase> optim_perf_cases(const std::string& op, int64_t batch) {
  std::vector<OpCase> v;
  Rng r(7);
  for (int64_t n : model_param_counts(batch)) {
    if (op == "sgd_nesterov") v.push_back(sgd_nesterov_case(n, {0.01f, 0.9f, 1e-4f, true}));
    if (op == "sgd_scaled") v.push_back(sgd_scaled_case(n, {0.01f, 0.9f, 1e-4f}, true, 1.0f / 65536));
    if (op == "adamw") v.push_back(adamw_case(n, {}, 1, 0, false));
    if (op == "adamw_scaled") v.push_back(adamw_scaled_case(n, {}, 1.0f / 65536, 10, 2));
    if (op == "cast") v.push_back(cast_case(n, r));
    if (op == "grads_check_finite") v.push_back(finite_case(n, r));
  }
  if (op == "scale_loss_grad") v.push_back(scale_loss_grad_case(batch * 1000, r));  // the logits' gradient
  if (op == "loss_scale_update") v.push_back(loss_scale_case(r));
  if (v.empty()) throw_usage(fmt::format("unknown op '{}'", op), "see roofline ops --list");
  return v;
}

}  // namespace roofline::engine::harness

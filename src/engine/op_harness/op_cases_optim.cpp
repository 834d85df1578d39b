// The harness's optimiser cases: SGD alone, and a Linear layer's weight
// gradient with the SGD update of its parameters (one pass on the fast CPU
// backend).
#include <fmt/format.h>

#include "src/engine/cpu/ref_ops.hpp"
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

}  // namespace roofline::engine::harness

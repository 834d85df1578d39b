// The harness's CNN op cases (ops_cnn.hpp, and the padded, NHWC and bf16/fp16
// forms of max-pool and ReLU): random shapes in both formats and every dtype
// (bf16 and fp16 cases are refused by the CPU backends, which the harness
// reports as skipped), the ResNet-18 and AlexNet shapes scaled down among them,
// and those shapes at full size for the perf mode.
#include <fmt/format.h>

#include <cmath>

#include "roofline/core/error.hpp"
#include "roofline/engine/ops_cnn.hpp"
#include "src/engine/cpu/ref_cnn.hpp"
#include "src/engine/op_harness/case_util.hpp"
#include "src/engine/op_harness/op_case.hpp"

namespace roofline::engine::harness {

using ops::Activation;
using std::int64_t;
using namespace case_util;

namespace {

MemoryFormat random_format(Rng& r) { return r.below(2) == 0 ? MemoryFormat::NCHW : MemoryFormat::NHWC; }
std::string tag(MemoryFormat f, DType t) { return fmt::format("{} {}", to_string(f), to_string(t)); }

// ---- BatchNorm2d ---------------------------------------------------------------------
OpCase bn_case(const ops::BatchNormShape& s) {
  enum { IN, RES, GAMMA, BETA, RM, RV, OUT, SMEAN, SINV, EOUT, DOUT, Y, SM, SI, DIN, DG, DB };
  const int64_t N = s.n * s.c * s.h * s.w, C = s.c;
  const DType t = s.dtype;
  OpCase c;
  c.op = s.residual ? "batchnorm+add+relu" : s.act == Activation::ReLU ? "batchnorm+relu" : "batchnorm";
  c.shape = fmt::format("n={} c={} {}x{} {}", s.n, s.c, s.h, s.w, tag(s.format, t));
  c.bufs = {{"in", t, N},
            {"residual", t, s.residual ? N : 1},
            {"gamma", DType::F32, C},
            {"beta", DType::F32, C},
            {"running_mean", DType::F32, C, Role::InOut},
            {"running_var", DType::F32, C, Role::InOut},
            {"out", t, N, Role::Output},
            {"save_mean", DType::F32, C, Role::Output},
            {"save_invstd", DType::F32, C, Role::Output},
            {"out_eval", t, N, Role::Output},
            {"dout", t, N, Role::InOut},  // turned into dpre in place
            {"y", t, N},                  // the forward's output (the ReLU mask)
            {"save_mean_ref", DType::F32, C},
            {"save_invstd_ref", DType::F32, C},
            {"din", t, N, Role::Output},
            {"dgamma", DType::F32, C, Role::Output},
            {"dbeta", DType::F32, C, Role::Output}};
  // The training forward in float64 on copies of the running statistics.
  auto fwd = [s, N, C](const HostBufs& h, std::vector<double>& y, std::vector<double>& sm, std::vector<double>& si) {
    y.resize(static_cast<size_t>(N));
    sm.resize(static_cast<size_t>(C));
    si.resize(static_cast<size_t>(C));
    std::vector<double> rm = h[RM].f, rv = h[RV].f;
    ref::batchnorm_forward_train<double>(s, y.data(), h[IN].f.data(), s.residual ? h[RES].f.data() : nullptr,
                                         h[GAMMA].f.data(), h[BETA].f.data(), rm.data(), rv.data(), sm.data(),
                                         si.data());
  };
  c.fill = [=](Rng& r, HostBufs& h) {
    // Each channel its own mean (−3..3) and spread (0.5..2): statistics far from
    // 0 and 1, so a variance that cancels or a wrong channel shows.
    std::vector<double> mu(static_cast<size_t>(C)), sd(static_cast<size_t>(C));
    for (int64_t k = 0; k < C; ++k) {
      mu[size_t(k)] = r.uniform(-3.f, 3.f);
      sd[size_t(k)] = r.uniform(0.5f, 2.f);
    }
    h[IN].f.resize(static_cast<size_t>(N));
    for (int64_t n = 0; n < s.n; ++n)
      for (int64_t k = 0; k < C; ++k)
        for (int64_t y = 0; y < s.h; ++y)
          for (int64_t x = 0; x < s.w; ++x)
            h[IN].f[size_t(ref::image_at(s.format, C, s.h, s.w, n, k, y, x))] =
                mu[size_t(k)] + sd[size_t(k)] * r.normal();
    round_to(t, h[IN]);
    normal(r, h[RES], s.residual ? N : 1);
    round_to(t, h[RES]);
    h[GAMMA].f.resize(static_cast<size_t>(C));
    for (auto& v : h[GAMMA].f) v = r.uniform(0.5f, 1.5f) * (r.below(4) == 0 ? -1 : 1);
    normal(r, h[BETA], C);
    normal(r, h[RM], C);
    h[RV].f.resize(static_cast<size_t>(C));
    for (auto& v : h[RV].f) v = r.uniform(0.5f, 2.f);
    for (int b : {GAMMA, BETA, RM, RV}) round_to(DType::F32, h[size_t(b)]);
    normal(r, h[DOUT], N);
    fwd(h, h[Y].f, h[SM].f, h[SI].f);  // rounded to their dtypes by the harness
  };
  const PassCosts pc = s.cost();
  std::vector<int> fin = {IN, GAMMA, BETA};
  if (s.residual) fin.push_back(RES);
  c.passes.push_back({"forward",
                      pc.forward,
                      fin,
                      {OUT, RM, RV, SMEAN, SINV},
                      [s](Context& ctx, const DevPtrs& p) {
                        ops::batchnorm_forward_train(ctx, s, P(p, OUT), P(p, IN), s.residual ? P(p, RES) : nullptr,
                                                     F(p, GAMMA), F(p, BETA), F(p, RM), F(p, RV), F(p, SMEAN),
                                                     F(p, SINV));
                      },
                      [s](HostBufs& h) {
                        ref::batchnorm_forward_train<double>(s, h[OUT].f.data(), h[IN].f.data(),
                                                             s.residual ? h[RES].f.data() : nullptr, h[GAMMA].f.data(),
                                                             h[BETA].f.data(), h[RM].f.data(), h[RV].f.data(),
                                                             h[SMEAN].f.data(), h[SINV].f.data());
                      }});
  std::vector<int> ein = fin;
  ein.push_back(RM);
  ein.push_back(RV);
  c.passes.push_back({"forward-eval",
                      s.eval_cost(),
                      ein,
                      {EOUT},
                      [s](Context& ctx, const DevPtrs& p) {
                        ops::batchnorm_forward_eval(ctx, s, P(p, EOUT), P(p, IN), s.residual ? P(p, RES) : nullptr,
                                                    F(p, GAMMA), F(p, BETA), F(p, RM), F(p, RV));
                      },
                      [s](HostBufs& h) {
                        ref::batchnorm_forward_eval<double>(s, h[EOUT].f.data(), h[IN].f.data(),
                                                            s.residual ? h[RES].f.data() : nullptr, h[GAMMA].f.data(),
                                                            h[BETA].f.data(), h[RM].f.data(), h[RV].f.data());
                      }});
  c.passes.push_back({"backward",
                      pc.input_grad,
                      {Y, IN, GAMMA, SM, SI},
                      {DOUT, DIN, DG, DB},
                      [s](Context& ctx, const DevPtrs& p) {
                        ops::batchnorm_backward(ctx, s, P(p, DIN), F(p, DG), F(p, DB), P(p, DOUT), P(p, Y), P(p, IN),
                                                F(p, GAMMA), F(p, SM), F(p, SI));
                      },
                      [s](HostBufs& h) {
                        ref::batchnorm_backward<double>(s, h[DIN].f.data(), h[DG].f.data(), h[DB].f.data(),
                                                        h[DOUT].f.data(), h[Y].f.data(), h[IN].f.data(),
                                                        h[GAMMA].f.data(), h[SM].f.data(), h[SI].f.data());
                      }});
  // L = Σ out · dout: the analytic gradients from the float64 forward and backward.
  auto loss = [=](const HostBufs& h) {
    std::vector<double> y, sm, si;
    fwd(h, y, sm, si);
    return dot(y, h[DOUT].f);
  };
  auto grad = [=](const HostBufs& h, int which) {
    std::vector<double> y, sm, si;
    fwd(h, y, sm, si);
    std::vector<double> dpre = h[DOUT].f, din(static_cast<size_t>(N)), dg(static_cast<size_t>(C)),
                        db(static_cast<size_t>(C));
    ref::batchnorm_backward<double>(s, din.data(), dg.data(), db.data(), dpre.data(), y.data(), h[IN].f.data(),
                                    h[GAMMA].f.data(), sm.data(), si.data());
    return which == IN ? din : which == GAMMA ? dg : which == BETA ? db : dpre;
  };
  c.grads.push_back({"in", IN, loss, [=](const HostBufs& h) { return grad(h, IN); }});
  c.grads.push_back({"gamma", GAMMA, loss, [=](const HostBufs& h) { return grad(h, GAMMA); }});
  c.grads.push_back({"beta", BETA, loss, [=](const HostBufs& h) { return grad(h, BETA); }});
  if (s.residual) c.grads.push_back({"residual", RES, loss, [=](const HostBufs& h) { return grad(h, RES); }});
  return c;
}

ops::BatchNormShape random_bn(Rng& r, Activation act, bool residual) {
  ops::BatchNormShape s;
  s.format = random_format(r);
  s.dtype = random_dtype(r);
  s.act = act;
  s.residual = residual;
  s.momentum = r.below(3) == 0 ? r.uniform(0.f, 1.f) : 0.1f;
  s.eps = r.below(3) == 0 ? r.uniform(1e-5f, 1e-2f) : 1e-5f;
  switch (r.below(6)) {
    case 0:  // ResNet-18's layer3 scaled down: 64 channels of 14×14
      s.n = pick(r, 1, 2), s.c = 64, s.h = s.w = 14;
      break;
    case 1:  // the GPU's 16-byte vectors: 8 channels (NHWC) or 8 pixels (NCHW) a load
      s.n = pick(r, 1, 3), s.c = 8 * pick(r, 1, 4), s.h = 4, s.w = 2 * pick(r, 1, 4);
      break;
    case 2:  // enough values per channel for several blocks per channel on the GPU
      s.n = pick(r, 4, 8), s.c = pick(r, 1, 4), s.h = s.w = 32;
      break;
    default:
      s.n = pick(r, 1, 4), s.c = pick(r, 1, 20), s.h = pick(r, 1, 9), s.w = pick(r, 1, 9);
  }
  if (s.n * s.h * s.w < 2) s.n = 2;  // training needs two values per channel
  return s;
}

// ---- AdaptiveAvgPool2d ---------------------------------------------------------------
OpCase avgpool_case(const ops::AvgPoolShape& s) {
  enum { IN, OUT, DOUT, DIN };
  const int64_t ni = s.n * s.c * s.h * s.w, no = s.n * s.c * s.oh * s.ow;
  const DType t = s.dtype;
  OpCase c;
  c.op = "adaptive_avgpool2d";
  c.shape = fmt::format("n={} c={} {}x{}->{}x{} {}", s.n, s.c, s.h, s.w, s.oh, s.ow, tag(s.format, t));
  c.bufs = {{"in", t, ni}, {"out", t, no, Role::Output}, {"dout", t, no}, {"din", t, ni, Role::Output}};
  c.fill = [=](Rng& r, HostBufs& h) {
    normal(r, h[IN], ni);
    normal(r, h[DOUT], no);
  };
  const PassCosts pc = s.cost();
  c.passes.push_back(
      {"forward",
       pc.forward,
       {IN},
       {OUT},
       [s](Context& ctx, const DevPtrs& p) { ops::adaptive_avgpool2d_forward(ctx, s, P(p, OUT), P(p, IN)); },
       [s](HostBufs& h) { ref::adaptive_avgpool2d_forward<double>(s, h[OUT].f.data(), h[IN].f.data()); }});
  c.passes.push_back(
      {"input-grad",
       pc.input_grad,
       {DOUT},
       {DIN},
       [s](Context& ctx, const DevPtrs& p) { ops::adaptive_avgpool2d_backward(ctx, s, P(p, DIN), P(p, DOUT)); },
       [s](HostBufs& h) { ref::adaptive_avgpool2d_backward<double>(s, h[DIN].f.data(), h[DOUT].f.data()); }});
  c.grads.push_back({"in", IN,
                     [=](const HostBufs& h) {
                       std::vector<double> y(static_cast<size_t>(no));
                       ref::adaptive_avgpool2d_forward<double>(s, y.data(), h[IN].f.data());
                       return dot(y, h[DOUT].f);
                     },
                     [=](const HostBufs& h) {
                       std::vector<double> g(static_cast<size_t>(ni));
                       ref::adaptive_avgpool2d_backward<double>(s, g.data(), h[DOUT].f.data());
                       return g;
                     }});
  for (auto& g : c.grads) g.eps = 1e-4;  // linear: no kinks
  return c;
}

ops::AvgPoolShape random_avgpool(Rng& r) {
  ops::AvgPoolShape s;
  s.format = random_format(r);
  s.dtype = random_dtype(r);
  s.n = pick(r, 1, 3);
  s.c = r.below(2) == 0 ? 8 * pick(r, 1, 4) : pick(r, 1, 12);
  switch (r.below(5)) {
    case 0:  // ResNet-18's head scaled down: 7×7 to 1×1
      s.h = s.w = 7, s.oh = s.ow = 1;
      break;
    case 1:  // AlexNet's: 6×6 to 6×6 (at 224×224 input) and 13×13 to 6×6 (larger inputs)
      s.h = s.w = r.below(2) == 0 ? 6 : 13, s.oh = s.ow = 6;
      break;
    case 2:  // bins larger than the input (overlapping, every element in several)
      s.h = pick(r, 1, 4), s.w = pick(r, 1, 4), s.oh = pick(r, 1, 7), s.ow = pick(r, 1, 7);
      break;
    default:
      s.h = pick(r, 1, 15), s.w = pick(r, 1, 15), s.oh = pick(r, 1, s.h), s.ow = pick(r, 1, s.w);
  }
  return s;
}

// ---- Residual add (+ReLU) ------------------------------------------------------------
OpCase add_case(const ops::EltwiseShape& s) {
  enum { A, B, OUT, DOUT, Y, DIN };
  const int64_t n = s.n;
  const DType t = s.dtype;
  const bool relu = s.act == Activation::ReLU;
  OpCase c;
  c.op = relu ? "add+relu" : "add";
  c.shape = fmt::format("n={} {}", n, to_string(t));
  c.bufs = {{"a", t, n},    {"b", t, n}, {"out", t, n, Role::Output},
            {"dout", t, n}, {"y", t, n}, {"din", t, n, Role::Output}};
  auto fwd = [s, n](const HostBufs& h) {
    std::vector<double> y(static_cast<size_t>(n));
    ref::add_forward<double>(s, y.data(), h[A].f.data(), h[B].f.data());
    return y;
  };
  c.fill = [=](Rng& r, HostBufs& h) {
    normal(r, h[A], n);
    normal(r, h[B], n);
    round_to(t, h[A]);
    round_to(t, h[B]);
    normal(r, h[DOUT], n);
    h[Y].f = fwd(h);
  };
  const PassCosts pc = ops::add_cost(s);
  c.passes.push_back({"forward",
                      pc.forward,
                      {A, B},
                      {OUT},
                      [s](Context& ctx, const DevPtrs& p) { ops::add_forward(ctx, s, P(p, OUT), P(p, A), P(p, B)); },
                      [=](HostBufs& h) { h[OUT].f = fwd(h); }});
  if (relu)  // a and b both get dout ⊙ [out > 0]: the activation's backward
    c.passes.push_back(
        {"input-grad",
         pc.input_grad,
         {DOUT, Y},
         {DIN},
         [s](Context& ctx, const DevPtrs& p) { ops::activation_backward(ctx, s, P(p, DIN), P(p, DOUT), P(p, Y)); },
         [s](HostBufs& h) { ref::activation_backward<double>(s, h[DIN].f.data(), h[DOUT].f.data(), h[Y].f.data()); }});
  auto loss = [=](const HostBufs& h) { return dot(fwd(h), h[DOUT].f); };
  auto grad = [=](const HostBufs& h) {
    std::vector<double> y = fwd(h), g(static_cast<size_t>(n));
    ref::activation_backward<double>(s, g.data(), h[DOUT].f.data(), y.data());
    return g;
  };
  c.grads.push_back({"a", A, loss, grad});
  c.grads.push_back({"b", B, loss, grad});
  return c;
}

// ---- Dropout ---------------------------------------------------------------------------
OpCase dropout_case(const ops::DropoutShape& s, std::uint64_t seed, std::int32_t step) {
  enum { IN, STEP, OUT, DOUT, DIN };
  const int64_t n = s.n;
  const DType t = s.dtype;
  OpCase c;
  c.op = "dropout";
  c.shape = fmt::format("n={} p={} seed={} step={} {}", n, s.p, seed, step, to_string(t));
  c.bufs = {{"in", t, n},
            {"step", DType::I32, 1},
            {"out", t, n, Role::Output, true},  // zeros exactly where the reference drops: the same mask
            {"dout", t, n},
            {"din", t, n, Role::Output, true}};
  c.fill = [=](Rng& r, HostBufs& h) {
    normal(r, h[IN], n);
    normal(r, h[DOUT], n);
    h[STEP].i = {step};
  };
  const PassCosts pc = s.cost();
  c.passes.push_back({"forward",
                      pc.forward,
                      {IN, STEP},
                      {OUT},
                      [s, seed](Context& ctx, const DevPtrs& p) {
                        ops::dropout_forward(ctx, s, P(p, OUT), P(p, IN), seed, I(p, STEP));
                      },
                      [s, seed](HostBufs& h) {
                        ref::dropout_forward<double>(s, h[OUT].f.data(), h[IN].f.data(), seed, h[STEP].i[0]);
                      }});
  c.passes.push_back({"input-grad",
                      pc.input_grad,
                      {DOUT, STEP},
                      {DIN},
                      [s, seed](Context& ctx, const DevPtrs& p) {
                        ops::dropout_backward(ctx, s, P(p, DIN), P(p, DOUT), seed, I(p, STEP));
                      },
                      [s, seed](HostBufs& h) {
                        ref::dropout_backward<double>(s, h[DIN].f.data(), h[DOUT].f.data(), seed, h[STEP].i[0]);
                      }});
  // The mask is fixed by (seed, step): L is linear in the input.
  c.grads.push_back({"in", IN,
                     [=](const HostBufs& h) {
                       std::vector<double> y(static_cast<size_t>(n));
                       ref::dropout_forward<double>(s, y.data(), h[IN].f.data(), seed, step);
                       return dot(y, h[DOUT].f);
                     },
                     [=](const HostBufs& h) {
                       std::vector<double> g(static_cast<size_t>(n));
                       ref::dropout_backward<double>(s, g.data(), h[DOUT].f.data(), seed, step);
                       return g;
                     },
                     1e-4});
  return c;
}

ops::Pool2dShape random_pool_pad(Rng& r) {
  for (;;) {
    ops::Pool2dShape s;
    s.format = random_format(r);
    s.dtype = random_dtype(r);
    s.n = pick(r, 1, 3);
    s.c = r.below(2) == 0 ? 8 * pick(r, 1, 3) : pick(r, 1, 6);
    switch (r.below(4)) {
      case 0:  // ResNet-18's stem pool: 3, stride 2, padding 1
        s.kernel = 3, s.stride = 2, s.pad = 1, s.h = pick(r, 2, 20), s.w = pick(r, 2, 20);
        break;
      case 1:  // AlexNet's: 3, stride 2, no padding (55 → 27, 27 → 13, 13 → 6)
        s.kernel = 3, s.stride = 2, s.pad = 0, s.h = s.w = r.below(2) == 0 ? 13 : pick(r, 3, 27);
        break;
      default:
        s.kernel = pick(r, 1, 5), s.stride = pick(r, 1, 4), s.pad = pick(r, 0, s.kernel / 2);
        s.h = pick(r, 1, 20), s.w = pick(r, 1, 20);
    }
    if (s.valid()) return s;
  }
}

}  // namespace

const std::vector<std::string>& cnn_op_names() {
  static const std::vector<std::string> names = {"batchnorm",     "batchnorm+relu",     "batchnorm+add+relu",
                                                 "maxpool2d_pad", "adaptive_avgpool2d", "add",
                                                 "add+relu",      "relu_lowp",          "dropout"};
  return names;
}

bool is_cnn_op(const std::string& op) {
  for (const auto& n : cnn_op_names())
    if (n == op) return true;
  return false;
}

OpCase cnn_case(const std::string& op, Rng& r) {
  if (op == "batchnorm") return bn_case(random_bn(r, Activation::None, false));
  if (op == "batchnorm+relu") return bn_case(random_bn(r, Activation::ReLU, false));
  if (op == "batchnorm+add+relu") return bn_case(random_bn(r, Activation::ReLU, true));
  if (op == "maxpool2d_pad") return pool_case(random_pool_pad(r), op);
  if (op == "adaptive_avgpool2d") return avgpool_case(random_avgpool(r));
  if (op == "add" || op == "add+relu") {
    const Activation a = op == "add" ? Activation::None : Activation::ReLU;
    return add_case({pick(r, 1, 5000), a, random_dtype(r)});
  }
  if (op == "relu_lowp") return relu_case(pick(r, 1, 5000), r.below(2) == 0 ? DType::BF16 : DType::F16);
  if (op == "dropout") {
    ops::DropoutShape s;
    s.n = pick(r, 1, 5000);
    const auto k = r.below(8);
    s.p = k == 0 ? 0.f : k == 1 ? 1.f : k < 5 ? 0.5f : r.uniform(0.05f, 0.95f);
    s.dtype = random_dtype(r);
    const std::uint64_t seed = r.next();
    return dropout_case(s, seed, static_cast<std::int32_t>(r.below(1000)));
  }
  throw_usage(fmt::format("unknown op '{}'", op), "see roofline ops --list");
}

// ResNet-18 and AlexNet at batch B: fp32 NCHW (the "fp32" precision) and bf16
// NHWC (mixed precision, channels last).
std::vector<OpCase> cnn_perf_cases(const std::string& op, std::int64_t B) {
  std::vector<OpCase> v;
  const std::pair<MemoryFormat, DType> kinds[] = {{MemoryFormat::NCHW, DType::F32}, {MemoryFormat::NHWC, DType::BF16}};
  auto bn = [B](int64_t c, int64_t hw, Activation act, bool residual, MemoryFormat f, DType t) {
    ops::BatchNormShape s;
    s.n = B, s.c = c, s.h = s.w = hw, s.format = f, s.dtype = t, s.act = act, s.residual = residual;
    if (s.count() < 2) s.n = 2;
    return bn_case(s);
  };
  for (const auto& [f, t] : kinds) {
    if (op == "batchnorm") {  // the downsampling shortcuts' BatchNorm
      v.push_back(bn(128, 28, Activation::None, false, f, t));
    } else if (op == "batchnorm+relu") {  // the stem (the largest activation) and layer3
      v.push_back(bn(64, 112, Activation::ReLU, false, f, t));
      v.push_back(bn(256, 14, Activation::ReLU, false, f, t));
    } else if (op == "batchnorm+add+relu") {  // the end of a basic block: layer1 and layer4
      v.push_back(bn(64, 56, Activation::ReLU, true, f, t));
      v.push_back(bn(512, 7, Activation::ReLU, true, f, t));
    } else if (op == "maxpool2d_pad") {
      ops::Pool2dShape s;
      s.n = B, s.format = f, s.dtype = t, s.kernel = 3, s.stride = 2;
      s.c = 64, s.h = s.w = 112, s.pad = 1;  // ResNet-18's stem pool
      v.push_back(pool_case(s, op));
      s.pad = 0;
      for (auto [c, hw] : {std::pair<int64_t, int64_t>{64, 55}, {192, 27}, {256, 13}}) {  // AlexNet's
        s.c = c, s.h = s.w = hw;
        v.push_back(pool_case(s, op));
      }
    } else if (op == "adaptive_avgpool2d") {
      ops::AvgPoolShape s;
      s.n = B, s.format = f, s.dtype = t;
      s.c = 512, s.h = s.w = 7, s.oh = s.ow = 1;  // ResNet-18's
      v.push_back(avgpool_case(s));
      s.c = 256, s.h = s.w = 6, s.oh = s.ow = 6;  // AlexNet's at 224×224
      v.push_back(avgpool_case(s));
    } else if (op == "add" || op == "add+relu") {
      v.push_back(add_case({B * 64 * 56 * 56, op == "add" ? Activation::None : Activation::ReLU, t}));
    } else if (op == "relu_lowp") {
      if (t != DType::F32) v.push_back(relu_case(B * 64 * 55 * 55, t));  // AlexNet's conv1 output
    } else if (op == "dropout") {
      for (int64_t features : {9216, 4096}) v.push_back(dropout_case({B * features, 0.5f, t}, 1234, 7));
    }
  }
  if (v.empty()) throw_usage(fmt::format("unknown op '{}'", op), "see roofline ops --list");
  return v;
}

}  // namespace roofline::engine::harness

// The harness's op instances. Each builder takes a shape, so random shapes
// (check and gradient modes) and model shapes (perf mode) share the code.
#include <fmt/format.h>

#include <cmath>

#include "roofline/core/error.hpp"
#include "roofline/engine/ops.hpp"
#include "src/engine/cpu/ref_ops.hpp"
#include "src/engine/op_harness/case_util.hpp"
#include "src/engine/op_harness/op_case.hpp"

namespace roofline::engine::harness {

using ops::Activation;
using std::int64_t;
using namespace case_util;

// ---- Layers with weights: Linear and Conv2d -------------------------------------
namespace {

// The buffers every layer with weights has, in this order; a layer's own
// buffers follow from kLayerBufs.
enum LayerBuf { IN, W, B, OUT, DOUT, YFWD, DPRE_REF, DPRE, DIN, DW, DB, kLayerBufs };

// A layer's ops on the context and their float64 references, over its shape.
template <class Shape>
struct LayerOps {
  void (*forward)(Context&, const Shape&, void* out, const void* in, const void* w, const float* b);
  void (*backward_input)(Context&, const Shape&, void* din, const void* dpre, const void* w);
  void (*backward_weight)(Context&, const Shape&, float* dw, float* db, const void* dpre, const void* in);
  void (*ref_forward)(const Shape&, double* out, const double* in, const double* w, const double* b);
  void (*ref_backward_input)(const Shape&, double* din, const double* dpre, const double* w);
  void (*ref_backward_weight)(const Shape&, double* dw, double* db, const double* dpre, const double* in);
};

// Element counts of a layer's input, weights, output and bias (the bias's
// even where the layer has none: its gradient is still computed).
struct LayerSizes {
  int64_t in, w, out, bias;
};

// y = act(layer(in; w, b)): the forward pass, the input gradient through the
// activation's mask, the weight (and bias) gradient from the reference's own
// mask, and finite differences on in, w and b against L = Σ y · dout.
template <class Shape>
OpCase layer_case(const Shape& s, const LayerOps<Shape>& f, const LayerSizes& n, std::string op, std::string shape) {
  const bool relu = s.act == Activation::ReLU;
  const int64_t nb = s.bias ? n.bias : 1;
  OpCase c;
  c.op = std::move(op);
  c.shape = std::move(shape);
  c.bufs = {{"in", DType::F32, n.in},
            {"w", DType::F32, n.w},
            {"b", DType::F32, nb},
            {"out", DType::F32, n.out, Role::Output},
            {"dout", DType::F32, n.out},
            {"y", DType::F32, n.out},
            {"dpre_ref", DType::F32, n.out},
            {"dpre", DType::F32, n.out, Role::Output},
            {"din", DType::F32, n.in, Role::Output},
            {"dw", DType::F32, n.w, Role::Output},
            {"db", DType::F32, nb, Role::Output}};
  auto fwd = [s, f, n](const HostBufs& h, std::vector<double>& y) {
    y.resize(static_cast<size_t>(n.out));
    f.ref_forward(s, y.data(), h[IN].f.data(), h[W].f.data(), s.bias ? h[B].f.data() : nullptr);
  };
  auto mask = [relu](const HostBufs& h, const std::vector<double>& y) {
    std::vector<double> d = h[DOUT].f;
    if (relu)
      for (size_t i = 0; i < d.size(); ++i) d[i] = y[i] > 0 ? d[i] : 0.0;
    return d;
  };
  c.fill = [=](Rng& r, HostBufs& h) {
    normal(r, h[IN], n.in);
    normal(r, h[W], n.w);
    normal(r, h[B], nb);
    normal(r, h[DOUT], n.out);
    fwd(h, h[YFWD].f);
    round_all(h[YFWD]);
    h[DPRE_REF].f = mask(h, h[YFWD].f);
  };
  const PassCosts pc = s.cost();
  c.passes.push_back(
      {"forward",
       pc.forward,
       {IN, W, B},
       {OUT},
       [s, f](Context& ctx, const DevPtrs& p) { f.forward(ctx, s, F(p, OUT), F(p, IN), F(p, W), F(p, B)); },
       [=](HostBufs& h) { fwd(h, h[OUT].f); }});
  // With a ReLU the pass first masks dout by the forward output (into dpre).
  const int dsrc = relu ? DPRE : DOUT;
  std::vector<int> gin = relu ? std::vector<int>{DOUT, YFWD, W} : std::vector<int>{DOUT, W};
  std::vector<int> gout = relu ? std::vector<int>{DPRE, DIN} : std::vector<int>{DIN};
  c.passes.push_back({"input-grad", pc.input_grad, gin, gout,
                      [s, f, relu, n, dsrc](Context& ctx, const DevPtrs& p) {
                        if (relu) ops::activation_backward(ctx, {n.out, s.act}, F(p, DPRE), F(p, DOUT), F(p, YFWD));
                        f.backward_input(ctx, s, F(p, DIN), F(p, dsrc), F(p, W));
                      },
                      [=](HostBufs& h) {
                        if (relu) h[DPRE].f = mask(h, h[YFWD].f);
                        f.ref_backward_input(s, h[DIN].f.data(), h[dsrc].f.data(), h[W].f.data());
                      }});
  std::vector<int> wout = {DW};
  if (s.bias) wout.push_back(DB);
  c.passes.push_back({"weight-grad",
                      pc.weight_grad,
                      {DPRE_REF, IN},
                      wout,
                      [s, f](Context& ctx, const DevPtrs& p) {
                        f.backward_weight(ctx, s, F(p, DW), F(p, DB), F(p, DPRE_REF), F(p, IN));
                      },
                      [=](HostBufs& h) {
                        f.ref_backward_weight(s, h[DW].f.data(), s.bias ? h[DB].f.data() : nullptr,
                                              h[DPRE_REF].f.data(), h[IN].f.data());
                      }});
  auto loss = [=](const HostBufs& h) {
    std::vector<double> y;
    fwd(h, y);
    return dot(y, h[DOUT].f);
  };
  auto grads = [=](const HostBufs& h, int which) {
    std::vector<double> y;
    fwd(h, y);
    std::vector<double> dpre = mask(h, y);
    if (which == IN) {
      std::vector<double> g(static_cast<size_t>(n.in));
      f.ref_backward_input(s, g.data(), dpre.data(), h[W].f.data());
      return g;
    }
    std::vector<double> dw(static_cast<size_t>(n.w)), db(static_cast<size_t>(n.bias));
    f.ref_backward_weight(s, dw.data(), db.data(), dpre.data(), h[IN].f.data());
    return which == W ? dw : db;
  };
  c.grads.push_back({"in", IN, loss, [=](const HostBufs& h) { return grads(h, IN); }});
  c.grads.push_back({"w", W, loss, [=](const HostBufs& h) { return grads(h, W); }});
  if (s.bias) c.grads.push_back({"b", B, loss, [=](const HostBufs& h) { return grads(h, B); }});
  return c;
}

}  // namespace

OpCase linear_case(const ops::LinearShape& s) {
  // (the fp32 bias of the training layers: linear_forward's bias may also be in the activations' dtype)
  static const LayerOps<ops::LinearShape> kOps = {
      [](Context& ctx, const ops::LinearShape& ls, void* out, const void* in, const void* w, const float* b) {
        ops::linear_forward(ctx, ls, out, in, w, b);
      },
      ops::linear_backward_input,         ops::linear_backward_weight,
      ref::linear_forward<double>, ref::linear_backward_input<double>, ref::linear_backward_weight<double>};
  OpCase c = layer_case(s, kOps, {s.n * s.in, s.out * s.in, s.n * s.out, s.out},
                        s.act == Activation::ReLU ? "linear+relu" : "linear",
                        fmt::format("n={} in={} out={}{}", s.n, s.in, s.out, s.bias ? "" : " nobias"));
  // The inference form: the same forward over the weights stored transposed (in, out).
  enum { WT = kLayerBufs, OUT_WT };
  c.bufs.push_back({"wt", DType::F32, s.in * s.out});
  c.bufs.push_back({"out_wt", DType::F32, s.n * s.out, Role::Output});
  c.fill = [s, fill = c.fill](Rng& r, HostBufs& h) {
    fill(r, h);
    h[WT].f.resize(static_cast<size_t>(s.in * s.out));
    for (int64_t o = 0; o < s.out; ++o)
      for (int64_t k = 0; k < s.in; ++k)
        h[WT].f[static_cast<size_t>(k * s.out + o)] = h[W].f[static_cast<size_t>(o * s.in + k)];
  };
  PassSpec forward_wt{"forward-wt",
                      s.cost().forward,
                      {IN, WT, B},
                      {OUT_WT},
                      [s](Context& ctx, const DevPtrs& p) {
                        ops::linear_forward_wt(ctx, s, F(p, OUT_WT), F(p, IN), F(p, WT), F(p, B));
                      },
                      [s](HostBufs& h) {
                        h[OUT_WT].f.resize(static_cast<size_t>(s.n * s.out));
                        ref::linear_forward_wt<double>(s, h[OUT_WT].f.data(), h[IN].f.data(), h[WT].f.data(),
                                                       s.bias ? h[B].f.data() : nullptr);
                      }};
  c.passes.insert(c.passes.begin() + 1, std::move(forward_wt));  // after the forward pass
  return c;
}

OpCase conv_case(const ops::Conv2dShape& s) {
  static const LayerOps<ops::Conv2dShape> kOps = {
      ops::conv2d_forward,         ops::conv2d_backward_input,         ops::conv2d_backward_weight,
      ref::conv2d_forward<double>, ref::conv2d_backward_input<double>, ref::conv2d_backward_weight<double>};
  const bool plain = s.groups == 1 && s.format == MemoryFormat::NCHW;
  OpCase c = layer_case(s, kOps, {s.n * s.c * s.h * s.w, s.k * s.cg() * s.r * s.s, s.n * s.k * s.oh() * s.ow(), s.k},
                        s.act == Activation::ReLU ? "conv2d+relu" : "conv2d",
                        fmt::format("n={} c={} {}x{} k={} {}x{} stride={} pad={}{}{}", s.n, s.c, s.h, s.w, s.k, s.r,
                                    s.s, s.stride, s.pad, s.bias ? "" : " nobias",
                                    plain ? "" : fmt::format(" groups={} {}", s.groups, to_string(s.format))));
  return c;
}

// ---- MaxPool2d -----------------------------------------------------------------
OpCase pool_case(const ops::Pool2dShape& s, const std::string& op) {
  enum { IN, OUT, ARG, DOUT, ARG_REF, DIN };
  const int64_t ni = s.n * s.c * s.h * s.w, no = s.n * s.c * s.oh() * s.ow();
  const DType t = s.dtype;
  OpCase c;
  c.op = op;
  c.shape = fmt::format("n={} c={} {}x{} kernel={} stride={}", s.n, s.c, s.h, s.w, s.kernel, s.stride);
  if (s.pad != 0 || s.format != MemoryFormat::NCHW || t != DType::F32)
    c.shape += fmt::format(" pad={} {} {}", s.pad, to_string(s.format), to_string(t));
  c.bufs = {{"in", t, ni},   {"out", t, no, Role::Output},   {"argmax", DType::I32, no, Role::Output},
            {"dout", t, no}, {"argmax_ref", DType::I32, no}, {"din", t, ni, Role::Output}};
  auto fwd = [s, no](const HostBufs& h, std::vector<double>& y, std::vector<std::int32_t>& a) {
    y.resize(static_cast<size_t>(no));
    a.resize(static_cast<size_t>(no));
    ref::maxpool2d_forward<double>(s, y.data(), a.data(), h[IN].f.data());
  };
  c.fill = [=](Rng& r, HostBufs& h) {
    normal(r, h[IN], ni);
    round_to(t, h[IN]);  // the argmax of the values the backend sees (bf16 makes ties)
    normal(r, h[DOUT], no);
    std::vector<double> y;
    fwd(h, y, h[ARG_REF].i);
  };
  const PassCosts pc = s.cost();
  c.passes.push_back(
      {"forward",
       pc.forward,
       {IN},
       {OUT, ARG},
       [s](Context& ctx, const DevPtrs& p) { ops::maxpool2d_forward(ctx, s, P(p, OUT), I(p, ARG), P(p, IN)); },
       [=](HostBufs& h) { fwd(h, h[OUT].f, h[ARG].i); }});
  c.passes.push_back(
      {"input-grad",
       pc.input_grad,
       {DOUT, ARG_REF},
       {DIN},
       [s](Context& ctx, const DevPtrs& p) { ops::maxpool2d_backward(ctx, s, P(p, DIN), P(p, DOUT), I(p, ARG_REF)); },
       [=](HostBufs& h) {
         h[DIN].f.assign(static_cast<size_t>(ni), 0.0);
         ref::maxpool2d_backward<double>(s, h[DIN].f.data(), h[DOUT].f.data(), h[ARG_REF].i.data());
       }});
  c.grads.push_back({"in", IN,
                     [=](const HostBufs& h) {
                       std::vector<double> y;
                       std::vector<std::int32_t> a;
                       fwd(h, y, a);
                       return dot(y, h[DOUT].f);
                     },
                     [=](const HostBufs& h) {
                       std::vector<double> y, g(static_cast<size_t>(ni));
                       std::vector<std::int32_t> a;
                       fwd(h, y, a);
                       ref::maxpool2d_backward<double>(s, g.data(), h[DOUT].f.data(), a.data());
                       return g;
                     }});
  return c;
}

// ---- ReLU -----------------------------------------------------------------------
OpCase relu_case(int64_t n, DType t) {
  enum { IN, OUT, DOUT, YFWD, DIN };
  const ops::EltwiseShape s{n, Activation::ReLU, t};
  OpCase c;
  c.op = t == DType::F32 ? "relu" : "relu_lowp";
  c.shape = t == DType::F32 ? fmt::format("n={}", n) : fmt::format("n={} {}", n, to_string(t));
  c.bufs = {{"in", t, n}, {"out", t, n, Role::Output}, {"dout", t, n}, {"y", t, n}, {"din", t, n, Role::Output}};
  c.fill = [=](Rng& r, HostBufs& h) {
    normal(r, h[IN], n);
    round_to(t, h[IN]);
    normal(r, h[DOUT], n);
    h[YFWD].f.resize(static_cast<size_t>(n));
    ref::activation_forward<double>(s, h[YFWD].f.data(), h[IN].f.data());
  };
  const PassCosts pc = s.cost();
  c.passes.push_back({"forward",
                      pc.forward,
                      {IN},
                      {OUT},
                      [s](Context& ctx, const DevPtrs& p) { ops::activation_forward(ctx, s, P(p, OUT), P(p, IN)); },
                      [=](HostBufs& h) { ref::activation_forward<double>(s, h[OUT].f.data(), h[IN].f.data()); }});
  c.passes.push_back(
      {"input-grad",
       pc.input_grad,
       {DOUT, YFWD},
       {DIN},
       [s](Context& ctx, const DevPtrs& p) { ops::activation_backward(ctx, s, P(p, DIN), P(p, DOUT), P(p, YFWD)); },
       [=](HostBufs& h) { ref::activation_backward<double>(s, h[DIN].f.data(), h[DOUT].f.data(), h[YFWD].f.data()); }});
  c.grads.push_back({"in", IN,
                     [=](const HostBufs& h) {
                       std::vector<double> y(static_cast<size_t>(n));
                       ref::activation_forward<double>(s, y.data(), h[IN].f.data());
                       return dot(y, h[DOUT].f);
                     },
                     [=](const HostBufs& h) {
                       std::vector<double> y(static_cast<size_t>(n)), g(static_cast<size_t>(n));
                       ref::activation_forward<double>(s, y.data(), h[IN].f.data());
                       ref::activation_backward<double>(s, g.data(), h[DOUT].f.data(), y.data());
                       return g;
                     }});
  return c;
}

namespace {

// ---- Softmax and log-softmax ----------------------------------------------------
OpCase softmax_case(const ops::RowsShape& s, bool log) {
  enum { IN, OUT, DOUT, YFWD, DIN };
  const int64_t n = s.rows * s.cols;
  using Fn = void (*)(const ops::RowsShape&, double*, const double*);
  using Bn = void (*)(const ops::RowsShape&, double*, const double*, const double*);
  Fn f = log ? &ref::log_softmax_forward<double> : &ref::softmax_forward<double>;
  Bn b = log ? &ref::log_softmax_backward<double> : &ref::softmax_backward<double>;
  OpCase c;
  c.op = log ? "log_softmax" : "softmax";
  c.shape = fmt::format("rows={} cols={}", s.rows, s.cols);
  c.bufs = {{"in", DType::F32, n},
            {"out", DType::F32, n, Role::Output},
            {"dout", DType::F32, n},
            {"y", DType::F32, n},
            {"din", DType::F32, n, Role::Output}};
  c.fill = [=](Rng& r, HostBufs& h) {
    normal(r, h[IN], n);
    for (auto& v : h[IN].f) v = rf(3.0 * v);  // spread logits so the rows are not near-uniform
    normal(r, h[DOUT], n);
    h[YFWD].f.resize(static_cast<size_t>(n));
    f(s, h[YFWD].f.data(), h[IN].f.data());
    round_all(h[YFWD]);
  };
  const PassCosts pc = log ? s.log_softmax_cost() : s.softmax_cost();
  c.passes.push_back({"forward",
                      pc.forward,
                      {IN},
                      {OUT},
                      [s, log](Context& ctx, const DevPtrs& p) {
                        if (log)
                          ops::log_softmax_forward(ctx, s, F(p, OUT), F(p, IN));
                        else
                          ops::softmax_forward(ctx, s, F(p, OUT), F(p, IN));
                      },
                      [=](HostBufs& h) { f(s, h[OUT].f.data(), h[IN].f.data()); }});
  c.passes.push_back({"input-grad",
                      pc.input_grad,
                      {DOUT, YFWD},
                      {DIN},
                      [s, log](Context& ctx, const DevPtrs& p) {
                        if (log)
                          ops::log_softmax_backward(ctx, s, F(p, DIN), F(p, DOUT), F(p, YFWD));
                        else
                          ops::softmax_backward(ctx, s, F(p, DIN), F(p, DOUT), F(p, YFWD));
                      },
                      [=](HostBufs& h) { b(s, h[DIN].f.data(), h[DOUT].f.data(), h[YFWD].f.data()); }});
  c.grads.push_back({"in", IN,
                     [=](const HostBufs& h) {
                       std::vector<double> y(static_cast<size_t>(n));
                       f(s, y.data(), h[IN].f.data());
                       return dot(y, h[DOUT].f);
                     },
                     [=](const HostBufs& h) {
                       std::vector<double> y(static_cast<size_t>(n)), g(static_cast<size_t>(n));
                       f(s, y.data(), h[IN].f.data());
                       b(s, g.data(), h[DOUT].f.data(), y.data());
                       return g;
                     }});
  for (auto& g : c.grads) g.eps = 1e-4;
  return c;
}

// ---- Fused activation mask + bias gradient -------------------------------------
OpCase bias_grad_case(const ops::BiasGradShape& s) {
  enum { DOUT, YFWD, DPRE, DB };
  const int64_t n = s.rows * s.cols;
  OpCase c;
  c.op = "relu+bias_grad";
  c.shape = fmt::format("rows={} cols={}", s.rows, s.cols);
  c.bufs = {{"dout", DType::F32, n},
            {"y", DType::F32, n},
            {"dpre", DType::F32, n, Role::Output},
            {"db", DType::F32, s.cols, Role::Output}};
  c.fill = [=](Rng& r, HostBufs& h) {
    normal(r, h[DOUT], n);
    normal(r, h[YFWD], n);
    for (auto& v : h[YFWD].f) v = v <= 0 ? 0.0 : v;  // a ReLU output: exact zeros where it was cut
  };
  c.passes.push_back({"input-grad",
                      s.cost().input_grad,
                      {DOUT, YFWD},
                      {DPRE, DB},
                      [s](Context& ctx, const DevPtrs& p) {
                        ops::activation_bias_backward(ctx, s, F(p, DPRE), F(p, DB), F(p, DOUT), F(p, YFWD));
                      },
                      [=](HostBufs& h) {
                        ref::activation_bias_backward<double>(s, h[DPRE].f.data(), h[DB].f.data(), h[DOUT].f.data(),
                                                              h[YFWD].f.data());
                      }});
  return c;
}

void labels(Rng& r, HostBuf& b, int64_t n, int64_t classes) {
  b.i.resize(static_cast<size_t>(n));
  for (auto& v : b.i) v = static_cast<std::int32_t>(r.below(static_cast<std::uint64_t>(classes)));
}

// ---- NLL loss --------------------------------------------------------------------
OpCase nll_case(const ops::RowsShape& s) {
  enum { LOGP, LAB, LOSS, DLOSS, DLOGP };
  const int64_t n = s.rows * s.cols;
  OpCase c;
  c.op = "nll_loss";
  c.shape = fmt::format("rows={} cols={}", s.rows, s.cols);
  c.bufs = {{"logp", DType::F32, n},
            {"labels", DType::I32, s.rows},
            {"loss", DType::F32, 1, Role::Output},
            {"dloss", DType::F32, 1},
            {"dlogp", DType::F32, n, Role::Output}};
  c.fill = [=](Rng& r, HostBufs& h) {
    normal(r, h[LOGP], n);
    labels(r, h[LAB], s.rows, s.cols);
    normal(r, h[DLOSS], 1);
  };
  const PassCosts pc = s.nll_cost();
  c.passes.push_back(
      {"forward",
       pc.forward,
       {LOGP, LAB},
       {LOSS},
       [s](Context& ctx, const DevPtrs& p) { ops::nll_loss_forward(ctx, s, F(p, LOSS), F(p, LOGP), I(p, LAB)); },
       [=](HostBufs& h) { ref::nll_loss_forward<double>(s, h[LOSS].f.data(), h[LOGP].f.data(), h[LAB].i.data()); }});
  // dloss travels as a host scalar: the run closure needs its value, so the
  // harness passes it through the host copy kept in the case.
  auto dloss_value = std::make_shared<float>(0.f);
  auto fill0 = c.fill;
  c.fill = [=](Rng& r, HostBufs& h) {
    fill0(r, h);
    *dloss_value = static_cast<float>(h[DLOSS].f[0]);
  };
  c.passes.push_back(
      {"input-grad",
       pc.input_grad,
       {LAB},
       {DLOGP},
       [s, dloss_value](Context& ctx, const DevPtrs& p) {
         ops::nll_loss_backward(ctx, s, F(p, DLOGP), I(p, LAB), *dloss_value);
       },
       [=](HostBufs& h) { ref::nll_loss_backward<double>(s, h[DLOGP].f.data(), h[LAB].i.data(), h[DLOSS].f[0]); }});
  c.grads.push_back({"logp", LOGP,
                     [=](const HostBufs& h) {
                       double l = 0;
                       ref::nll_loss_forward<double>(s, &l, h[LOGP].f.data(), h[LAB].i.data());
                       return l * h[DLOSS].f[0];
                     },
                     [=](const HostBufs& h) {
                       std::vector<double> g(static_cast<size_t>(n));
                       ref::nll_loss_backward<double>(s, g.data(), h[LAB].i.data(), h[DLOSS].f[0]);
                       return g;
                     }});
  for (auto& g : c.grads) g.eps = 1e-4;
  return c;
}

// ---- Fused cross-entropy with device statistics ------------------------------------
OpCase ce_case(const ops::RowsShape& s) {
  enum { LOGITS, LAB, DLOGITS, LOSS_SUM, CORRECT, STEP_LOSS, FIRST_BAD, STEP };
  const int64_t n = s.rows * s.cols;
  const int64_t steps = 4;
  OpCase c;
  c.op = "cross_entropy";
  c.shape = fmt::format("rows={} cols={}", s.rows, s.cols);
  c.bufs = {{"logits", DType::F32, n},
            {"labels", DType::I32, s.rows},
            {"dlogits", DType::F32, n, Role::Output},
            {"loss_sum", DType::F64, 1, Role::InOut},
            {"correct", DType::I32, 1, Role::InOut},
            {"step_loss", DType::F32, steps, Role::InOut},
            {"first_bad", DType::I32, 1, Role::InOut},
            {"step", DType::I32, 1}};
  c.fill = [=](Rng& r, HostBufs& h) {
    normal(r, h[LOGITS], n);
    for (auto& v : h[LOGITS].f) v = rf(3.0 * v);
    labels(r, h[LAB], s.rows, s.cols);
    h[LOSS_SUM].f = {static_cast<double>(r.uniform(0.f, 10.f))};
    h[CORRECT].i = {static_cast<std::int32_t>(r.below(100))};
    normal(r, h[STEP_LOSS], steps);
    h[FIRST_BAD].i = {1000};
    h[STEP].i = {static_cast<std::int32_t>(r.below(steps))};
  };
  const PassCosts pc = s.cross_entropy_cost();
  OpCost both = pc.forward + pc.input_grad;
  c.passes.push_back(
      {"forward+grad",
       both,
       {LOGITS, LAB, STEP},
       {DLOGITS, LOSS_SUM, CORRECT, STEP_LOSS, FIRST_BAD},
       [s](Context& ctx, const DevPtrs& p) {
         ops::LossStats st;
         st.loss_sum = D(p, LOSS_SUM);
         st.correct = I(p, CORRECT);
         st.step_loss = F(p, STEP_LOSS);
         st.first_bad_step = I(p, FIRST_BAD);
         st.step = I(p, STEP);
         ops::cross_entropy(ctx, s, F(p, DLOGITS), F(p, LOGITS), I(p, LAB), 1.0f / static_cast<float>(s.rows), st);
       },
       [=](HostBufs& h) {
         std::int64_t correct = 0;
         double total = ref::cross_entropy<double>(s, h[DLOGITS].f.data(), h[LOGITS].f.data(), h[LAB].i.data(),
                                                   1.0 / static_cast<double>(s.rows), &correct);
         h[LOSS_SUM].f[0] += total;
         h[CORRECT].i[0] += static_cast<std::int32_t>(correct);
         h[STEP_LOSS].f[static_cast<size_t>(h[STEP].i[0])] = total / static_cast<double>(s.rows);
       }});
  c.grads.push_back({"logits", LOGITS,
                     [=](const HostBufs& h) {
                       return ref::cross_entropy<double>(s, nullptr, h[LOGITS].f.data(), h[LAB].i.data(), 1.0, nullptr);
                     },
                     [=](const HostBufs& h) {
                       std::vector<double> g(static_cast<size_t>(n));
                       ref::cross_entropy<double>(s, g.data(), h[LOGITS].f.data(), h[LAB].i.data(), 1.0, nullptr);
                       return g;
                     }});
  for (auto& g : c.grads) g.eps = 1e-4;
  return c;
}

// ---- Batch gather with normalisation and resize ------------------------------------
OpCase gather_case(const ops::BatchShape& s, int64_t images, int64_t first, std::int32_t step) {
  enum { IMG, LAB, ORDER, STEP, X, Y };
  OpCase c;
  c.op = "gather_batch";
  c.shape = fmt::format("batch={} {}x{}->{}x{} first={} step={} stride={}", s.batch, s.in_h, s.in_w, s.out_h, s.out_w,
                        first, step, s.stride);
  const int64_t nx = s.batch * s.out_h * s.out_w;
  c.bufs = {{"images", DType::U8, images * s.in_h * s.in_w},
            {"labels", DType::U8, images},
            {"order", DType::I32, images},
            {"step", DType::I32, 1},
            {"x", DType::F32, nx, Role::Output},
            {"y", DType::I32, s.batch, Role::Output}};
  c.fill = [=](Rng& r, HostBufs& h) {
    h[IMG].u.resize(static_cast<size_t>(images * s.in_h * s.in_w));
    for (auto& v : h[IMG].u) v = static_cast<std::uint8_t>(r.below(256));
    h[LAB].u.resize(static_cast<size_t>(images));
    for (auto& v : h[LAB].u) v = static_cast<std::uint8_t>(r.below(10));
    h[ORDER].i = random_permutation(images, r);
    h[STEP].i = {step};
  };
  c.passes.push_back({"forward",
                      s.cost(),
                      {IMG, LAB, ORDER, STEP},
                      {X, Y},
                      [s, first](Context& ctx, const DevPtrs& p) {
                        ops::gather_batch(ctx, s, F(p, X), I(p, Y), U(p, IMG), U(p, LAB), I(p, ORDER), first,
                                          I(p, STEP));
                      },
                      [=](HostBufs& h) {
                        ref::gather_batch<double>(s, h[X].f.data(), h[Y].i.data(), h[IMG].u.data(), h[LAB].u.data(),
                                                  h[ORDER].i.data(), first, h[STEP].i[0]);
                      }});
  return c;
}

ops::Conv2dShape random_conv(Rng& r, Activation act) {
  for (;;) {
    ops::Conv2dShape s;
    s.n = pick(r, 1, 3);
    s.c = pick(r, 1, 6);  // channel and plane counts past the CPU kernels' blocks of 4
    s.k = pick(r, 1, 9);
    s.r = pick(r, 1, 7);
    s.s = r.below(3) == 0 ? pick(r, 1, 7) : s.r;
    s.stride = r.below(3) == 0 ? pick(r, 2, 3) : 1;
    s.pad = r.below(2) == 0 ? pick(r, 0, std::min(s.r, s.s) - 1) : 0;
    s.h = pick(r, 1, 24);  // rows wider than 16 lanes
    s.w = pick(r, 1, 24);
    s.bias = r.below(5) != 0;
    s.act = act;
    if (s.valid()) return s;
  }
}

}  // namespace

OpCase make_case(const std::string& op, Rng& r) {
  if (is_optim_op(op)) return optim_case(op, r);
  if (op == "linear" || op == "linear+relu") {
    const Activation a = op == "linear" ? Activation::None : Activation::ReLU;
    // One case in four is large enough for the fast path to split the GEMM across threads.
    if (r.below(4) == 0) return linear_case({pick(r, 100, 260), pick(r, 200, 800), pick(r, 100, 300), true, a});
    return linear_case({pick(r, 1, 70), pick(r, 1, 300), pick(r, 1, 130), r.below(5) != 0, a});
  }
  if (is_net_conv_op(op)) return net_conv_case(op, r);
  if (op == "conv2d") return conv_case(random_conv(r, Activation::None));
  if (op == "conv2d+relu") return conv_case(random_conv(r, Activation::ReLU));
  if (op == "maxpool2d") {
    ops::Pool2dShape s;
    s.n = pick(r, 1, 3);
    s.c = pick(r, 1, 5);
    s.kernel = pick(r, 1, 4);
    s.stride = pick(r, 1, 4);
    s.h = pick(r, s.kernel, 25);
    s.w = pick(r, s.kernel, 25);
    return pool_case(s, "maxpool2d");
  }
  if (op == "relu") return relu_case(pick(r, 1, 5000), DType::F32);
  if (op == "relu+bias_grad") return bias_grad_case({pick(r, 1, 300), pick(r, 1, 300), Activation::ReLU});
  if (op == "softmax" || op == "log_softmax")
    return softmax_case({pick(r, 1, 200), pick(r, 1, 40)}, op == "log_softmax");
  if (op == "nll_loss") return nll_case({pick(r, 1, 200), pick(r, 1, 40)});
  if (op == "cross_entropy") return ce_case({pick(r, 1, 300), pick(r, 1, 40)});
  if (op == "sgd") return sgd_case(pick(r, 1, 20000), random_sgd(r));
  if (op == "linear_weight_sgd")
    return linear_weight_sgd_case({pick(r, 1, 70), pick(r, 1, 300), pick(r, 1, 130), r.below(5) != 0}, random_sgd(r));
  if (is_cnn_op(op)) return cnn_case(op, r);
  if (is_transformer_op(op)) return transformer_case(op, r);
  if (op == "gather_batch") {
    ops::BatchShape s;
    s.batch = r.below(4) == 0 ? pick(r, 40, 80) : pick(r, 1, 20);  // large enough for threads one time in four
    s.in_h = pick(r, 1, 30);
    s.in_w = pick(r, 1, 30);
    const bool resize = r.below(2) == 0;
    if (!resize && r.below(2) == 0) s.in_w = 4 * pick(r, 1, 7);  // images of a multiple of 4 pixels: the GPU's 4-a-thread path
    s.out_h = resize ? pick(r, 1, 50) : s.in_h;
    s.out_w = resize ? pick(r, 1, 50) : s.in_w;
    s.mean = r.uniform(0.f, 0.5f);
    s.inv_std = 1.0f / r.uniform(0.2f, 0.5f);
    s.stride = s.batch + static_cast<int64_t>(r.below(5));
    const auto step = static_cast<std::int32_t>(r.below(3));
    const int64_t first = pick(r, 0, 7);
    return gather_case(s, first + step * s.stride + s.batch + static_cast<int64_t>(r.below(10)), first, step);
  }
  throw_usage(fmt::format("unknown op '{}'", op), "see roofline ops --list");
}

std::vector<OpCase> model_check_cases(const std::string& op, std::int64_t batch) {
  return is_net_conv_op(op) ? net_conv_check_cases(op, batch) : perf_cases(op, batch);
}

std::vector<OpCase> perf_cases(const std::string& op, std::int64_t B) {
  if (is_optim_op(op)) return optim_perf_cases(op, B);
  std::vector<OpCase> v;
  auto conv = [B](int64_t c, int64_t h, int64_t k, int64_t r, Activation a) {
    ops::Conv2dShape s;
    s.n = B;
    s.c = c;
    s.h = s.w = h;
    s.k = k;
    s.r = s.s = r;
    s.act = a;
    return s;
  };
  auto pool_case_f32 = [](const ops::Pool2dShape& s) { return pool_case(s, "maxpool2d"); };
  auto pool = [B](int64_t c, int64_t h, int64_t k) {
    ops::Pool2dShape s;
    s.n = B;
    s.c = c;
    s.h = s.w = h;
    s.kernel = s.stride = k;
    return s;
  };
  if (op == "linear" || op == "linear+relu") {
    const Activation a = op == "linear" ? Activation::None : Activation::ReLU;
    for (auto [in, out] :
         {std::pair<int64_t, int64_t>{784, 256}, {256, 128}, {128, 10}, {16, 100}, {100, 10}, {1024, 32}, {32, 10}})
      v.push_back(linear_case({B, in, out, true, a}));
  } else if (op == "conv2d" || op == "conv2d+relu") {
    const Activation a = op == "conv2d" ? Activation::None : Activation::ReLU;
    v.push_back(conv_case(conv(1, 28, 1, 5, a)));   // simple-cnn conv1
    v.push_back(conv_case(conv(1, 12, 1, 5, a)));   // simple-cnn conv2
    v.push_back(conv_case(conv(1, 86, 4, 7, a)));   // ece408 conv1
    v.push_back(conv_case(conv(4, 40, 16, 7, a)));  // ece408 conv2
  } else if (is_net_conv_op(op)) {
    v = net_conv_perf_cases(op, B);
  } else if (op == "maxpool2d") {
    v.push_back(pool_case_f32(pool(1, 24, 2)));
    v.push_back(pool_case_f32(pool(1, 8, 2)));
    v.push_back(pool_case_f32(pool(4, 80, 2)));
    v.push_back(pool_case_f32(pool(16, 34, 4)));
  } else if (op == "relu") {
    v.push_back(relu_case(B * 256, DType::F32));
  } else if (op == "relu+bias_grad") {
    v.push_back(bias_grad_case({B, 256, Activation::ReLU}));
    v.push_back(bias_grad_case({B, 10, Activation::ReLU}));
  } else if (op == "softmax" || op == "log_softmax") {
    v.push_back(softmax_case({B, 10}, op == "log_softmax"));
  } else if (op == "nll_loss") {
    v.push_back(nll_case({B, 10}));
  } else if (op == "cross_entropy") {
    v.push_back(ce_case({B, 10}));
  } else if (op == "sgd") {
    v.push_back(sgd_case(235146, {0.01f, 0.9f, 0.f}));  // simple-mlp's parameters
  } else if (op == "linear_weight_sgd") {
    for (auto [in, out] : {std::pair<int64_t, int64_t>{784, 256}, {256, 128}, {128, 10}, {1024, 32}})
      v.push_back(linear_weight_sgd_case({B, in, out, true}, {0.01f, 0.9f, 0.f}));
  } else if (is_cnn_op(op)) {
    v = cnn_perf_cases(op, B);
  } else if (is_transformer_op(op)) {
    v = transformer_perf_cases(op, B);
  } else if (op == "gather_batch") {
    ops::BatchShape s{B, 28, 28, 28, 28, 0.286f, 1 / 0.353f, B};
    v.push_back(gather_case(s, 60000, 0, 0));
    s.out_h = s.out_w = 86;
    v.push_back(gather_case(s, 60000, 0, 0));
  } else {
    throw_usage(fmt::format("unknown op '{}'", op), "see roofline ops --list");
  }
  return v;
}

}  // namespace roofline::engine::harness

// Convolutions on oneDNN (dnnl_conv.hpp): one plan per (shape, pass, thread
// count) and calling thread, holding the primitive, its scratchpad, and the
// reorders and buffers it needs around it.
#include "src/engine/cpu/dnnl_conv.hpp"

#include <array>
#include <atomic>
#include <map>
#include <memory>
#include <oneapi/dnnl/dnnl.hpp>
#include <optional>
#include <vector>

#include "roofline/core/error.hpp"
#include "src/engine/cpu/dnnl_util.hpp"
#include "src/engine/cpu/parallel.hpp"

namespace roofline::engine::fast::onednn {

namespace dn = dnnl;
using std::int64_t;
using tag = dn::memory::format_tag;
using dt = dn::memory::data_type;

namespace {

// How a primitive is asked for: in the caller's plain layouts (no reorder), with
// the weights in oneDNN's layout, or everything in oneDNN's layouts.
enum class Layouts { Plain, AnyWeights, Any };

dn::memory::desc act_md(const ConvSpec& c, int64_t ch, int64_t h, int64_t w, bool any) {
  return {{c.s.n, ch, h, w}, dt::f32, any ? tag::any : (c.format == MemoryFormat::NHWC ? tag::nhwc : tag::nchw)};
}
dn::memory::desc weights_md(const ConvSpec& c, bool any) {
  const bool nhwc = c.format == MemoryFormat::NHWC;
  if (c.groups == 1) return {{c.s.k, c.s.c, c.s.r, c.s.s}, dt::f32, any ? tag::any : (nhwc ? tag::ohwi : tag::oihw)};
  const int64_t g = c.groups;
  return {{g, c.s.k / g, c.s.c / g, c.s.r, c.s.s}, dt::f32, any ? tag::any : (nhwc ? tag::gohwi : tag::goihw)};
}

struct Geometry {
  dn::memory::dims strides, pad_l, pad_r;
};
Geometry geometry(const ConvSpec& c) {
  // Symmetric padding: oneDNN divides (h + pad_l + pad_r − r) by the stride as
  // ops::Conv2dShape::oh() does, so rows past the last window are never read.
  return {{c.s.stride, c.s.stride}, {c.s.pad, c.s.pad}, {c.s.pad, c.s.pad}};
}

dn::convolution_forward::primitive_desc forward_pd(const ConvSpec& c, Layouts l, bool bias, bool relu) {
  const Geometry g = geometry(c);
  const bool any_acts = l == Layouts::Any, any_w = l != Layouts::Plain;
  const auto src = act_md(c, c.s.c, c.s.h, c.s.w, any_acts), dst = act_md(c, c.s.k, c.s.oh(), c.s.ow(), any_acts);
  const auto wei = weights_md(c, any_w);
  const dn::memory::desc bmd({c.s.k}, dt::f32, tag::x);
  dn::primitive_attr attr;
  attr.set_scratchpad_mode(dn::scratchpad_mode::user);
  if (relu) {
    dn::post_ops po;
    po.append_eltwise(1.f, dn::algorithm::eltwise_relu, 0.f, 0.f);
    attr.set_post_ops(po);
  }
  const auto d = bias ? dn::convolution_forward::desc(dn::prop_kind::forward_training, dn::algorithm::convolution_direct,
                                                      src, wei, bmd, dst, g.strides, g.pad_l, g.pad_r)
                      : dn::convolution_forward::desc(dn::prop_kind::forward_training, dn::algorithm::convolution_direct,
                                                      src, wei, dst, g.strides, g.pad_l, g.pad_r);
  return {d, attr, cpu_engine()};
}

// The first of Plain, AnyWeights, Any whose implementation is a JIT one (Any
// regardless): oneDNN's reference and im2col-GEMM convolutions take plain
// layouts but run far slower than its JIT ones on blocked layouts.
template <class MakePd>
auto first_fast(MakePd make) {
  for (Layouts l : {Layouts::Plain, Layouts::AnyWeights}) {
    try {
      auto pd = make(l);
      if (is_fast_impl(pd.impl_info_str())) return pd;
    } catch (const dn::error&) {  // no implementation for these layouts: the next ones
    }
  }
  return make(Layouts::Any);
}

// oneDNN 2.6's AVX-512 1x1 weight gradient at stride > 1 (its "reduce to unit
// stride" path, nhwc or blocked) writes past its buffers with 2 or 4 OpenMP
// threads: heap corruption at 72 of 480 small shapes (N 1-4, C 3/8/12),
// none with 1 or 3 threads, none on its AVX2 kernel, none in the forward or
// input-gradient passes. Its next implementation, the general JIT kernel,
// computes the same pass and corrupted none of them (docs/perf-notes/
// cpu-onednn.md, "A oneDNN bug").
bool skips_impl(const ConvSpec& c, Pass p, const std::string& impl) {
  return p == Pass::WeightGrad && c.s.stride > 1 && c.s.r == 1 && c.s.s == 1 && impl.rfind("jit_1x1:avx512", 0) == 0;
}
template <class Pd>
Pd& past_skipped(Pd& pd, const ConvSpec& c, Pass p) {
  while (skips_impl(c, p, pd.impl_info_str()))
    if (!pd.next_impl())
      throw Error(ErrorKind::Internal, std::string("oneDNN offers only ") + pd.impl_info_str() +
                                           " for this strided 1x1 weight gradient, which corrupts memory",
                  "run with OMP_NUM_THREADS=1 (that kernel is safe on one thread), and report the oneDNN version");
  return pd;
}

// A plan: the primitive, its scratchpad, and for each operand the caller's
// memory (its pointer set per call) and, where the primitive's layout differs,
// a buffer in that layout with the reorder into (inputs) or out of (outputs) it.
struct Plan {
  dn::primitive prim;
  dn::memory scratch;
  std::string impl;
  std::vector<Operand> ops;  // in argument order; dnnl_util.hpp
};

using Key = std::array<int64_t, 16>;
Key key_of(const ConvSpec& c, Pass p, bool bias, bool relu) {
  const ops::Conv2dShape& s = c.s;
  return {s.n, s.c, s.h, s.w, s.k, s.r, s.s, s.stride, s.pad, c.groups, static_cast<int64_t>(c.format),
          static_cast<int64_t>(p), bias, relu, max_threads(), 0};
}

thread_local std::map<Key, std::unique_ptr<Plan>> t_plans;

Plan& plan_for(const ConvSpec& c, Pass p, bool bias, bool relu) {
  const Key key = key_of(c, p, bias, relu);
  auto it = t_plans.find(key);
  if (it != t_plans.end()) return *it->second;
  auto plan = std::make_unique<Plan>();
  const bool nhwc = c.format == MemoryFormat::NHWC;
  const tag at = nhwc ? tag::nhwc : tag::nchw;
  const dn::memory::desc src_u({c.s.n, c.s.c, c.s.h, c.s.w}, dt::f32, at);
  const dn::memory::desc dst_u({c.s.n, c.s.k, c.s.oh(), c.s.ow()}, dt::f32, at);
  const dn::memory::desc wei_u = weights_md(c, false);
  const dn::memory::desc bias_u({c.s.k}, dt::f32, tag::x);
  const Geometry g = geometry(c);
  if (p == Pass::Forward) {
    auto pd = first_fast([&](Layouts l) { return forward_pd(c, l, bias, relu); });
    plan->prim = dn::convolution_forward(pd);
    plan->impl = pd.impl_info_str();
    plan->scratch = dn::memory(pd.scratchpad_desc(), cpu_engine());
    plan->ops.push_back(make_operand(DNNL_ARG_SRC, src_u, pd.src_desc(), false));
    plan->ops.push_back(make_operand(DNNL_ARG_WEIGHTS, wei_u, pd.weights_desc(), false));
    if (bias) plan->ops.push_back(make_operand(DNNL_ARG_BIAS, bias_u, pd.bias_desc(), false));
    plan->ops.push_back(make_operand(DNNL_ARG_DST, dst_u, pd.dst_desc(), true));
  } else if (p == Pass::InputGrad) {
    auto pd = first_fast([&](Layouts l) {
      const bool any_acts = l == Layouts::Any;
      const dn::convolution_backward_data::desc d(
          dn::algorithm::convolution_direct, act_md(c, c.s.c, c.s.h, c.s.w, any_acts), weights_md(c, l != Layouts::Plain),
          act_md(c, c.s.k, c.s.oh(), c.s.ow(), any_acts), g.strides, g.pad_l, g.pad_r);
      dn::primitive_attr attr;
      attr.set_scratchpad_mode(dn::scratchpad_mode::user);
      return dn::convolution_backward_data::primitive_desc(d, attr, cpu_engine(), forward_pd(c, l, false, false));
    });
    plan->prim = dn::convolution_backward_data(pd);
    plan->impl = pd.impl_info_str();
    plan->scratch = dn::memory(pd.scratchpad_desc(), cpu_engine());
    plan->ops.push_back(make_operand(DNNL_ARG_DIFF_DST, dst_u, pd.diff_dst_desc(), false));
    plan->ops.push_back(make_operand(DNNL_ARG_WEIGHTS, wei_u, pd.weights_desc(), false));
    plan->ops.push_back(make_operand(DNNL_ARG_DIFF_SRC, src_u, pd.diff_src_desc(), true));
  } else {
    auto pd = first_fast([&](Layouts l) {
      const bool any_acts = l == Layouts::Any;
      const auto src = act_md(c, c.s.c, c.s.h, c.s.w, any_acts), ddst = act_md(c, c.s.k, c.s.oh(), c.s.ow(), any_acts);
      const auto dw = weights_md(c, l != Layouts::Plain);
      const dn::memory::desc db({c.s.k}, dt::f32, tag::x);
      const auto d = bias ? dn::convolution_backward_weights::desc(dn::algorithm::convolution_direct, src, dw, db, ddst,
                                                                   g.strides, g.pad_l, g.pad_r)
                          : dn::convolution_backward_weights::desc(dn::algorithm::convolution_direct, src, dw, ddst,
                                                                   g.strides, g.pad_l, g.pad_r);
      dn::primitive_attr attr;
      attr.set_scratchpad_mode(dn::scratchpad_mode::user);
      // The hint outlives the pd's iterator, which keeps a pointer to it for next_impl().
      const auto hint = forward_pd(c, l, bias, false);
      dn::convolution_backward_weights::primitive_desc bw(d, attr, cpu_engine(), hint);
      return past_skipped(bw, c, Pass::WeightGrad);
    });
    plan->prim = dn::convolution_backward_weights(pd);
    plan->impl = pd.impl_info_str();
    plan->scratch = dn::memory(pd.scratchpad_desc(), cpu_engine());
    plan->ops.push_back(make_operand(DNNL_ARG_SRC, src_u, pd.src_desc(), false));
    plan->ops.push_back(make_operand(DNNL_ARG_DIFF_DST, dst_u, pd.diff_dst_desc(), false));
    plan->ops.push_back(make_operand(DNNL_ARG_DIFF_WEIGHTS, wei_u, pd.diff_weights_desc(), true));
    if (bias) plan->ops.push_back(make_operand(DNNL_ARG_DIFF_BIAS, bias_u, pd.diff_bias_desc(), true));
  }
  return *t_plans.emplace(key, std::move(plan)).first->second;
}

void run(Plan& plan, const std::vector<const void*>& ptrs, const char* what) {
  execute(plan.prim, plan.scratch, plan.ops, ptrs, what);
}

void check_spec(const ConvSpec& c) {
  if (c.groups < 1 || c.s.c % c.groups != 0 || c.s.k % c.groups != 0)
    throw Error(ErrorKind::Internal, "oneDNN convolution: groups (" + std::to_string(c.groups) +
                                         ") must divide the channels (" + std::to_string(c.s.c) + " in, " +
                                         std::to_string(c.s.k) + " out)",
                "check the shape before the call (ops::Conv2dShape::valid)");
}

}  // namespace

void conv2d_forward(const ConvSpec& c, float* out, const float* in, const float* w, const float* b) {
  const OneThreadInRegion solo;
  check_spec(c);
  const bool bias = c.s.bias && b != nullptr;
  Plan& plan = plan_for(c, Pass::Forward, bias, c.s.act == ops::Activation::ReLU);
  if (bias)
    run(plan, {in, w, b, out}, "convolution forward");
  else
    run(plan, {in, w, out}, "convolution forward");
}

void conv2d_backward_input(const ConvSpec& c, float* din, const float* dpre, const float* w) {
  const OneThreadInRegion solo;
  check_spec(c);
  run(plan_for(c, Pass::InputGrad, false, false), {dpre, w, din}, "convolution input gradient");
}

void conv2d_backward_weight(const ConvSpec& c, float* dw, float* db, const float* dpre, const float* in) {
  const OneThreadInRegion solo;
  check_spec(c);
  const bool bias = db != nullptr;
  Plan& plan = plan_for(c, Pass::WeightGrad, bias, false);
  if (bias)
    run(plan, {in, dpre, dw, db}, "convolution weight gradient");
  else
    run(plan, {in, dpre, dw}, "convolution weight gradient");
}

std::string conv_impl(const ConvSpec& c, Pass p) {
  const bool bias = p == Pass::InputGrad ? false : c.s.bias;
  const bool relu = p == Pass::Forward && c.s.act == ops::Activation::ReLU;
  auto it = t_plans.find(key_of(c, p, bias, relu));
  if (it == t_plans.end()) return {};
  return describe(it->second->impl, it->second->ops);
}

}  // namespace roofline::engine::fast::onednn

// ---- When oneDNN runs a pass ---------------------------------------------------

namespace roofline::engine::fast::onednn {

namespace {
std::atomic<Choice> g_choice{Choice::Rule};
}  // namespace

void set_choice_for_testing(Choice c) { g_choice.store(c, std::memory_order_relaxed); }

bool ours_takes(const ConvSpec& c) { return c.groups == 1 && c.format == MemoryFormat::NCHW; }

// The rule, from one thread's GFLOP/s of each pass on the development machine
// (AVX2; docs/perf-notes/cpu-onednn.md): oneDNN's JIT convolutions ran 5-15×
// our direct path at every padded or strided shape of AlexNet and ResNet-18,
// and 1.5-6× at 3×3 16→16 at 14×14. Our flattened-plane kernels (stride 1, no
// padding) won where the input has at most 4 channels (simple-cnn's 1→1 5×5,
// ece408's 1→4 and 4→16 7×7: 1.0-8× oneDNN's, whose blocked layouts pad 1 or
// 4 channels to 8 or 16) and lost from 8 channels up. Below one thread's worth
// of work (parallel.hpp's kFlopsPerThread) our tiles run on the calling thread
// where oneDNN would wake its whole team; inside a parallel region oneDNN runs
// on the calling thread too, so there the shape alone decides.
bool conv_prefers(const ConvSpec& c, Pass p) {
  (void)p;  // one rule for the three passes: they ranked alike at every shape measured
  if (!ours_takes(c)) return true;
  const Choice choice = g_choice.load(std::memory_order_relaxed);
  if (choice != Choice::Rule) return choice == Choice::Always;
  const ops::Conv2dShape& s = c.s;
  if (s.stride == 1 && s.pad == 0 && s.c <= 4) return false;
  const double flops = 2.0 * double(s.n) * double(s.k) * double(s.oh() * s.ow()) * double(s.c * s.r * s.s);
  return in_parallel() || flops >= kFlopsPerThread;
}

// Linear: oneDNN's matmul ran 1.0-1.7× our forward and 3-10× our input and
// weight gradients at AlexNet's classifier shapes and 1.1-1.4× at ResNet-18's
// 512→1000 (batch 1, 64, 128, one thread); at the small models' layers (at most
// 784×256 weights) the two were within ±30% either way, and those layers keep
// the row split and weight-row ownership tuned around our tiles.
bool linear_prefers(const ops::LinearShape& s, Pass p) {
  (void)p;
  const Choice choice = g_choice.load(std::memory_order_relaxed);
  if (choice != Choice::Rule) return choice == Choice::Always;
  return double(s.in) * double(s.out) >= double(1 << 18);
}

}  // namespace roofline::engine::fast::onednn

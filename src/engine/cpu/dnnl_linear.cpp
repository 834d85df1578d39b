// Linear layers on oneDNN's matmul (dnnl_conv.hpp): the three passes are
// products of the caller's plain matrices, transposes read through strides
// ("ba" layouts), so no operand is reordered or copied. The bias gradient is a
// fourth product, db (1, out) = ones (1, n) · dpre (n, out), over a row of ones
// kept with the plan.
#include <array>
#include <map>
#include <memory>
#include <oneapi/dnnl/dnnl.hpp>
#include <vector>

#include "src/engine/cpu/dnnl_conv.hpp"
#include "src/engine/cpu/dnnl_util.hpp"
#include "src/engine/cpu/parallel.hpp"

namespace roofline::engine::fast::onednn {

namespace dn = dnnl;
using std::int64_t;
using tag = dn::memory::format_tag;
using dt = dn::memory::data_type;

namespace {

struct MatmulPlan {
  dn::primitive prim;
  dn::memory scratch;
  std::vector<Operand> ops;
};

// C (m, n) = A (m, k) · B (k, n) [+ bias (1, n)] [then ReLU]; a_tag/b_tag: ab
// (row-major) or ba (the transpose of a row-major matrix, read in place).
std::unique_ptr<MatmulPlan> make_matmul(int64_t m, int64_t k, int64_t n, tag a_tag, tag b_tag, bool bias, bool relu) {
  const dn::memory::desc a({m, k}, dt::f32, a_tag), b({k, n}, dt::f32, b_tag), c({m, n}, dt::f32, tag::ab);
  const dn::memory::desc bmd({1, n}, dt::f32, tag::ab);
  dn::primitive_attr attr;
  attr.set_scratchpad_mode(dn::scratchpad_mode::user);
  if (relu) {
    dn::post_ops po;
    po.append_eltwise(1.f, dn::algorithm::eltwise_relu, 0.f, 0.f);
    attr.set_post_ops(po);
  }
  const auto d = bias ? dn::matmul::desc(a, b, bmd, c) : dn::matmul::desc(a, b, c);
  const dn::matmul::primitive_desc pd(d, attr, cpu_engine());
  auto p = std::make_unique<MatmulPlan>();
  p->prim = dn::matmul(pd);
  p->scratch = dn::memory(pd.scratchpad_desc(), cpu_engine());
  p->ops.push_back(make_operand(DNNL_ARG_SRC, a, pd.src_desc(), false));
  p->ops.push_back(make_operand(DNNL_ARG_WEIGHTS, b, pd.weights_desc(), false));
  if (bias) p->ops.push_back(make_operand(DNNL_ARG_BIAS, bmd, pd.bias_desc(), false));
  p->ops.push_back(make_operand(DNNL_ARG_DST, c, pd.dst_desc(), true));
  return p;
}

enum class Which : int64_t { Forward, ForwardWt, InputGrad, WeightGrad, BiasGrad };
using Key = std::array<int64_t, 7>;

struct Plans {
  std::map<Key, std::unique_ptr<MatmulPlan>> plans;
  std::map<int64_t, std::vector<float>> ones;  // (n) ones for the bias gradient
};
thread_local Plans t_linear;

MatmulPlan& plan(const ops::LinearShape& s, Which w, bool bias = false) {
  const bool relu = (w == Which::Forward || w == Which::ForwardWt) && s.act == ops::Activation::ReLU;
  const Key key{s.n, s.in, s.out, static_cast<int64_t>(w), bias, relu, max_threads()};

  auto it = t_linear.plans.find(key);
  if (it != t_linear.plans.end()) return *it->second;
  std::unique_ptr<MatmulPlan> p;
  switch (w) {
    case Which::Forward:  // out (n, out) = in (n, in) · wᵀ (in, out): w (out, in) read as "ba"
      p = make_matmul(s.n, s.in, s.out, tag::ab, tag::ba, bias, relu);
      break;
    case Which::ForwardWt:  // out (n, out) = in (n, in) · wt (in, out)
      p = make_matmul(s.n, s.in, s.out, tag::ab, tag::ab, bias, relu);
      break;
    case Which::InputGrad:  // din (n, in) = dpre (n, out) · w (out, in)
      p = make_matmul(s.n, s.out, s.in, tag::ab, tag::ab, false, false);
      break;
    case Which::WeightGrad:  // dw (out, in) = dpreᵀ (out, n) · in (n, in): dpre (n, out) read as "ba"
      p = make_matmul(s.out, s.n, s.in, tag::ba, tag::ab, false, false);
      break;
    case Which::BiasGrad:  // db (1, out) = ones (1, n) · dpre (n, out)
      p = make_matmul(1, s.n, s.out, tag::ab, tag::ab, false, false);
      break;
  }
  return *t_linear.plans.emplace(key, std::move(p)).first->second;
}

}  // namespace

void linear_forward(const ops::LinearShape& s, float* out, const float* in, const float* w, const float* b) {
  const OneThreadInRegion solo;
  const bool bias = s.bias && b != nullptr;
  MatmulPlan& p = plan(s, Which::Forward, bias);
  if (bias)
    execute(p.prim, p.scratch, p.ops, {in, w, b, out}, "Linear forward");
  else
    execute(p.prim, p.scratch, p.ops, {in, w, out}, "Linear forward");
}

void linear_forward_wt(const ops::LinearShape& s, float* out, const float* in, const float* wt, const float* b) {
  const OneThreadInRegion solo;
  const bool bias = s.bias && b != nullptr;
  MatmulPlan& p = plan(s, Which::ForwardWt, bias);
  if (bias)
    execute(p.prim, p.scratch, p.ops, {in, wt, b, out}, "Linear forward");
  else
    execute(p.prim, p.scratch, p.ops, {in, wt, out}, "Linear forward");
}

void linear_backward_input(const ops::LinearShape& s, float* din, const float* dpre, const float* w) {
  const OneThreadInRegion solo;
  MatmulPlan& p = plan(s, Which::InputGrad);
  execute(p.prim, p.scratch, p.ops, {dpre, w, din}, "Linear input gradient");
}

void linear_backward_weight(const ops::LinearShape& s, float* dw, float* db, const float* dpre, const float* in) {
  const OneThreadInRegion solo;
  MatmulPlan& p = plan(s, Which::WeightGrad);
  execute(p.prim, p.scratch, p.ops, {dpre, in, dw}, "Linear weight gradient");
  if (!db) return;
  std::vector<float>& ones = t_linear.ones[s.n];
  if (ones.empty()) ones.assign(static_cast<size_t>(s.n), 1.f);
  MatmulPlan& pb = plan(s, Which::BiasGrad);
  execute(pb.prim, pb.scratch, pb.ops, {ones.data(), dpre, db}, "Linear bias gradient");
}

}  // namespace roofline::engine::fast::onednn

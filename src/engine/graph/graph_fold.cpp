// BatchNorm folded into the convolution before it, for inference networks.
// With running statistics a BatchNorm2d is an affine map per channel,
// y = γ·(x − mean)/√(var + ε) + β, and x = W∗in + b is linear in W, so
//   y = W'∗in + b',  W'[k] = W[k]·s[k],  b'[k] = β[k] + (b[k] − mean[k])·s[k],
//   s[k] = γ[k]/√(var[k] + ε).
// The convolution then writes the BatchNorm's output directly (its bias and
// the BatchNorm's ReLU in its epilogue): the BatchNorm's pass over the
// activation, and the convolution's own output buffer, are gone. A BatchNorm
// that adds a residual (ResNet's block) keeps one element-wise pass: the add
// and its ReLU, in place on the convolution's output.
//
// The folded weights are computed on the host (in double, rounded once to the
// network's dtype) from the parameters and running statistics the network
// holds, by load_state and refresh_inference_weights(): an inference network
// reads its state when it is loaded. Nothing here runs inside a step, so a
// captured inference graph stays valid (it reads the same buffers).
#include "src/engine/graph/graph_fold.hpp"

#include <cmath>

#include "roofline/core/error.hpp"
#include "roofline/engine/graph_network.hpp"
#include "roofline/engine/half.hpp"
#include "roofline/engine/ops_cnn.hpp"

namespace roofline::engine {

std::vector<int> batchnorm_folds(const LayerGraph& g) {
  const auto& nodes = g.nodes();
  std::vector<int> out(nodes.size(), -1);
  for (size_t i = 0; i < nodes.size(); ++i) {
    const GraphNode& n = nodes[i];
    if (n.op != NodeOp::Conv2d || n.act != ops::Activation::None || n.output == g.output()) continue;
    const auto& consumers = g.values()[static_cast<size_t>(n.output)].consumers;
    if (consumers.size() != 1) continue;  // read elsewhere too (or as the BatchNorm's residual as well)
    const int j = consumers[0];
    const GraphNode& bn = nodes[static_cast<size_t>(j)];
    if (bn.op != NodeOp::BatchNorm2d || bn.inputs[0] != n.output) continue;
    out[i] = j;
    out[static_cast<size_t>(j)] = static_cast<int>(i);
  }
  return out;
}

namespace {

bool has_residual(const GraphNode& bn) { return bn.inputs.size() > 1; }

// The convolution a folded pair runs: with a bias, and with the BatchNorm's
// ReLU unless a residual comes between.
ops::Conv2dShape folded_conv_shape(const GraphNode& conv, const GraphNode& bn, const Shape& in, std::int64_t n,
                                   MemoryFormat format, DType dtype, bool tf32) {
  ops::Conv2dShape s = conv_shape(conv, in, n, format, dtype, tf32);
  s.bias = true;
  s.act = has_residual(bn) ? ops::Activation::None : bn.act;
  return s;
}

}  // namespace

std::vector<OpCost> inference_node_costs(const LayerGraph& g, std::int64_t batch, DType dtype, bool fold) {
  const auto& nodes = g.nodes();
  const std::vector<int> folds = fold ? batchnorm_folds(g) : std::vector<int>(nodes.size(), -1);
  const std::vector<NodeInfo> info = g.describe(batch, dtype);
  std::vector<OpCost> out(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    const GraphNode& n = nodes[i];
    const Shape& in = g.values()[static_cast<size_t>(n.inputs[0])].shape;
    if (folds[i] >= 0 && n.op == NodeOp::Conv2d) {
      const GraphNode& bn = nodes[static_cast<size_t>(folds[i])];
      out[i] = folded_conv_shape(n, bn, in, batch, MemoryFormat::NCHW, dtype, false).cost().forward;
    } else if (folds[i] >= 0) {  // the BatchNorm of a folded pair: its residual add, if any
      if (has_residual(n)) out[i] = ops::add_cost({batch * numel(in), n.act, dtype}).forward;
    } else if (n.op == NodeOp::BatchNorm2d) {
      out[i] = batchnorm_shape(n, in, batch, MemoryFormat::NCHW, dtype).eval_cost();
    } else if (n.op != NodeOp::Dropout) {  // an inference network's dropout is a view
      out[i] = info[i].cost.forward;
    }
  }
  return out;
}

OpCost inference_cost(const LayerGraph& g, std::int64_t batch, DType dtype, bool fold) {
  OpCost total;
  for (const OpCost& c : inference_node_costs(g, batch, dtype, fold)) total += c;
  return total;
}

void GraphNetwork::make_fold() {
  if (opt_.training || !opt_.fold_batchnorm) return;
  auto f = std::make_unique<Fold>();
  f->partner = batchnorm_folds(graph_);
  const auto& nodes = graph_.nodes();
  f->w_off.assign(nodes.size(), -1);
  f->b_off.assign(nodes.size(), -1);
  std::int64_t w = 0, b = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const GraphNode& n = nodes[i];
    if (f->partner[i] < 0 || n.op != NodeOp::Conv2d) continue;
    f->w_off[i] = w;
    f->b_off[i] = b;
    w += (numel(graph_.params()[static_cast<size_t>(n.params[0])].shape) + 63) / 64 * 64;
    b += (n.k + 63) / 64 * 64;
    ++f->count;
  }
  if (f->count == 0) return;
  f->weights = ctx_.empty({w}, dtype_, "batch-norm-folded weights");
  f->bias = ctx_.empty({b}, DType::F32, "batch-norm-folded biases");
  memory_.copies += f->weights.nbytes() + f->bias.nbytes();
  fold_ = std::move(f);
}

int GraphNetwork::folded_batchnorms() const { return fold_ ? fold_->count : 0; }

bool GraphNetwork::folded(size_t node) const { return fold_ && fold_->partner[node] >= 0; }

void GraphNetwork::refresh_inference_weights() { fold_weights(); }

// From the parameters and statistics on the device, in their stored layouts
// (weights with the output channel outermost in KCRS and KRSC alike).
void GraphNetwork::fold_weights() {
  if (!fold_) return;
  ctx_.synchronize();
  const std::vector<float> learn = params_.to_floats(), bufs = state_.to_floats();
  std::vector<float> w(static_cast<size_t>(fold_->weights.numel()), 0.0f),
      b(static_cast<size_t>(fold_->bias.numel()), 0.0f);
  const auto& nodes = graph_.nodes();
  const auto at = [&](const std::vector<float>& v, int p) { return v.data() + param_off_[static_cast<size_t>(p)]; };
  for (size_t i = 0; i < nodes.size(); ++i) {
    const GraphNode& conv = nodes[i];
    if (fold_->partner[i] < 0 || conv.op != NodeOp::Conv2d) continue;
    const GraphNode& bn = nodes[static_cast<size_t>(fold_->partner[i])];
    const float* weight = at(learn, conv.params[0]);
    const float* conv_bias = conv.bias ? at(learn, conv.params[1]) : nullptr;
    const float *gamma = at(learn, bn.params[0]), *beta = at(learn, bn.params[1]);
    const float *mean = at(bufs, bn.params[2]), *var = at(bufs, bn.params[3]);
    const std::int64_t row = numel(graph_.params()[static_cast<size_t>(conv.params[0])].shape) / conv.k;
    for (std::int64_t k = 0; k < conv.k; ++k) {
      const double s = static_cast<double>(gamma[k]) / std::sqrt(static_cast<double>(var[k]) + bn.eps);
      for (std::int64_t e = 0; e < row; ++e)
        w[static_cast<size_t>(fold_->w_off[i] + k * row + e)] = static_cast<float>(weight[k * row + e] * s);
      const double bk = conv_bias ? conv_bias[k] : 0.0;
      b[static_cast<size_t>(fold_->b_off[i] + k)] = static_cast<float>(beta[k] + (bk - mean[k]) * s);
    }
  }
  if (dtype_ == DType::F32) {
    copy_bytes(fold_->weights.raw(), fold_->weights.device(), w.data(), Device::cpu(), w.size() * 4);
  } else {
    std::vector<std::uint16_t> h(w.size());
    for (size_t i = 0; i < w.size(); ++i) h[i] = dtype_ == DType::BF16 ? bf16_from_float(w[i]) : f16_from_float(w[i]);
    copy_bytes(fold_->weights.raw(), fold_->weights.device(), h.data(), Device::cpu(), h.size() * 2);
  }
  copy_bytes(fold_->bias.raw(), fold_->bias.device(), b.data(), Device::cpu(), b.size() * 4);
  ctx_.synchronize();
}

// A folded pair's two nodes: the convolution writes the BatchNorm's output
// (the plan gives both values one buffer); the BatchNorm adds its residual.
void GraphNetwork::forward_folded(size_t i, std::int64_t batch) {
  const GraphNode& n = graph_.nodes()[i];
  const Shape& in = graph_.values()[static_cast<size_t>(n.inputs[0])].shape;
  if (n.op == NodeOp::Conv2d) {
    const GraphNode& bn = graph_.nodes()[static_cast<size_t>(fold_->partner[i])];
    ROOFLINE_ASSERT(act(n.output) == act(bn.output), "a folded convolution's output is its BatchNorm's");
    const auto s = folded_conv_shape(n, bn, in, batch, format_, dtype_, allows_tf32(opt_.precision));
    const void* w = static_cast<const char*>(fold_->weights.raw()) + fold_->w_off[i] * dtype_size(dtype_);
    ops::conv2d_forward(ctx_, s, act(n.output), act(n.inputs[0]), w, fold_->bias.f32() + fold_->b_off[i]);
    return;
  }
  if (has_residual(n))
    ops::add_forward(ctx_, {batch * numel(in), n.act, dtype_}, act(n.output), act(n.output), act(n.inputs[1]));
}

}  // namespace roofline::engine

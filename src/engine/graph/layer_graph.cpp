#include "roofline/engine/layer_graph.hpp"

#include <fmt/format.h>

#include <cmath>

#include "roofline/core/error.hpp"
#include "roofline/engine/rng.hpp"

namespace roofline::engine {

const char* to_string(NodeOp op) {
  switch (op) {
    case NodeOp::Conv2d:
      return "conv2d";
    case NodeOp::BatchNorm2d:
      return "batchnorm2d";
    case NodeOp::MaxPool2d:
      return "maxpool2d";
    case NodeOp::AdaptiveAvgPool2d:
      return "adaptive_avgpool2d";
    case NodeOp::Add:
      return "add";
    case NodeOp::ReLU:
      return "relu";
    case NodeOp::Flatten:
      return "flatten";
    case NodeOp::Dropout:
      return "dropout";
    case NodeOp::Linear:
      return "linear";
  }
  return "?";
}

namespace {

[[noreturn]] void shape_error(const std::string& model, const std::string& node, const std::string& what) {
  throw Error(ErrorKind::Usage, fmt::format("{}: layer '{}' {}", model, node, what),
              "check the input size: the layers of this model need a larger image");
}

std::int64_t pooled(std::int64_t size, std::int64_t kernel, std::int64_t stride, std::int64_t pad) {
  return (size + 2 * pad - kernel) / stride + 1;
}

}  // namespace

LayerGraph::LayerGraph(std::string name, Shape input, std::int64_t classes)
    : name_(std::move(name)), classes_(classes) {
  values_.push_back({std::move(input), -1, {}});
}

const Shape& LayerGraph::shape_of(int v) const {
  ROOFLINE_ASSERT(v >= 0 && v < static_cast<int>(values_.size()), "graph value out of range");
  return values_[static_cast<size_t>(v)].shape;
}

int LayerGraph::add_node(GraphNode node, Shape out_shape) {
  for (auto d : out_shape)
    if (d <= 0) shape_error(name_, node.name, fmt::format("would output {}", to_string(out_shape)));
  const int id = static_cast<int>(nodes_.size());
  const int out = static_cast<int>(values_.size());
  values_.push_back({std::move(out_shape), id, {}});
  for (int in : node.inputs) values_[static_cast<size_t>(in)].consumers.push_back(id);
  node.output = out;
  nodes_.push_back(std::move(node));
  return out;
}

int LayerGraph::add_param(const std::string& name, Shape shape, bool learnable, ParamInit init, std::int64_t fan_in,
                          std::int64_t fan_out) {
  params_.push_back({name, std::move(shape), learnable, init, fan_in, fan_out});
  return static_cast<int>(params_.size()) - 1;
}

int LayerGraph::conv2d(const std::string& name, int x, std::int64_t k, std::int64_t kernel, std::int64_t stride,
                       std::int64_t pad, bool bias, ops::Activation act, ParamInit init, std::int64_t groups) {
  const Shape& in = shape_of(x);
  if (in.size() != 3) shape_error(name_, name, fmt::format("needs a (c, h, w) input, got {}", to_string(in)));
  if (in[0] % groups || k % groups) shape_error(name_, name, "channels not divisible by groups");
  GraphNode n{name, NodeOp::Conv2d, {x}};
  n.act = act;
  n.k = k, n.kernel = kernel, n.stride = stride, n.pad = pad, n.groups = groups, n.bias = bias;
  const std::int64_t cg = in[0] / groups;
  const std::int64_t fan_in = cg * kernel * kernel, fan_out = k / groups * kernel * kernel;
  n.params.push_back(add_param(name + ".weight", {k, cg, kernel, kernel}, true, init, fan_in, fan_out));
  if (bias) n.params.push_back(add_param(name + ".bias", {k}, true, ParamInit::UniformFanIn, fan_in, fan_out));
  Shape out{k, pooled(in[1], kernel, stride, pad), pooled(in[2], kernel, stride, pad)};
  return add_node(std::move(n), std::move(out));
}

int LayerGraph::batchnorm2d(const std::string& name, int x, ops::Activation act, int residual) {
  const Shape& in = shape_of(x);
  if (in.size() != 3) shape_error(name_, name, fmt::format("needs a (c, h, w) input, got {}", to_string(in)));
  GraphNode n{name, NodeOp::BatchNorm2d, {x}};
  if (residual >= 0) {
    if (shape_of(residual) != in)
      shape_error(name_, name,
                  fmt::format("adds a residual of shape {} to {}", to_string(shape_of(residual)), to_string(in)));
    n.inputs.push_back(residual);
  }
  n.act = act;
  const std::int64_t c = in[0];
  n.params.push_back(add_param(name + ".weight", {c}, true, ParamInit::Ones, 0, 0));
  n.params.push_back(add_param(name + ".bias", {c}, true, ParamInit::Zeros, 0, 0));
  n.params.push_back(add_param(name + ".running_mean", {c}, false, ParamInit::Zeros, 0, 0));
  n.params.push_back(add_param(name + ".running_var", {c}, false, ParamInit::Ones, 0, 0));
  return add_node(std::move(n), in);
}

int LayerGraph::maxpool2d(const std::string& name, int x, std::int64_t kernel, std::int64_t stride, std::int64_t pad) {
  const Shape& in = shape_of(x);
  if (in.size() != 3) shape_error(name_, name, fmt::format("needs a (c, h, w) input, got {}", to_string(in)));
  GraphNode n{name, NodeOp::MaxPool2d, {x}};
  n.kernel = kernel, n.stride = stride, n.pad = pad;
  Shape out{in[0], pooled(in[1], kernel, stride, pad), pooled(in[2], kernel, stride, pad)};
  return add_node(std::move(n), std::move(out));
}

int LayerGraph::adaptive_avgpool2d(const std::string& name, int x, std::int64_t oh, std::int64_t ow) {
  const Shape& in = shape_of(x);
  if (in.size() != 3) shape_error(name_, name, fmt::format("needs a (c, h, w) input, got {}", to_string(in)));
  GraphNode n{name, NodeOp::AdaptiveAvgPool2d, {x}};
  n.oh = oh, n.ow = ow;
  return add_node(std::move(n), {in[0], oh, ow});
}

int LayerGraph::add(const std::string& name, int a, int b, ops::Activation act) {
  if (shape_of(a) != shape_of(b))
    shape_error(name_, name, fmt::format("adds {} and {}", to_string(shape_of(a)), to_string(shape_of(b))));
  GraphNode n{name, NodeOp::Add, {a, b}};
  n.act = act;
  return add_node(std::move(n), shape_of(a));
}

int LayerGraph::relu(const std::string& name, int x) {
  GraphNode n{name, NodeOp::ReLU, {x}};
  n.act = ops::Activation::ReLU;
  return add_node(std::move(n), shape_of(x));
}

int LayerGraph::flatten(const std::string& name, int x) {
  return add_node(GraphNode{name, NodeOp::Flatten, {x}}, {numel(shape_of(x))});
}

int LayerGraph::dropout(const std::string& name, int x, float p) {
  GraphNode n{name, NodeOp::Dropout, {x}};
  n.p = p;
  return add_node(std::move(n), shape_of(x));
}

int LayerGraph::linear(const std::string& name, int x, std::int64_t out, bool bias, ops::Activation act) {
  const Shape& in = shape_of(x);
  if (in.size() != 1) shape_error(name_, name, fmt::format("needs a flat input, got {}", to_string(in)));
  GraphNode n{name, NodeOp::Linear, {x}};
  n.k = out, n.bias = bias, n.act = act;
  n.params.push_back(add_param(name + ".weight", {out, in[0]}, true, ParamInit::UniformFanIn, in[0], out));
  if (bias) n.params.push_back(add_param(name + ".bias", {out}, true, ParamInit::UniformFanIn, in[0], out));
  return add_node(std::move(n), {out});
}

void LayerGraph::set_output(int v) {
  if (shape_of(v) != Shape{classes_})
    throw Error(ErrorKind::Internal, fmt::format("{}: output {} is not ({})", name_, to_string(shape_of(v)), classes_));
  output_ = v;
}

void LayerGraph::move_params_after(const std::string& prefix, const std::string& anchor) {
  const auto starts = [](const std::string& s, const std::string& p) { return s.rfind(p, 0) == 0; };
  std::vector<int> moved, order;  // order: new position -> old index
  for (size_t i = 0; i < params_.size(); ++i)
    if (starts(params_[i].name, prefix)) moved.push_back(static_cast<int>(i));
  int last_anchor = -1;
  for (size_t i = 0; i < params_.size(); ++i)
    if (starts(params_[i].name, anchor)) last_anchor = static_cast<int>(i);
  ROOFLINE_ASSERT(!moved.empty() && last_anchor >= 0, "move_params_after: nothing matches " + prefix + " / " + anchor);
  for (size_t i = 0; i < params_.size(); ++i) {
    if (!starts(params_[i].name, prefix)) order.push_back(static_cast<int>(i));
    if (static_cast<int>(i) == last_anchor) order.insert(order.end(), moved.begin(), moved.end());
  }
  std::vector<int> where(params_.size());
  std::vector<GraphParam> reordered;
  for (size_t k = 0; k < order.size(); ++k) {
    where[static_cast<size_t>(order[k])] = static_cast<int>(k);
    reordered.push_back(params_[static_cast<size_t>(order[k])]);
  }
  params_ = std::move(reordered);
  for (auto& n : nodes_)
    for (auto& p : n.params) p = where[static_cast<size_t>(p)];
}

std::int64_t LayerGraph::learnable_count() const {
  std::int64_t n = 0;
  for (const auto& p : params_)
    if (p.learnable) n += numel(p.shape);
  return n;
}

std::vector<std::vector<float>> LayerGraph::init_params(std::uint64_t seed) const {
  Rng root(seed);
  std::vector<std::vector<float>> out;
  out.reserve(params_.size());
  for (size_t i = 0; i < params_.size(); ++i) {
    const GraphParam& p = params_[i];
    std::vector<float> v(static_cast<size_t>(numel(p.shape)));
    Rng rng = root.fork(i);
    switch (p.init) {
      case ParamInit::UniformFanIn: {
        const float bound = 1.0f / std::sqrt(static_cast<float>(p.fan_in));
        for (auto& x : v) x = rng.uniform(-bound, bound);
        break;
      }
      case ParamInit::NormalFanOutRelu: {
        const float sd = std::sqrt(2.0f / static_cast<float>(p.fan_out));
        for (auto& x : v) x = sd * rng.normal();
        break;
      }
      case ParamInit::Ones:
        std::fill(v.begin(), v.end(), 1.0f);
        break;
      case ParamInit::Zeros:
        std::fill(v.begin(), v.end(), 0.0f);
        break;
    }
    out.push_back(std::move(v));
  }
  return out;
}

ops::Conv2dShape conv_shape(const GraphNode& node, const Shape& in, std::int64_t n, MemoryFormat format, DType dtype,
                            bool tf32) {
  ops::Conv2dShape s;
  s.n = n, s.c = in[0], s.h = in[1], s.w = in[2];
  s.k = node.k, s.r = node.kernel, s.s = node.kernel, s.stride = node.stride, s.pad = node.pad;
  s.bias = node.bias, s.act = node.act, s.groups = node.groups;
  s.format = format, s.dtype = dtype, s.tf32 = tf32;
  return s;
}

ops::LinearShape linear_shape(const GraphNode& node, const Shape& in, std::int64_t n, DType dtype, bool tf32) {
  ops::LinearShape s;
  s.n = n, s.in = in[0], s.out = node.k, s.bias = node.bias, s.act = node.act;
  s.dtype = dtype, s.tf32 = tf32;
  return s;
}

ops::BatchNormShape batchnorm_shape(const GraphNode& node, const Shape& in, std::int64_t n, MemoryFormat format,
                                    DType dtype) {
  ops::BatchNormShape s;
  s.n = n, s.c = in[0], s.h = in[1], s.w = in[2], s.format = format, s.dtype = dtype;
  s.eps = node.eps, s.momentum = node.momentum, s.act = node.act, s.residual = node.inputs.size() > 1;
  return s;
}

ops::Pool2dShape maxpool_shape(const GraphNode& node, const Shape& in, std::int64_t n, MemoryFormat format, DType dtype) {
  ops::Pool2dShape s;
  s.n = n, s.c = in[0], s.h = in[1], s.w = in[2], s.kernel = node.kernel, s.stride = node.stride, s.pad = node.pad;
  s.format = format, s.dtype = dtype;
  return s;
}

ops::AvgPoolShape avgpool_shape(const GraphNode& node, const Shape& in, std::int64_t n, MemoryFormat format,
                                DType dtype) {
  ops::AvgPoolShape s;
  s.n = n, s.c = in[0], s.h = in[1], s.w = in[2], s.oh = node.oh, s.ow = node.ow, s.format = format, s.dtype = dtype;
  return s;
}

std::vector<NodeInfo> LayerGraph::describe(std::int64_t batch, DType dtype) const {
  std::vector<NodeInfo> out;
  for (const GraphNode& node : nodes_) {
    NodeInfo info;
    info.name = node.name;
    info.op = to_string(node.op);
    info.in = shape_of(node.inputs[0]);
    info.out = shape_of(node.output);
    for (int p : node.params)
      if (params_[static_cast<size_t>(p)].learnable) info.params += numel(params_[static_cast<size_t>(p)].shape);
    const Shape& in = info.in;
    switch (node.op) {
      case NodeOp::Conv2d:
        info.cost = conv_shape(node, in, batch, MemoryFormat::NCHW, dtype, false).cost();
        break;
      case NodeOp::Linear:
        info.cost = linear_shape(node, in, batch, dtype, false).cost();
        break;
      case NodeOp::BatchNorm2d:
        info.cost = batchnorm_shape(node, in, batch, MemoryFormat::NCHW, dtype).cost();
        break;
      case NodeOp::MaxPool2d:
        info.cost = maxpool_shape(node, in, batch, MemoryFormat::NCHW, dtype).cost();
        break;
      case NodeOp::AdaptiveAvgPool2d:
        info.cost = avgpool_shape(node, in, batch, MemoryFormat::NCHW, dtype).cost();
        break;
      case NodeOp::Add:
      case NodeOp::ReLU: {
        ops::EltwiseShape s;
        s.n = batch * numel(in), s.act = node.act, s.dtype = dtype;
        info.cost = node.op == NodeOp::Add ? ops::add_cost(s) : s.cost();
        break;
      }
      case NodeOp::Dropout: {
        ops::DropoutShape s;
        s.n = batch * numel(in), s.p = node.p, s.dtype = dtype;
        info.cost = s.cost();
        break;
      }
      case NodeOp::Flatten:
        break;
    }
    out.push_back(std::move(info));
  }
  return out;
}

PassCosts LayerGraph::cost(std::int64_t batch, DType dtype) const {
  PassCosts total;
  for (const auto& i : describe(batch, dtype)) total += i.cost;
  return total;
}

}  // namespace roofline::engine

#include "roofline/engine/model.hpp"

#include <fmt/format.h>

#include "roofline/core/error.hpp"
#include "roofline/core/strings.hpp"

namespace roofline::engine {

namespace {

[[noreturn]] void not_a_chain(const LayerGraph& g, const GraphNode& n, const std::string& why) {
  throw Error(ErrorKind::Usage,
              fmt::format("{}: node {} ({}) {}: the Sequential engine runs chains of conv2d, maxpool2d, relu, "
                          "flatten and linear layers",
                          g.name(), n.name, to_string(n.op), why),
              "run this model on GraphNetwork (roofline bench names it as a network)");
}

std::unique_ptr<Layer> layer_of(const LayerGraph& g, const GraphNode& n, const Shape& in) {
  switch (n.op) {
    case NodeOp::Conv2d:
      if (n.groups != 1) not_a_chain(g, n, "is grouped");
      return make_conv2d(n.name, in[0], n.k, n.kernel, n.stride, n.pad, n.act, n.bias);
    case NodeOp::MaxPool2d:
      if (n.pad != 0) not_a_chain(g, n, "pads");
      return make_maxpool2d(n.name, n.kernel, n.stride);
    case NodeOp::ReLU:
      return make_activation(n.name, ops::Activation::ReLU);
    case NodeOp::Flatten:
      return make_flatten(n.name);
    case NodeOp::Linear:
      return make_linear(n.name, in[0], n.k, n.act, n.bias);
    default:
      not_a_chain(g, n, "has no Sequential layer");
  }
}

}  // namespace

Model::Model(LayerGraph graph)
    : graph_(std::move(graph)), name_(graph_.name()), input_(graph_.input_shape()), classes_(graph_.classes()) {
  description = graph_.description;
  shapes_.push_back(input_);
  int prev = graph_.input();
  for (const GraphNode& n : graph_.nodes()) {
    if (n.inputs.size() != 1 || n.inputs[0] != prev) not_a_chain(graph_, n, "does not read the node before it");
    if (graph_.values()[static_cast<size_t>(prev)].consumers.size() != 1)
      not_a_chain(graph_, n, "shares its input with another node");
    layers_.push_back(layer_of(graph_, n, shapes_.back()));
    shapes_.push_back(layers_.back()->output_shape(shapes_.back()));
    if (shapes_.back() != graph_.values()[static_cast<size_t>(n.output)].shape)
      throw Error(ErrorKind::Internal, fmt::format("{}: layer {} outputs {}, its graph node {}", name_, n.name,
                                                   to_string(shapes_.back()),
                                                   to_string(graph_.values()[static_cast<size_t>(n.output)].shape)));
    prev = n.output;
  }
  if (prev != graph_.output()) throw Error(ErrorKind::Internal, fmt::format("{}: the chain does not end in the logits", name_));
}

std::int64_t Model::param_count() const {
  std::int64_t n = 0;
  for (const auto& l : layers_) n += l->param_count();
  return n;
}

std::int64_t Model::learnable_count() const {
  std::int64_t n = 0;
  for (const auto& l : layers_) n += l->learnable_count();
  return n;
}

std::int64_t Model::param_offset(size_t layer) const {
  std::int64_t n = 0;
  for (size_t i = 0; i < layer && i < layers_.size(); ++i) n += layers_[i]->param_count();
  return n;
}

std::vector<std::int64_t> Model::tensor_offsets() const {
  std::vector<std::int64_t> off(graph_.params().size(), -1);
  const auto& nodes = graph_.nodes();
  for (size_t i = 0; i < nodes.size(); ++i) {
    const std::vector<int>& p = nodes[i].params;  // weight, then bias where it has one
    if (!p.empty()) off[static_cast<size_t>(p[0])] = param_offset(i);
    if (p.size() > 1) off[static_cast<size_t>(p[1])] = param_offset(i) + layers_[i]->bias_offset();
  }
  return off;
}

std::vector<float> Model::pack(const std::vector<std::vector<float>>& tensors) const {
  const auto& params = graph_.params();
  if (tensors.size() != params.size())
    throw_usage(fmt::format("{}: {} tensors given, the model has {}", name_, tensors.size(), params.size()),
                "give every tensor of the state_dict, in its order");
  std::vector<float> block(static_cast<size_t>(param_count()), 0.0f);  // padding stays 0
  const std::vector<std::int64_t> off = tensor_offsets();
  for (size_t t = 0; t < params.size(); ++t) {
    if (static_cast<std::int64_t>(tensors[t].size()) != numel(params[t].shape))
      throw_usage(fmt::format("{}: tensor {} has {} values, its shape {} needs {}", name_, params[t].name,
                              tensors[t].size(), to_string(params[t].shape), numel(params[t].shape)),
                  "give the tensor in the model's shape");
    std::copy(tensors[t].begin(), tensors[t].end(), block.begin() + off[t]);
  }
  return block;
}

std::vector<std::vector<float>> Model::unpack(const std::vector<float>& block) const {
  ROOFLINE_ASSERT(static_cast<std::int64_t>(block.size()) == param_count(), "parameter block of another size");
  const auto& params = graph_.params();
  const std::vector<std::int64_t> off = tensor_offsets();
  std::vector<std::vector<float>> out;
  for (size_t t = 0; t < params.size(); ++t)
    out.emplace_back(block.begin() + off[t], block.begin() + off[t] + numel(params[t].shape));
  return out;
}

std::vector<float> Model::init_params(std::uint64_t seed) const { return pack(graph_.init_params(seed)); }

std::vector<LayerInfo> Model::describe(std::int64_t batch) const {
  std::vector<LayerInfo> out;
  for (size_t i = 0; i < layers_.size(); ++i) {
    const Layer& l = *layers_[i];
    out.push_back({l.name(), l.op(), shapes_[i], shapes_[i + 1], l.learnable_count(), l.cost(batch, shapes_[i])});
  }
  return out;
}

PassCosts Model::cost(std::int64_t batch) const {
  PassCosts c;
  for (size_t i = 0; i < layers_.size(); ++i) c += layers_[i]->cost(batch, shapes_[i]);
  return c;
}

std::vector<std::string> model_names() { return small_model_names(); }

std::unique_ptr<Model> make_model(const std::string& name) {
  LayerGraph g = make_graph_model(name);  // unknown names fail here, naming the models
  if (is_network(g.name()))
    throw_usage(fmt::format("{} is a network, not one of the small models ({})", g.name(), join(model_names(), ", ")),
                "run it on GraphNetwork: roofline bench " + g.name());
  return std::make_unique<Model>(std::move(g));
}

}  // namespace roofline::engine

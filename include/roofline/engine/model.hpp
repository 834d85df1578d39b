// The Sequential engine's view of a model: a chain of layers ending in class
// logits (the loss, log-softmax + NLL, is the trainer's), built from the
// model's one definition, a LayerGraph (layer_graph.hpp), whose parameters it
// packs into one padded block so that a Network (network.hpp) runs the whole
// step with the fused fp32 paths of the small models.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "roofline/engine/layer.hpp"
#include "roofline/engine/layer_graph.hpp"

namespace roofline::engine {

struct LayerInfo {
  std::string name, op;
  Shape in, out;            // per sample
  std::int64_t params = 0;  // learnable parameters (no padding)
  PassCosts cost;           // for the batch asked for
};

class Model {
 public:
  // A chain of Conv2d (groups 1), MaxPool2d (no padding), ReLU, Flatten and
  // Linear nodes, each reading the one before; throws Error(Usage) naming the
  // first node that is not (a BatchNorm2d, a residual, ...): such a graph runs
  // on GraphNetwork only.
  explicit Model(LayerGraph graph);

  const LayerGraph& graph() const { return graph_; }

  const std::string& name() const { return name_; }
  const Shape& input_shape() const { return input_; }  // per sample, e.g. (1, 28, 28)
  std::int64_t classes() const { return classes_; }
  const std::vector<std::unique_ptr<Layer>>& layers() const { return layers_; }
  // Per-sample input shape of layer i (i == layers().size(): the logits).
  const Shape& shape_before(size_t i) const { return shapes_[i]; }
  std::int64_t param_count() const;               // floats of the parameter block (tensors padded to 256 bytes)
  std::int64_t learnable_count() const;           // the model's parameters, as torch counts them
  std::int64_t param_offset(size_t layer) const;  // where layer i's parameters start
  // Every parameter drawn from `seed` as the graph initialises them
  // (LayerGraph::init_params, torch's defaults), packed.
  std::vector<float> init_params(std::uint64_t seed) const;
  // Between the graph's state tensors (torch's layout, graph().params()
  // order) and the padded block; pack throws Error(Usage) naming a misshapen tensor.
  std::vector<float> pack(const std::vector<std::vector<float>>& tensors) const;
  std::vector<std::vector<float>> unpack(const std::vector<float>& block) const;
  std::vector<LayerInfo> describe(std::int64_t batch) const;
  PassCosts cost(std::int64_t batch) const;  // all layers (the loss and optimiser are separate)
  std::string description;                   // one line for people

 private:
  // Per graph param: its offset in the block.
  std::vector<std::int64_t> tensor_offsets() const;
  LayerGraph graph_;
  std::string name_;
  Shape input_;
  std::int64_t classes_;
  std::vector<std::unique_ptr<Layer>> layers_;
  std::vector<Shape> shapes_;  // shapes_[0] = input_
};

// The small models by name (small_model_names(): "simple-mlp", "simple-cnn",
// "ece408"). Throws Error(Usage) naming them for anything else (a network
// included: alexnet and resnet18 run on GraphNetwork).
std::unique_ptr<Model> make_model(const std::string& name);
std::vector<std::string> model_names();  // small_model_names()

}  // namespace roofline::engine

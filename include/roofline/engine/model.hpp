// Models: a named Sequential stack of layers ending in class logits (the
// loss, log-softmax + NLL, is the trainer's), and the registry of the models
// `roofline bench` knows by name.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "roofline/engine/layer.hpp"

namespace roofline::engine {

struct LayerInfo {
  std::string name, op;
  Shape in, out;            // per sample
  std::int64_t params = 0;  // learnable parameters (no padding)
  PassCosts cost;           // for the batch asked for
};

class Model {
 public:
  Model(std::string name, Shape input, std::int64_t classes)
      : name_(std::move(name)), input_(std::move(input)), classes_(classes) {}
  Model& add(std::unique_ptr<Layer> layer);  // checks that shapes chain

  const std::string& name() const { return name_; }
  const Shape& input_shape() const { return input_; }  // per sample, e.g. (1, 28, 28)
  std::int64_t classes() const { return classes_; }
  const std::vector<std::unique_ptr<Layer>>& layers() const { return layers_; }
  // Per-sample input shape of layer i (i == layers().size(): the logits).
  const Shape& shape_before(size_t i) const { return shapes_[i]; }
  std::int64_t param_count() const;               // floats of the parameter block (tensors padded to 256 bytes)
  std::int64_t learnable_count() const;           // the model's parameters, as torch counts them
  std::int64_t param_offset(size_t layer) const;  // where layer i's parameters start
  // Every parameter, layer by layer, drawn from `seed` (layer i from its own sub-stream).
  std::vector<float> init_params(std::uint64_t seed) const;
  std::vector<LayerInfo> describe(std::int64_t batch) const;
  PassCosts cost(std::int64_t batch) const;  // all layers (the loss and optimiser are separate)
  std::string description;                   // one line for people

 private:
  std::string name_;
  Shape input_;
  std::int64_t classes_;
  std::vector<std::unique_ptr<Layer>> layers_;
  std::vector<Shape> shapes_;  // shapes_[0] = input_
};

// The registry: "simple-mlp", "simple-cnn", "ece408". Throws Error(Usage)
// naming the known models for anything else.
std::unique_ptr<Model> make_model(const std::string& name);
std::vector<std::string> model_names();

}  // namespace roofline::engine

#include "roofline/engine/model.hpp"

#include <fmt/format.h>

#include "roofline/core/error.hpp"
#include "roofline/core/strings.hpp"

namespace roofline::engine {

Model& Model::add(std::unique_ptr<Layer> layer) {
  if (shapes_.empty()) shapes_.push_back(input_);
  shapes_.push_back(layer->output_shape(shapes_.back()));
  layers_.push_back(std::move(layer));
  return *this;
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

std::vector<float> Model::init_params(std::uint64_t seed) const {
  std::vector<float> p(static_cast<size_t>(param_count()), 0.0f);  // padding stays 0
  Rng base(seed);
  for (size_t i = 0; i < layers_.size(); ++i) {
    Rng r = base.fork(i);
    layers_[i]->init(r, p.data() + param_offset(i));
  }
  return p;
}

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

namespace {

using ops::Activation;

std::unique_ptr<Model> simple_mlp() {
  // Seed 000 §2.1.1: fc1 784→256, fc2 256→128, fc3 128→10, ReLU after each
  // (fc3 included), then softmax (here: log-softmax in the loss).
  auto m = std::make_unique<Model>("simple-mlp", Shape{1, 28, 28}, 10);
  m->add(make_flatten("flatten"))
      .add(make_linear("fc1", 784, 256, Activation::ReLU))
      .add(make_linear("fc2", 256, 128, Activation::ReLU))
      .add(make_linear("fc3", 128, 10, Activation::ReLU));
  m->description = "SimpleMLP (the course lab's MLP): 784→256→128→10, ReLU after every layer as in the lab";
  return m;
}

std::unique_ptr<Model> simple_cnn() {
  // Seed 000 §2.1.2: conv 1→1 5×5, maxpool 2, conv 1→1 5×5, maxpool 2, FC
  // 16→100 + ReLU, FC 100→10 (no activation after the convolutions).
  auto m = std::make_unique<Model>("simple-cnn", Shape{1, 28, 28}, 10);
  m->add(make_conv2d("conv1", 1, 1, 5))
      .add(make_maxpool2d("pool1", 2, 2))
      .add(make_conv2d("conv2", 1, 1, 5))
      .add(make_maxpool2d("pool2", 2, 2))
      .add(make_flatten("flatten"))
      .add(make_linear("fc1", 16, 100, Activation::ReLU))
      .add(make_linear("fc2", 100, 10));
  m->description = "SimpleCNN (the course lab's CNN): conv 1@5×5, pool 2, conv 1@5×5, pool 2, FC 16→100→10";
  return m;
}

std::unique_ptr<Model> ece408() {
  // ECE408 project network (seed 002, anchors.md): input resized to 1×86×86.
  auto m = std::make_unique<Model>("ece408", Shape{1, 86, 86}, 10);
  m->add(make_conv2d("conv1", 1, 4, 7, 1, 0, Activation::ReLU))
      .add(make_maxpool2d("pool1", 2, 2))
      .add(make_conv2d("conv2", 4, 16, 7, 1, 0, Activation::ReLU))
      .add(make_maxpool2d("pool2", 4, 4))
      .add(make_flatten("flatten"))
      .add(make_linear("fc1", 16 * 8 * 8, 32, Activation::ReLU))
      .add(make_linear("fc2", 32, 10));
  m->description = "ECE408 CNN: 1×86×86, conv 4@7×7+ReLU, pool 2, conv 16@7×7+ReLU, pool 4, FC 1024→32+ReLU→10";
  return m;
}

}  // namespace

std::vector<std::string> model_names() { return {"simple-mlp", "simple-cnn", "ece408"}; }

std::unique_ptr<Model> make_model(const std::string& name) {
  std::string n = to_lower(trim(name));
  if (n == "simple-mlp" || n == "mlp") return simple_mlp();
  if (n == "simple-cnn" || n == "cnn") return simple_cnn();
  if (n == "ece408") return ece408();
  throw_usage(fmt::format("unknown model '{}'", name), "known models: " + join(model_names(), ", "));
}

}  // namespace roofline::engine

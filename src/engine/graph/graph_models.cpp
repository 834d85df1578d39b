// Every model of the engine, defined once: the course lab's small models
// (seed 000 §2.1, seed 002's ECE408 network) and AlexNet and ResNet-18 as
// torchvision builds them (torchvision/models/alexnet.py and resnet.py): the
// same layers in the same order, the same module names (so parameters carry
// its state_dict names), the same initialisation.
#include <fmt/format.h>

#include "roofline/core/error.hpp"
#include "roofline/core/strings.hpp"
#include "roofline/engine/layer_graph.hpp"

namespace roofline::engine {

using ops::Activation;

// Seed 000 §2.1.1: fc1 784→256, fc2 256→128, fc3 128→10, ReLU after each
// (fc3 included, as the lab wrote it), then softmax (here: log-softmax in the loss).
LayerGraph make_simple_mlp() {
  LayerGraph g("simple-mlp", {1, 28, 28}, 10);
  g.description = "SimpleMLP (the course lab's MLP): 784→256→128→10, ReLU after every layer as in the lab";
  int x = g.flatten("flatten", g.input());
  x = g.linear("fc1", x, 256, true, Activation::ReLU);
  x = g.linear("fc2", x, 128, true, Activation::ReLU);
  x = g.linear("fc3", x, 10, true, Activation::ReLU);
  g.set_output(x);
  return g;
}

// Seed 000 §2.1.2: conv 1→1 5×5, maxpool 2, conv 1→1 5×5, maxpool 2, FC
// 16→100 + ReLU, FC 100→10 (no activation after the convolutions).
LayerGraph make_simple_cnn() {
  LayerGraph g("simple-cnn", {1, 28, 28}, 10);
  g.description = "SimpleCNN (the course lab's CNN): conv 1@5×5, pool 2, conv 1@5×5, pool 2, FC 16→100→10";
  int x = g.conv2d("conv1", g.input(), 1, 5, 1, 0, true);
  x = g.maxpool2d("pool1", x, 2, 2);
  x = g.conv2d("conv2", x, 1, 5, 1, 0, true);
  x = g.maxpool2d("pool2", x, 2, 2);
  x = g.flatten("flatten", x);
  x = g.linear("fc1", x, 100, true, Activation::ReLU);
  x = g.linear("fc2", x, 10);
  g.set_output(x);
  return g;
}

// The ECE408 project network (seed 002, anchors.md), its input resized to 1×86×86.
LayerGraph make_ece408() {
  LayerGraph g("ece408", {1, 86, 86}, 10);
  g.description = "ECE408 CNN: 1×86×86, conv 4@7×7+ReLU, pool 2, conv 16@7×7+ReLU, pool 4, FC 1024→32+ReLU→10";
  int x = g.conv2d("conv1", g.input(), 4, 7, 1, 0, true, Activation::ReLU);
  x = g.maxpool2d("pool1", x, 2, 2);
  x = g.conv2d("conv2", x, 16, 7, 1, 0, true, Activation::ReLU);
  x = g.maxpool2d("pool2", x, 4, 4);
  x = g.flatten("flatten", x);
  x = g.linear("fc1", x, 32, true, Activation::ReLU);
  x = g.linear("fc2", x, 10);
  g.set_output(x);
  return g;
}

LayerGraph make_alexnet(std::int64_t classes, Shape input, float dropout) {
  LayerGraph g("alexnet", std::move(input), classes);
  g.description = "AlexNet as torchvision's alexnet: 5 convolutions, 3 max pools, 3 fully connected layers";
  int x = g.input();
  // features: Conv(11, /4, pad 2)+ReLU, MaxPool(3, /2), Conv(5, pad 2)+ReLU, MaxPool, 3 × Conv(3, pad 1)+ReLU, MaxPool
  x = g.conv2d("features.0", x, 64, 11, 4, 2, true, Activation::ReLU);
  x = g.maxpool2d("features.2", x, 3, 2);
  x = g.conv2d("features.3", x, 192, 5, 1, 2, true, Activation::ReLU);
  x = g.maxpool2d("features.5", x, 3, 2);
  x = g.conv2d("features.6", x, 384, 3, 1, 1, true, Activation::ReLU);
  x = g.conv2d("features.8", x, 256, 3, 1, 1, true, Activation::ReLU);
  x = g.conv2d("features.10", x, 256, 3, 1, 1, true, Activation::ReLU);
  x = g.maxpool2d("features.12", x, 3, 2);
  x = g.adaptive_avgpool2d("avgpool", x, 6, 6);
  x = g.flatten("flatten", x);
  // classifier: Dropout, Linear(9216, 4096)+ReLU, Dropout, Linear(4096, 4096)+ReLU, Linear(4096, classes)
  x = g.dropout("classifier.0", x, dropout);
  x = g.linear("classifier.1", x, 4096, true, Activation::ReLU);
  x = g.dropout("classifier.3", x, dropout);
  x = g.linear("classifier.4", x, 4096, true, Activation::ReLU);
  x = g.linear("classifier.6", x, classes);
  g.set_output(x);
  return g;
}

namespace {

// torchvision's BasicBlock: conv3×3(stride) → bn → relu → conv3×3 → bn, plus
// the identity (or downsample: conv1×1(stride) → bn), then relu.
int basic_block(LayerGraph& g, const std::string& name, int x, std::int64_t planes, std::int64_t stride) {
  const std::int64_t inplanes = g.values()[static_cast<size_t>(x)].shape[0];
  const auto kaiming = ParamInit::NormalFanOutRelu;
  int identity = x;
  int y = g.conv2d(name + ".conv1", x, planes, 3, stride, 1, false, Activation::None, kaiming);
  y = g.batchnorm2d(name + ".bn1", y, Activation::ReLU);
  y = g.conv2d(name + ".conv2", y, planes, 3, 1, 1, false, Activation::None, kaiming);
  if (stride != 1 || inplanes != planes) {
    identity = g.conv2d(name + ".downsample.0", x, planes, 1, stride, 0, false, Activation::None, kaiming);
    identity = g.batchnorm2d(name + ".downsample.1", identity);
  }
  const int out = g.batchnorm2d(name + ".bn2", y, Activation::ReLU, identity);
  if (identity != x) g.move_params_after(name + ".downsample.", name + ".bn2.");  // torch registers downsample last
  return out;
}

}  // namespace

LayerGraph make_resnet18(std::int64_t classes, Shape input) {
  LayerGraph g("resnet18", std::move(input), classes);
  g.description = "ResNet-18 as torchvision's resnet18: a 7×7 stem, 8 basic blocks in 4 stages, global average pool";
  int x = g.input();
  x = g.conv2d("conv1", x, 64, 7, 2, 3, false, Activation::None, ParamInit::NormalFanOutRelu);
  x = g.batchnorm2d("bn1", x, Activation::ReLU);
  x = g.maxpool2d("maxpool", x, 3, 2, 1);
  const std::int64_t planes[4] = {64, 128, 256, 512};
  for (int stage = 0; stage < 4; ++stage)
    for (int b = 0; b < 2; ++b)
      x = basic_block(g, fmt::format("layer{}.{}", stage + 1, b), x, planes[stage], stage > 0 && b == 0 ? 2 : 1);
  x = g.adaptive_avgpool2d("avgpool", x, 1, 1);
  x = g.flatten("flatten", x);
  x = g.linear("fc", x, classes);
  g.set_output(x);
  return g;
}

namespace {

// The registry: every model by name (and the short names people type).
struct ModelEntry {
  const char* name;
  const char* alias;  // "" for none
  bool network;       // ImageNet-scale (the network bench) rather than a small Fashion-MNIST model
  LayerGraph (*make)();
};

const ModelEntry kModels[] = {
    {"simple-mlp", "mlp", false, &make_simple_mlp},
    {"simple-cnn", "cnn", false, &make_simple_cnn},
    {"ece408", "", false, &make_ece408},
    {"alexnet", "", true, [] { return make_alexnet(); }},
    {"resnet18", "", true, [] { return make_resnet18(); }},
};

const ModelEntry* find_model(const std::string& name) {
  const std::string n = to_lower(trim(name));
  for (const auto& e : kModels)
    if (n == e.name || (*e.alias && n == e.alias)) return &e;
  return nullptr;
}

}  // namespace

std::vector<std::string> graph_model_names() {
  std::vector<std::string> out;
  for (const auto& e : kModels) out.push_back(e.name);
  return out;
}

std::vector<std::string> network_names() {
  std::vector<std::string> out;
  for (const auto& e : kModels)
    if (e.network) out.push_back(e.name);
  return out;
}

std::vector<std::string> small_model_names() {
  std::vector<std::string> out;
  for (const auto& e : kModels)
    if (!e.network) out.push_back(e.name);
  return out;
}

bool is_network(const std::string& name) {
  const ModelEntry* e = find_model(name);
  return e && e->network;
}

float recipe_learning_rate(const std::string& name) { return name == "alexnet" ? 0.01f : 0.1f; }

LayerGraph make_graph_model(const std::string& name) {
  if (const ModelEntry* e = find_model(name)) return e->make();
  throw Error(ErrorKind::Usage, fmt::format("unknown model '{}'", printable(name)),
              "the models are " + join(graph_model_names(), ", "));
}

}  // namespace roofline::engine

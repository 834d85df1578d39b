// AlexNet and ResNet-18 as torchvision builds them (torchvision/models/alexnet.py
// and resnet.py): the same layers in the same order, the same module names (so
// parameters carry its state_dict names), the same initialisation.
#include <fmt/format.h>

#include "roofline/core/error.hpp"
#include "roofline/core/strings.hpp"
#include "roofline/engine/layer_graph.hpp"

namespace roofline::engine {

using ops::Activation;

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

std::vector<std::string> graph_model_names() { return {"alexnet", "resnet18"}; }

bool is_graph_model(const std::string& name) {
  for (const auto& n : graph_model_names())
    if (n == name) return true;
  return false;
}

float recipe_learning_rate(const std::string& name) { return name == "alexnet" ? 0.01f : 0.1f; }

LayerGraph make_graph_model(const std::string& name) {
  if (name == "alexnet") return make_alexnet();
  if (name == "resnet18") return make_resnet18();
  throw Error(ErrorKind::Usage, fmt::format("unknown network '{}'", printable(name)),
              "the networks are alexnet and resnet18");
}

}  // namespace roofline::engine

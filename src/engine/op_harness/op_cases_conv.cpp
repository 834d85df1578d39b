// The harness's convolutions of real networks: AlexNet's and ResNet-18's
// kernel, stride and padding combinations at small random sizes (check and
// gradient modes), in NCHW (conv2d_nets), NHWC (conv2d_nhwc) and with groups
// (conv2d_groups); and every convolution of the two networks at the batch in
// perf mode.
#include <fmt/format.h>

#include <algorithm>
#include <iterator>

#include "roofline/engine/ops.hpp"
#include "src/engine/op_harness/op_case.hpp"

namespace roofline::engine::harness {

using ops::Activation;
using std::int64_t;

namespace {

int64_t pick(Rng& r, int64_t lo, int64_t hi) {
  return lo + static_cast<int64_t>(r.below(static_cast<std::uint64_t>(hi - lo + 1)));
}

// Kernel, stride and padding of the two networks' layers.
struct Geometry {
  int64_t r, stride, pad;
};
constexpr Geometry kGeometries[] = {
    {11, 4, 2},  // AlexNet conv1
    {5, 1, 2},   // AlexNet conv2
    {3, 1, 1},   // AlexNet conv3-5, ResNet-18's 3×3 layers
    {7, 2, 3},   // ResNet-18 conv1
    {3, 2, 1},   // ResNet-18's first 3×3 of layers 2-4
    {1, 2, 0},   // ResNet-18's downsampling shortcuts
};

// A random small instance of the op: its geometry from the two networks, an
// input at most a few outputs wide, and at most ~1.5M multiply-adds (the
// finite-difference checks run the float64 forward ~150 times per case).
ops::Conv2dShape random_net_conv(const std::string& op, Rng& r) {
  for (;;) {
    const Geometry g = kGeometries[r.below(std::size(kGeometries))];
    ops::Conv2dShape s;
    s.n = pick(r, 1, 3);
    s.r = s.s = g.r;
    s.stride = g.stride;
    s.pad = g.pad;
    const int64_t lo = std::max<int64_t>(1, g.r - 2 * g.pad);
    s.h = pick(r, lo, lo + 4 * g.stride + 5);
    s.w = pick(r, lo, lo + 4 * g.stride + 5);
    s.bias = r.below(5) != 0;
    s.act = r.below(2) == 0 ? Activation::ReLU : Activation::None;
    if (op == "conv2d_groups") {
      s.format = r.below(2) == 0 ? MemoryFormat::NCHW : MemoryFormat::NHWC;
      if (r.below(3) == 0) {  // depthwise
        s.groups = s.c = s.k = pick(r, 2, 12);
      } else {
        s.groups = pick(r, 2, 4);
        s.c = s.groups * pick(r, 1, 6);
        s.k = s.groups * pick(r, 1, 6);
      }
    } else {
      s.format = op == "conv2d_nhwc" ? MemoryFormat::NHWC : MemoryFormat::NCHW;
      s.c = pick(r, 1, 24);
      // More output channels than the GPU's own kernels take (conv_choice.hpp), so conv2d_nets reaches cuDNN.
      s.k = op == "conv2d_nhwc" ? pick(r, 1, 40) : pick(r, 17, 40);
    }
    const double macs = double(s.n) * s.k * s.oh() * s.ow() * s.cg() * s.r * s.s;
    if (s.valid() && macs <= 1.5e6) return s;
  }
}

}  // namespace

bool is_net_conv_op(const std::string& op) {
  return op == "conv2d_nets" || op == "conv2d_nhwc" || op == "conv2d_groups";
}

OpCase net_conv_case(const std::string& op, Rng& rng) {
  OpCase c = conv_case(random_net_conv(op, rng));
  c.shape += c.op == "conv2d+relu" ? " relu" : "";
  c.op = op;
  return c;
}

namespace {

// Every convolution layer of the two networks (ResNet-18's repeated 3×3 layers once each).
struct Layer {
  const char* name;
  int64_t c, hw, k, r, stride, pad;
  bool bias_relu;  // AlexNet: bias and ReLU; ResNet-18: neither (BatchNorm follows)
};
constexpr Layer kLayers[] = {
    {"alexnet.conv1", 3, 224, 64, 11, 4, 2, true},
    {"alexnet.conv2", 64, 27, 192, 5, 1, 2, true},
    {"alexnet.conv3", 192, 13, 384, 3, 1, 1, true},
    {"alexnet.conv4", 384, 13, 256, 3, 1, 1, true},
    {"alexnet.conv5", 256, 13, 256, 3, 1, 1, true},
    {"resnet18.conv1", 3, 224, 64, 7, 2, 3, false},
    {"resnet18.layer1", 64, 56, 64, 3, 1, 1, false},
    {"resnet18.layer2.0.conv1", 64, 56, 128, 3, 2, 1, false},
    {"resnet18.layer2", 128, 28, 128, 3, 1, 1, false},
    {"resnet18.layer2.0.downsample", 64, 56, 128, 1, 2, 0, false},
    {"resnet18.layer3.0.conv1", 128, 28, 256, 3, 2, 1, false},
    {"resnet18.layer3", 256, 14, 256, 3, 1, 1, false},
    {"resnet18.layer3.0.downsample", 128, 28, 256, 1, 2, 0, false},
    {"resnet18.layer4.0.conv1", 256, 14, 512, 3, 2, 1, false},
    {"resnet18.layer4", 512, 7, 512, 3, 1, 1, false},
    {"resnet18.layer4.0.downsample", 256, 14, 512, 1, 2, 0, false},
};

ops::Conv2dShape layer_shape(const Layer& l, int64_t batch) {
  ops::Conv2dShape s;
  s.n = batch;
  s.c = l.c;
  s.h = s.w = l.hw;
  s.k = l.k;
  s.r = s.s = l.r;
  s.stride = l.stride;
  s.pad = l.pad;
  s.bias = l.bias_relu;
  s.act = l.bias_relu ? Activation::ReLU : Activation::None;
  return s;
}

OpCase named(const std::string& op, const char* layer, OpCase c) {
  c.op = op;
  c.shape = std::string(layer) + " " + c.shape;
  return c;
}

}  // namespace

std::vector<OpCase> net_conv_perf_cases(const std::string& op, int64_t batch) {
  std::vector<OpCase> v;
  if (op != "conv2d_nets") return v;  // the harness times fp32 NCHW only (the networks' bf16 NHWC runs in roofline bench)
  for (const Layer& l : kLayers) v.push_back(named(op, l.name, conv_case(layer_shape(l, batch))));
  return v;
}

// Each layer's channels, kernel, stride and padding with an input just large
// enough for 2×2 outputs: the GPU takes the same engines' families as at full
// size, the float64 reference stays quick (~29 M multiply-adds an image for
// all sixteen). conv2d_groups makes the layers depthwise where c = k, two
// groups elsewhere (the first layers' 3 channels are skipped), alternating
// NCHW and NHWC.
std::vector<OpCase> net_conv_check_cases(const std::string& op, int64_t batch) {
  std::vector<OpCase> v;
  bool nhwc = false;
  for (const Layer& l : kLayers) {
    ops::Conv2dShape s = layer_shape(l, batch);
    const int64_t o = 2;
    s.h = s.w = (o - 1) * s.stride + s.r - 2 * s.pad;
    if (op == "conv2d_nhwc") s.format = MemoryFormat::NHWC;
    if (op == "conv2d_groups") {
      if (s.c % 2 != 0) continue;
      s.groups = s.c == s.k ? s.c : 2;
      s.format = nhwc ? MemoryFormat::NHWC : MemoryFormat::NCHW;
      nhwc = !nhwc;
    }
    v.push_back(named(op, l.name, conv_case(s)));
  }
  return v;
}

}  // namespace roofline::engine::harness

// The graph networks' definitions and buffer plans: torchvision's parameter
// counts and names, shapes, the arena placement, and how gradients of values
// with several consumers are routed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "roofline/core/error.hpp"
#include "roofline/engine/layer_graph.hpp"
#include "roofline/engine/rng.hpp"
#include "src/engine/graph/graph_plan.hpp"

using namespace roofline;
using namespace roofline::engine;

TEST(LayerGraph, TorchvisionParameterCounts) {
  const LayerGraph alexnet = make_alexnet();
  const LayerGraph resnet = make_resnet18();
  EXPECT_EQ(alexnet.learnable_count(), 61100840);
  EXPECT_EQ(resnet.learnable_count(), 11689512);
  // state_dict entries without num_batches_tracked: 16 in AlexNet, 62 parameters + 40 running statistics in ResNet-18.
  EXPECT_EQ(alexnet.params().size(), 16u);
  EXPECT_EQ(resnet.params().size(), 102u);
  EXPECT_EQ(resnet.params().front().name, "conv1.weight");
  EXPECT_EQ(resnet.params().back().name, "fc.bias");
  EXPECT_EQ(alexnet.params().front().name, "features.0.weight");
  EXPECT_EQ(alexnet.params().back().name, "classifier.6.bias");
  EXPECT_EQ(resnet.values()[static_cast<size_t>(resnet.output())].shape, Shape{1000});
}

TEST(LayerGraph, ResNetParametersFollowTheStateDictOrder) {
  // torchvision registers a block's downsample after bn2, though it runs before it.
  const LayerGraph g = make_resnet18();
  std::vector<std::string> names;
  for (const auto& p : g.params()) names.push_back(p.name);
  auto at = [&](const std::string& n) { return std::find(names.begin(), names.end(), n) - names.begin(); };
  EXPECT_LT(at("layer2.0.bn2.running_var"), at("layer2.0.downsample.0.weight"));
  EXPECT_EQ(at("layer2.0.downsample.1.running_var") + 1, at("layer2.1.conv1.weight"));
  // Node parameters still point at their own tensors after the move.
  for (const auto& n : g.nodes())
    for (int p : n.params) EXPECT_EQ(g.params()[static_cast<size_t>(p)].name.rfind(n.name + ".", 0), 0u) << n.name;
}

TEST(LayerGraph, ShapesOfTheLayers) {
  const LayerGraph g = make_resnet18();
  const auto info = g.describe(1);
  auto out_of = [&](const std::string& name) {
    for (const auto& i : info)
      if (i.name == name) return i.out;
    return Shape{};
  };
  EXPECT_EQ(out_of("conv1"), (Shape{64, 112, 112}));
  EXPECT_EQ(out_of("maxpool"), (Shape{64, 56, 56}));
  EXPECT_EQ(out_of("layer4.1.bn2"), (Shape{512, 7, 7}));
  const LayerGraph a = make_alexnet();
  const auto ai = a.describe(1);
  EXPECT_EQ(ai[0].out, (Shape{64, 55, 55}));
  EXPECT_EQ(ai[1].out, (Shape{64, 27, 27}));
  // The small input of the CPU fixtures: AlexNet's adaptive pool still gives 6 × 6.
  const LayerGraph small = make_alexnet(1000, {3, 64, 64});
  EXPECT_EQ(small.values()[static_cast<size_t>(small.nodes()[8].output)].shape, (Shape{256, 6, 6}));
  EXPECT_THROW(make_alexnet(1000, {3, 32, 32}), Error);  // too small: the last max pool would output nothing
}

TEST(LayerGraph, InitialisationAsTorchvision) {
  const LayerGraph g = make_resnet18();
  const auto state = g.init_params(1);
  for (size_t i = 0; i < g.params().size(); ++i) {
    const auto& p = g.params()[i];
    const auto& v = state[i];
    if (p.name.find("running_var") != std::string::npos || (p.name.find("bn") != std::string::npos && p.name.find("weight") != std::string::npos)) {
      EXPECT_TRUE(std::all_of(v.begin(), v.end(), [](float x) { return x == 1.0f; })) << p.name;
    }
    if (p.name == "layer1.0.conv1.weight") {  // kaiming_normal_(fan_out): std √(2/(64·9))
      double ss = 0;
      for (float x : v) ss += double(x) * x;
      EXPECT_NEAR(std::sqrt(ss / v.size()), std::sqrt(2.0 / 576), 0.03 * std::sqrt(2.0 / 576));
    }
    if (p.name == "fc.weight") {  // U(±1/√512)
      const float bound = 1.0f / std::sqrt(512.0f);
      EXPECT_LE(*std::max_element(v.begin(), v.end()), bound);
      EXPECT_GE(*std::min_element(v.begin(), v.end()), -bound);
    }
  }
}

TEST(GraphPlan, PlacesBuffersWithoutOverlapInTimeAndSpace) {
  Rng rng(3);
  for (int round = 0; round < 50; ++round) {
    std::vector<PlannedBuffer> b;
    for (int i = 0; i < 40; ++i) {
      int s = static_cast<int>(rng.below(30)), e = s + static_cast<int>(rng.below(10));
      b.push_back({static_cast<size_t>(1 + rng.below(5000)), s, e, 0});
    }
    const size_t total = place_buffers(b);
    size_t sum = 0;
    for (const auto& x : b) sum += (x.bytes + 255) / 256 * 256;
    EXPECT_LE(total, sum);
    for (size_t i = 0; i < b.size(); ++i) {
      EXPECT_EQ(b[i].offset % 256, 0u);
      EXPECT_LE(b[i].offset + b[i].bytes, total);
      for (size_t j = i + 1; j < b.size(); ++j) {
        const bool live_together = b[i].start <= b[j].end && b[j].start <= b[i].end;
        const bool share = b[i].offset < b[j].offset + b[j].bytes && b[j].offset < b[i].offset + b[i].bytes;
        EXPECT_FALSE(live_together && share) << i << " " << j;
      }
    }
  }
  // Buffers that never live together share memory.
  std::vector<PlannedBuffer> seq = {{1000, 0, 1, 0}, {1000, 2, 3, 0}, {1000, 4, 5, 0}};
  EXPECT_EQ(place_buffers(seq), 1024u);
}

TEST(GraphPlan, ResidualGradientsShareTheBatchNormsBuffer) {
  const LayerGraph g = make_resnet18(10, {3, 32, 32});
  const auto plan = make_plan(g, 2, DType::F32, true);
  int aliases = 0, accumulates = 0, writes_to_input = 0;
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    const auto& n = g.nodes()[i];
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      if (plan.edge[i][k] == GradEdge::Alias && n.op == NodeOp::BatchNorm2d) ++aliases;
      if (plan.edge[i][k] == GradEdge::Accumulate) ++accumulates;
      if (n.inputs[k] == 0) writes_to_input += plan.edge[i][k] != GradEdge::None;
    }
  }
  // 8 blocks: each block's bn2 gets its residual's gradient in place; the 5
  // identity shortcuts (no downsample) add conv1's input gradient to it, and
  // the 3 downsample blocks add conv1's to the downsample convolution's.
  EXPECT_EQ(aliases, 8);
  EXPECT_EQ(accumulates, 8);
  EXPECT_EQ(writes_to_input, 0);
  EXPECT_LT(plan.arena, plan.unshared);
  // Inference reuses far more: activations die as soon as they are read.
  const auto infer = make_plan(g, 2, DType::F32, false);
  EXPECT_LT(infer.arena * 3, plan.arena);
}

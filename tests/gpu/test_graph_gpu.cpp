// The graph networks on the GPU: the small golden fixtures (the CPU suite's)
// and PyTorch's full-size golden files (224 × 224, batch 8, written by
// peers/golden_nets.py in the same device call: ROOFLINE_GOLDEN_DIR), fp32
// at the bounds and bf16 within twice PyTorch's own bf16-against-fp32
// difference (the file's metadata); a captured step against the eager one.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "roofline/core/env.hpp"
#include "roofline/engine/graph_network.hpp"
#include "roofline/engine/safetensors.hpp"
#include "tests/support/golden_check.hpp"
#include "tests/support/golden_init.hpp"
#include "tests/support/gpu.hpp"

using namespace roofline;
using namespace roofline::engine;

namespace {

LayerGraph model(const std::string& name, std::int64_t size) {
  return name == "alexnet" ? make_alexnet(1000, {3, size, size}, 0.0f) : make_resnet18(1000, {3, size, size});
}

std::string golden_dir() {
  auto d = env::get(env::Var::GoldenDir);
  return d ? *d : std::string();
}

// bf16 bounds: twice what PyTorch's own bf16 autocast differs from its fp32 by.
test::GoldenBounds bf16_bounds(const std::string& bf16_file) {
  const auto meta = SafetensorsFile::open(bf16_file).metadata();
  test::GoldenBounds b;
  b.logits = 2 * std::max(std::stod(meta.at("vs_fp32.logits")), std::stod(meta.at("vs_fp32.eval_logits")));
  b.loss = b.logits;
  b.grads = 2 * std::stod(meta.at("vs_fp32.grads_max"));
  b.stats = 2 * b.logits;
  return b;
}

void expect_golden(const std::string& name, Precision p, const std::string& dir, std::int64_t size,
                   std::int64_t batch) {
  const std::string fp32 = dir + "/golden-" + name + "-fp32-" + std::to_string(size) + ".safetensors";
  ASSERT_TRUE(std::filesystem::exists(fp32)) << fp32;
  const LayerGraph g = model(name, size);
  Context ctx(Backend::Cuda);
  GraphOptions o;
  o.precision = p;
  GraphNetwork net(g, ctx, batch, o);
  test::GoldenBounds b;
  if (p == Precision::BF16)
    b = bf16_bounds(dir + "/golden-" + name + "-bf16-" + std::to_string(size) + ".safetensors");
  const auto r = test::check_golden(net, fp32, batch, size, b);
  std::printf("[golden] %s %s %lldx%lld batch %lld: %s (bounds: logits %.1e, gradients %.1e)\n", name.c_str(),
              to_string(p), static_cast<long long>(size), static_cast<long long>(size), static_cast<long long>(batch),
              r.summary().c_str(), b.logits, b.grads);
  EXPECT_TRUE(r.failures.empty()) << name << " " << to_string(p) << ": " << r.summary();
}

const std::string kFixtures = std::string(ROOFLINE_SOURCE_DIR) + "/tests/data/golden";

}  // namespace

TEST(GraphGpu, SmallResNet18MatchesPyTorch) {
  ROOFLINE_REQUIRE_GPU();
  expect_golden("resnet18", Precision::FP32, kFixtures, 64, 2);
}

TEST(GraphGpu, SmallAlexNetMatchesPyTorch) {
  ROOFLINE_REQUIRE_GPU();
  expect_golden("alexnet", Precision::FP32, kFixtures, 64, 2);
}

TEST(GoldenGpu, FullSizeFp32) {
  ROOFLINE_REQUIRE_GPU();
  if (golden_dir().empty()) GTEST_SKIP() << "ROOFLINE_GOLDEN_DIR is not set (tools/checks/nets.sh golden writes it)";
  for (const char* m : {"resnet18", "alexnet"}) expect_golden(m, Precision::FP32, golden_dir(), 224, 8);
}

TEST(GoldenGpu, FullSizeBf16) {
  ROOFLINE_REQUIRE_GPU();
  if (golden_dir().empty()) GTEST_SKIP() << "ROOFLINE_GOLDEN_DIR is not set (tools/checks/nets.sh golden writes it)";
  for (const char* m : {"resnet18", "alexnet"}) expect_golden(m, Precision::BF16, golden_dir(), 224, 8);
}

TEST(GraphGpu, CapturedStepsMatchEagerSteps) {
  ROOFLINE_REQUIRE_GPU();
  const LayerGraph g = make_resnet18(10, {3, 32, 32});
  Context ctx(Backend::Cuda);
  std::vector<float> losses[2];
  for (int captured = 0; captured < 2; ++captured) {
    GraphNetwork net(g, ctx, 4);
    net.load_state(test::golden_state(g));
    net.set_batch(test::golden_input(4, 32), test::golden_labels(4, 10), 4);
    if (captured) net.capture_train_step(4);  // runs one step eagerly, then captures
    else net.train_step(4);
    losses[captured].push_back(net.loss());
    for (int i = 0; i < 4; ++i) {
      if (captured) net.replay();
      else net.train_step(4);
      losses[captured].push_back(net.loss());
    }
  }
  for (size_t i = 0; i < losses[0].size(); ++i) EXPECT_NEAR(losses[0][i], losses[1][i], 1e-4f * std::fabs(losses[0][i]));
  EXPECT_LT(losses[1].back(), losses[1].front());
}

TEST(GraphGpu, Bf16TrainsLikeFp32) {
  ROOFLINE_REQUIRE_GPU();
  const LayerGraph g = make_resnet18(10, {3, 32, 32});
  Context ctx(Backend::Cuda);
  std::vector<float> last;
  for (Precision p : {Precision::FP32, Precision::TF32, Precision::BF16}) {
    GraphOptions o;
    o.precision = p;
    GraphNetwork net(g, ctx, 8, o);
    net.load_state(test::golden_state(g));
    net.set_batch(test::golden_input(8, 32), test::golden_labels(8, 10), 8);
    net.capture_train_step(8);
    for (int i = 0; i < 10; ++i) net.replay();
    last.push_back(net.loss());
  }
  EXPECT_NEAR(last[1], last[0], 0.05f * last[0]);
  EXPECT_NEAR(last[2], last[0], 0.1f * last[0]);
}

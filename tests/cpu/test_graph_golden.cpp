// AlexNet and ResNet-18 against PyTorch on the CPU: the small golden fixtures
// (64 × 64 input, batch 2, written by peers/golden_nets.py on the GPU machine
// with torch 2.11 in float64 and kept in tests/data/golden/) at the issue's
// fp32 bounds: logits within 1e-4, gradients within 1e-3 (relative).
#include <gtest/gtest.h>

#include <filesystem>

#include "roofline/engine/graph_network.hpp"
#include "roofline/engine/graph_weights.hpp"
#include "roofline/core/error.hpp"
#include "tests/support/golden_check.hpp"
#include "tests/support/golden_init.hpp"

using namespace roofline;
using namespace roofline::engine;

namespace {

std::string fixture(const std::string& name) {
  return std::string(ROOFLINE_SOURCE_DIR) + "/tests/data/golden/" + name;
}

void expect_golden(const LayerGraph& g, Backend backend) {
  const std::string file = fixture("golden-" + g.name() + "-fp64-64.safetensors");
  ASSERT_TRUE(std::filesystem::exists(file)) << file << " is missing: run tools/checks/nets.sh golden on the GPU machine";
  Context ctx(backend);
  GraphNetwork net(g, ctx, 2);
  const auto r = test::check_golden(net, file, 2, 64, {});
  EXPECT_TRUE(r.failures.empty()) << g.name() << " on " << to_string(backend) << ": " << r.summary();
}

}  // namespace

TEST(GraphGolden, ResNet18MatchesPyTorch) {
  expect_golden(make_resnet18(1000, {3, 64, 64}), Backend::Cpu);
}

TEST(GraphGolden, AlexNetMatchesPyTorch) {
  expect_golden(make_alexnet(1000, {3, 64, 64}, 0.0f), Backend::Cpu);
}

TEST(GraphGolden, ReferenceBackendMatchesPyTorch) {
  expect_golden(make_resnet18(1000, {3, 64, 64}), Backend::CpuRef);
}

TEST(GraphWeights, RoundTripAndMismatchesNamed) {
  const LayerGraph g = make_resnet18(10, {3, 32, 32});
  const auto state = test::golden_state(g);
  const auto dir = std::filesystem::temp_directory_path() / "roofline_graph_weights";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "r.safetensors").string();
  write_state(g, state, path);
  EXPECT_EQ(read_state(g, path), state);
  // Another architecture's file: the message names what is missing and what is misshapen.
  const LayerGraph other = make_resnet18(20, {3, 32, 32});
  try {
    read_state(other, path);
    FAIL() << "a 10-class checkpoint loaded into a 20-class model";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Input);
    EXPECT_NE(std::string(e.what()).find("fc.weight"), std::string::npos) << e.what();
  }
  try {
    read_state(make_alexnet(10, {3, 64, 64}), path);
    FAIL() << "a resnet18 checkpoint loaded into alexnet";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("features.0.weight"), std::string::npos) << e.what();
  }
  std::filesystem::remove_all(dir);
}

// The op harness on the GPU: every op's CUDA path against the float64
// reference on random shapes, with guard regions and poisoned outputs.
#include <gtest/gtest.h>

#include <iostream>

#include "roofline/core/error.hpp"
#include "roofline/engine/op_harness.hpp"
#include "tests/support/gpu.hpp"

using namespace roofline;
using namespace roofline::engine;

namespace {

class OpsOnGpu : public ::testing::TestWithParam<std::string> {};

TEST_P(OpsOnGpu, MatchTheFloat64Reference) {
  ROOFLINE_REQUIRE_GPU();
  if (const std::string why = harness::skip_reason(GetParam(), Backend::Cuda); !why.empty()) GTEST_SKIP() << why;
  Context ctx(Backend::Cuda);
  Rng rng(std::hash<std::string>{}(GetParam()) ^ 0x9e3779b9);
  auto results = harness::check_op(GetParam(), ctx, rng, 12);
  ASSERT_FALSE(results.empty());
  for (const auto& r : results) EXPECT_TRUE(r.passed()) << r.describe();
  // A dtype this GPU refuses (bf16 before Ampere) is skipped, and said so.
  std::string why;
  const auto skipped = harness::count_skipped(results, &why);
  if (skipped == static_cast<std::int64_t>(results.size())) GTEST_SKIP() << "every case skipped: " << why;
  if (skipped > 0)
    std::cout << "[   NOTE   ] " << skipped << " of " << results.size() << " checks skipped: " << why << "\n";
}

INSTANTIATE_TEST_SUITE_P(AllOps, OpsOnGpu, ::testing::ValuesIn(harness::op_names()), [](const auto& info) {
  std::string n = info.param;
  for (char& c : n)
    if (!isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
});

TEST(OpsGpu, ModelShapesMatchTheReferenceToo) {
  ROOFLINE_REQUIRE_GPU();
  // The perf shapes (the models' own layers at batch 128) through the checker:
  // large enough to use every block of every grid.
  Context ctx(Backend::Cuda);
  for (const auto& op : harness::op_names()) {
    auto perf = harness::perf_op(op, ctx, 8, 0.0);
    for (const auto& p : perf) {
      EXPECT_GT(p.seconds, 0) << op;
      EXPECT_GT(p.cost.bytes, 0) << op;
    }
  }
}

TEST(OpsGpu, OutOfMemorySaysWhatWasAskedAndWhatIsFree) {
  ROOFLINE_REQUIRE_GPU();
  try {
    Tensor t = Tensor::empty({std::int64_t(1) << 42}, DType::F32, Device::cuda(0), "a test buffer");
    FAIL() << "16 TiB cannot be allocated";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Device);
    const std::string what = e.what();
    EXPECT_NE(what.find("out of memory"), std::string::npos) << what;
    EXPECT_NE(what.find("a test buffer"), std::string::npos) << what;
    EXPECT_NE(what.find("free"), std::string::npos) << what;
    EXPECT_NE(what.find("TiB"), std::string::npos) << what;
  }
  // The context is still usable afterwards.
  Context ctx(Backend::Cuda);
  Tensor ok = ctx.empty({16});
  ok.fill(2.0f);
  EXPECT_EQ(ok.to_floats()[15], 2.0f);
}

TEST(OpsGpu, ModelShapesMatchTheFloat64Reference) {
  ROOFLINE_REQUIRE_GPU();
  // The paths the models take at their own sizes (ece408's convolutions take
  // the tiled kernels; simple-mlp's GEMMs cuBLASLt's large-shape algorithms),
  // with guards and poisoned outputs, at a small batch so the float64
  // reference stays quick.
  Context ctx(Backend::Cuda);
  Rng rng(2026);
  for (const auto& op : harness::op_names())
    for (std::int64_t batch : {1, 3}) {
      auto results = harness::check_model_shapes(op, ctx, rng, batch);
      ASSERT_FALSE(results.empty()) << op;
      for (const auto& r : results) EXPECT_TRUE(r.passed()) << r.describe();
    }
}

// The tiled convolutions' edges (kernels/conv2d_tiled.cuh), each shape with
// fresh random values through every pass against the float64 reference.
TEST(OpsGpu, TiledConvolutionEdgesMatchTheFloat64Reference) {
  ROOFLINE_REQUIRE_GPU();
  struct Case {
    const char* why;
    std::int64_t n, c, h, w, k, r, s, stride, pad;
    bool bias, relu;
  };
  const Case cases[] = {
      {"more images than weight-gradient blocks (4 per SM)", 600, 1, 6, 6, 2, 3, 3, 1, 0, true, true},
      {"16-channel blocks both ways, padded", 2, 16, 12, 12, 16, 3, 3, 1, 1, true, false},
      {"8-channel input-gradient blocks, 12 of 16 forward channels, r != s", 3, 7, 9, 30, 12, 5, 2, 1, 1, true, true},
      {"33 output channels: a 1-channel tail block", 2, 3, 20, 17, 33, 7, 7, 1, 3, false, false},
      {"1x1 kernel, 289 pixels: two blocks per image, the second from mid-row", 2, 20, 17, 17, 5, 1, 1, 1, 0, true,
       false},
      {"rows wider than a block", 1, 2, 2, 300, 3, 1, 3, 1, 0, true, true},
      {"c*r*s + 1 > 256: direct weight gradient", 2, 6, 10, 10, 4, 7, 7, 1, 2, true, false},
      {"64 input channels: opt-in shared memory, direct weight gradient", 1, 64, 64, 64, 16, 3, 3, 1, 1, true, true},
      {"pad > r - 1: direct input gradient", 2, 2, 5, 5, 3, 1, 1, 1, 1, true, false},
      {"stride 2: direct kernels", 2, 3, 15, 15, 8, 3, 3, 2, 1, true, true},
      {"one-row images", 4, 2, 1, 9, 3, 1, 3, 1, 0, false, true},
      {"ece408 conv2 at batch 5", 5, 4, 40, 40, 16, 7, 7, 1, 0, true, true},
      {"ece408 conv1 at batch 40: 4 pixels per thread (forward, >= 2 blocks per SM)", 40, 1, 86, 86, 4, 7, 7, 1, 0,
       true, true},
      {"ece408 conv2 at batch 24: 8-channel blocks, not 16, to fill the SMs", 24, 4, 40, 40, 16, 7, 7, 1, 0, true,
       true},
      {"ece408 conv2 at batch 128: 4 pixels per thread in the input gradient", 128, 4, 40, 40, 16, 7, 7, 1, 0, true,
       true},
      {"4 pixels per thread over 30-wide rows (a thread's last pixel past the row)", 270, 1, 30, 30, 4, 5, 5, 1, 2,
       true, false},
  };
  Context ctx(Backend::Cuda);
  Rng rng(408);
  for (const Case& k : cases) {
    ops::Conv2dShape s;
    s.n = k.n;
    s.c = k.c;
    s.h = k.h;
    s.w = k.w;
    s.k = k.k;
    s.r = k.r;
    s.s = k.s;
    s.stride = k.stride;
    s.pad = k.pad;
    s.bias = k.bias;
    s.act = k.relu ? ops::Activation::ReLU : ops::Activation::None;
    auto results = harness::check_conv(s, ctx, rng);
    ASSERT_FALSE(results.empty()) << k.why;
    for (const auto& r : results) EXPECT_TRUE(r.passed()) << k.why << ": " << r.describe();
  }
}

// The small-layer linear kernel (kernels/linear_small.cuh) at its edges, and
// the cuBLASLt path where it does not apply, each against float64.
TEST(OpsGpu, SmallLinearEdgesMatchTheFloat64Reference) {
  ROOFLINE_REQUIRE_GPU();
  struct Case {
    const char* why;
    ops::LinearShape s;
  };
  const Case cases[] = {
      {"ece408 FC1 at batch 64 (small kernel, ReLU)", {64, 1024, 32, true, ops::Activation::ReLU}},
      {"ece408 FC2 at batch 128: 8 of 32 lanes busy", {128, 32, 10, true, ops::Activation::None}},
      {"5 rows: a part-filled row block; 13 outputs: a part-filled warp block", {5, 8, 13, true, ops::Activation::ReLU}},
      {"no bias", {3, 4, 9, false, ops::Activation::None}},
      {"30 inputs: not float4 rows, cuBLASLt", {7, 30, 9, true, ops::Activation::ReLU}},
      {"past the small kernel's size: cuBLASLt with its fused epilogue", {256, 784, 256, true, ops::Activation::ReLU}},
      {"just under it: 2^23 multiply-adds", {128, 1024, 64, true, ops::Activation::None}},
  };
  Context ctx(Backend::Cuda);
  Rng rng(1024);
  for (const Case& k : cases) {
    auto results = harness::check_linear(k.s, ctx, rng);
    ASSERT_GE(results.size(), 3u) << k.why;
    for (const auto& r : results) EXPECT_TRUE(r.passed()) << k.why << ": " << r.describe();
  }
}

}  // namespace

// The harness's checks at the models' own layer sizes (check_model_shapes):
// on the CPU backends here, on the GPU in tests/gpu/test_ops_gpu.cpp.
#include <gtest/gtest.h>

#include "roofline/core/error.hpp"
#include "roofline/engine/op_harness.hpp"

using namespace roofline::engine;

TEST(OpsModelShapes, ConvolutionsAndPoolsMatchTheFloat64ReferenceOnTheCpu) {
  Context ctx(Backend::Cpu);
  Rng rng(42);
  for (const char* op : {"conv2d", "conv2d+relu", "maxpool2d"}) {
    auto results = harness::check_model_shapes(op, ctx, rng, 2);
    ASSERT_FALSE(results.empty()) << op;
    for (const auto& r : results) EXPECT_TRUE(r.passed()) << r.describe();
  }
}

TEST(OpsModelShapes, CheckConvTakesAnyShapeAndRejectsAnInvalidOne) {
  Context ctx(Backend::Cpu);
  Rng rng(7);
  ops::Conv2dShape s;
  s.n = 3;
  s.c = 5;
  s.h = 9;
  s.w = 13;
  s.k = 12;
  s.r = 5;
  s.s = 2;
  s.pad = 1;
  s.act = ops::Activation::ReLU;
  auto results = harness::check_conv(s, ctx, rng);
  ASSERT_FALSE(results.empty());
  for (const auto& r : results) EXPECT_TRUE(r.passed()) << r.describe();
  s.r = 12;  // larger than the padded input (9 + 2)
  EXPECT_THROW(harness::check_conv(s, ctx, rng), roofline::Error);
}

TEST(OpsModelShapes, CheckLinearTakesAnyShapeAndRejectsAnInvalidOne) {
  Context ctx(Backend::Cpu);
  Rng rng(8);
  auto results = harness::check_linear({5, 12, 13, true, ops::Activation::ReLU}, ctx, rng);
  ASSERT_GE(results.size(), 3u);  // forward, input gradient, weight gradient, …
  for (const auto& r : results) EXPECT_TRUE(r.passed()) << r.describe();
  EXPECT_THROW(harness::check_linear({0, 12, 13, true, ops::Activation::None}, ctx, rng), roofline::Error);
}

// Every model's Linear layers, among them the short ones (simple-cnn's 16→100,
// ece408's 32→10) that take the broadcast path of the forward (in ≤ 32).
TEST(OpsModelShapes, LinearsMatchTheFloat64ReferenceOnTheCpu) {
  Context ctx(Backend::Cpu);
  Rng rng(11);
  for (const char* op : {"linear", "linear+relu"}) {
    for (std::int64_t batch : {1, 5, 64}) {
      auto results = harness::check_model_shapes(op, ctx, rng, batch);
      ASSERT_FALSE(results.empty()) << op;
      bool short_k = false;
      for (const auto& r : results) {
        EXPECT_TRUE(r.passed()) << r.describe();
        short_k |= r.describe().find("in=16 ") != std::string::npos;
      }
      EXPECT_TRUE(short_k) << op << ": simple-cnn's 16-feature layer is among the model shapes";
    }
  }
}

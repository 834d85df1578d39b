// The op harness on the GPU: every op's CUDA path against the float64
// reference on random shapes, with guard regions and poisoned outputs.
#include <gtest/gtest.h>

#include "roofline/core/error.hpp"
#include "roofline/engine/op_harness.hpp"
#include "support/gpu.hpp"

using namespace roofline;
using namespace roofline::engine;

namespace {

class OpsOnGpu : public ::testing::TestWithParam<std::string> {};

TEST_P(OpsOnGpu, MatchTheFloat64Reference) {
  ROOFLINE_REQUIRE_GPU();
  Context ctx(Backend::Cuda);
  Rng rng(std::hash<std::string>{}(GetParam()) ^ 0x9e3779b9);
  auto results = harness::check_op(GetParam(), ctx, rng, 12);
  ASSERT_FALSE(results.empty());
  for (const auto& r : results) EXPECT_TRUE(r.passed()) << r.describe();
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

}  // namespace

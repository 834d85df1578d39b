// The op harness on the CPU backends, and the gradient checks of the
// float64 reference. The GPU side is tests/gpu/test_ops_gpu.cpp.
#include <gtest/gtest.h>

#include <iostream>

#include "roofline/engine/op_harness.hpp"

using namespace roofline::engine;

namespace {

class OpsOnCpu : public ::testing::TestWithParam<std::tuple<std::string, Backend>> {};

TEST_P(OpsOnCpu, MatchTheFloat64Reference) {
  const auto& [op, backend] = GetParam();
  if (const std::string why = harness::skip_reason(op, backend); !why.empty()) GTEST_SKIP() << why;
  Context ctx(backend);
  Rng rng(std::hash<std::string>{}(op) ^ 0xc0ffee);
  auto results = harness::check_op(op, ctx, rng, 6);
  ASSERT_FALSE(results.empty());
  for (const auto& r : results) EXPECT_TRUE(r.passed()) << r.describe();
  // bf16/fp16 cases are refused by the CPU backends (fp32 only): skipped, and said so.
  std::string why;
  const auto skipped = harness::count_skipped(results, &why);
  if (skipped == static_cast<std::int64_t>(results.size())) GTEST_SKIP() << "every case skipped: " << why;
  if (skipped > 0)
    std::cout << "[   NOTE   ] " << skipped << " of " << results.size() << " checks skipped: " << why << "\n";
}

INSTANTIATE_TEST_SUITE_P(AllOps, OpsOnCpu,
                         ::testing::Combine(::testing::ValuesIn(harness::op_names()),
                                            ::testing::Values(Backend::CpuRef, Backend::Cpu)),
                         [](const auto& info) {
                           std::string n = std::get<0>(info.param) + "_" + to_string(std::get<1>(info.param));
                           for (char& c : n)
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

class GradCheck : public ::testing::TestWithParam<std::string> {};

TEST_P(GradCheck, BackwardMatchesFiniteDifferences) {
  Rng rng(std::hash<std::string>{}(GetParam()) ^ 0xfeed);
  auto results = harness::gradient_check(GetParam(), rng, 6);
  ASSERT_FALSE(results.empty());
  for (const auto& r : results) EXPECT_TRUE(r.passed()) << r.describe();
}

INSTANTIATE_TEST_SUITE_P(OpsWithBackward, GradCheck,
                         ::testing::Values("linear", "linear+relu", "conv2d", "conv2d+relu", "conv2d_nets",
                                           "conv2d_nhwc", "conv2d_groups", "maxpool2d", "relu", "softmax",
                                           "log_softmax", "nll_loss", "cross_entropy", "batchnorm",
                                           "batchnorm+relu", "batchnorm+add+relu", "maxpool2d_pad",
                                           "adaptive_avgpool2d", "add", "add+relu", "relu_lowp", "dropout", "layernorm",
                                           "layernorm+add", "gelu", "attention_grad",
                                           "span_loss"),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& c : n)
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

TEST(OpsPerf, ReportsTimeAndRatesFromTheOpsOwnCost) {
  Context ctx(Backend::Cpu);
  auto perf = harness::perf_op("linear", ctx, 16, 0.0);
  ASSERT_FALSE(perf.empty());
  for (const auto& p : perf) {
    EXPECT_GT(p.seconds, 0) << p.op << " " << p.pass;
    EXPECT_GT(p.cost.flops, 0);
    EXPECT_NEAR(p.gflops(), p.cost.flops / p.seconds * 1e-9, 1e-9 * p.gflops());
  }
}

}  // namespace

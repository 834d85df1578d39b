// BatchNorm folded into the convolutions of inference networks, on the GPU:
// folded against unfolded in fp32, bf16 and fp16 (NHWC), each against the
// CPU's fp32 logits; a captured folded inference against the eager one; and
// PyTorch's full-size eval logits (ROOFLINE_GOLDEN_DIR) from folded networks.
//
// Bounds. fp32: 1e-4, the golden tests' logits bound against float64 — a
// wrong fold (a missing bias, a row scaled in the wrong layout) is off by
// O(1), and cuDNN may pick other engines for the conv+bias+ReLU graph than for
// the plain convolution, so equality to rounding is not a given. bf16/fp16:
// the golden bf16 style, max(1e-2, 2 × the unfolded network's own error):
// folding rounds W·γ/√(var+ε) to 16 bits once instead of W, and drops the
// 16-bit rounding of the convolution's output before the BatchNorm, so it
// should be no worse than the unfolded run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "roofline/core/env.hpp"
#include "roofline/engine/graph_network.hpp"
#include "roofline/engine/safetensors.hpp"
#include "tests/support/golden_init.hpp"
#include "tests/support/gpu.hpp"

using namespace roofline;
using namespace roofline::engine;

namespace {

double rel(const std::vector<float>& a, const std::vector<float>& ref) {
  double num = 0, den = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    num += (static_cast<double>(a[i]) - ref[i]) * (static_cast<double>(a[i]) - ref[i]);
    den += static_cast<double>(ref[i]) * ref[i];
  }
  return a.size() == ref.size() ? std::sqrt(num / den) : INFINITY;
}

std::vector<float> infer(const LayerGraph& g, Backend b, Precision p, bool fold, std::int64_t batch, std::int64_t size,
                         bool capture = false) {
  Context ctx(b);
  GraphOptions o;
  o.training = false;
  o.precision = p;
  o.fold_batchnorm = fold;
  GraphNetwork net(g, ctx, batch, o);
  EXPECT_EQ(net.folded_batchnorms() > 0, fold);
  net.load_state(test::golden_state(g));
  net.set_batch(test::golden_input(batch, size), test::golden_labels(batch, g.classes()), batch);
  if (capture) {
    net.capture_inference(batch);  // one eager forward, then the capture
    net.replay();
  } else {
    net.forward(batch, false);
  }
  return net.logits(batch);
}

std::string golden_dir() {
  auto d = env::get(env::Var::GoldenDir);
  return d ? *d : std::string();
}

}  // namespace

TEST(GraphFoldGpu, FoldedFollowsUnfoldedInEveryPrecision) {
  ROOFLINE_REQUIRE_GPU();
  const LayerGraph g = make_resnet18(1000, {3, 64, 64});
  const auto cpu = infer(g, Backend::Cpu, Precision::FP32, false, 2, 64);
  for (Precision p : {Precision::FP32, Precision::BF16, Precision::FP16}) {
    const auto folded = infer(g, Backend::Cuda, p, true, 2, 64), plain = infer(g, Backend::Cuda, p, false, 2, 64);
    const double ef = rel(folded, cpu), eu = rel(plain, cpu), fu = rel(folded, plain);
    std::printf("[fold] resnet18 64x64 batch 2 %s: folded %.2e, unfolded %.2e from the CPU's fp32; %.2e apart\n",
                to_string(p), ef, eu, fu);
    if (p == Precision::FP32) {
      EXPECT_LE(fu, 1e-4);
      EXPECT_LE(ef, 1e-4);
    } else {
      EXPECT_LE(ef, std::max(1e-2, 2 * eu)) << to_string(p);
    }
  }
}

// The folded weights are written at load time, outside any step: a captured
// inference replays the same kernels on the same buffers.
TEST(GraphFoldGpu, CapturedFoldedInferenceMatchesEager) {
  ROOFLINE_REQUIRE_GPU();
  const LayerGraph g = make_resnet18(10, {3, 32, 32});
  for (Precision p : {Precision::FP32, Precision::BF16}) {
    const auto eager = infer(g, Backend::Cuda, p, true, 4, 32),
               captured = infer(g, Backend::Cuda, p, true, 4, 32, true);
    EXPECT_LE(rel(captured, eager), 1e-6) << to_string(p);
  }
}

// PyTorch's eval logits at 224 × 224, batch 8, from folded inference networks:
// fp32 within 1e-4 of float64; bf16 within max(1e-2, 2 × PyTorch's bf16 error).
TEST(GoldenGpu, FullSizeFoldedInference) {
  ROOFLINE_REQUIRE_GPU();
  if (golden_dir().empty()) GTEST_SKIP() << "ROOFLINE_GOLDEN_DIR is not set (tools/checks/nets.sh golden writes it)";
  const auto file = [&](const char* p) {
    return golden_dir() + "/golden-resnet18-" + std::string(p) + "-224.safetensors";
  };
  ASSERT_TRUE(std::filesystem::exists(file("fp64"))) << file("fp64");
  const auto ref = SafetensorsFile::open(file("fp64")).read_f32("eval_logits");
  const LayerGraph g = make_resnet18(1000, {3, 224, 224});
  const double e32 = rel(infer(g, Backend::Cuda, Precision::FP32, true, 8, 224), ref);
  const double e16 = rel(infer(g, Backend::Cuda, Precision::BF16, true, 8, 224), ref);
  const double torch16 = rel(SafetensorsFile::open(file("bf16")).read_f32("eval_logits"), ref);
  std::printf(
      "[golden] resnet18 folded inference 224x224 batch 8 against float64: fp32 %.2e, bf16 %.2e (PyTorch bf16 %.2e)\n",
      e32, e16, torch16);
  EXPECT_LE(e32, 1e-4);
  EXPECT_LE(e16, std::max(1e-2, 2 * torch16));
}

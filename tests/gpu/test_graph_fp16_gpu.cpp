// fp16 training of the graph networks with dynamic loss scaling
// (torch.amp.GradScaler's): ResNet-18 and AlexNet at 64 × 64 follow their
// fp32 run, an overflowing step is skipped whole (parameters and the fp16
// weight copy unchanged) and counted, and a captured step skips and counts on
// the device as the eager one does.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "roofline/engine/graph_network.hpp"
#include "roofline/engine/net_bench.hpp"
#include "tests/support/golden_init.hpp"
#include "tests/support/gpu.hpp"

using namespace roofline;
using namespace roofline::engine;

namespace {

constexpr std::int64_t kBatch = 4, kSize = 64, kClasses = 10;

LayerGraph model(const std::string& name) {
  return name == "alexnet" ? make_alexnet(kClasses, {3, kSize, kSize}, 0.0f)
                           : make_resnet18(kClasses, {3, kSize, kSize});
}

GraphOptions options(Precision p, ops::LossScaleConfig cfg = {}) {
  GraphOptions o;
  o.precision = p;
  o.sgd = {0.01f, 0.9f, 0.0f};
  o.loss_scale = cfg;
  return o;
}

void start(GraphNetwork& net, const LayerGraph& g) {
  net.load_state(test::golden_state(g));
  net.set_batch(test::golden_input(kBatch, kSize), test::golden_labels(kBatch, kClasses), kBatch);
}

std::vector<std::vector<float>> learnable(const GraphNetwork& net) {
  auto s = net.state();
  for (size_t i = 0; i < s.size(); ++i)
    if (!net.graph().params()[i].learnable) s[i].clear();  // running statistics move in every training forward
  return s;
}

bool bit_equal(const std::vector<std::vector<float>>& a, const std::vector<std::vector<float>>& b) {
  for (size_t t = 0; t < a.size(); ++t)
    if (a[t].size() != b[t].size() || std::memcmp(a[t].data(), b[t].data(), a[t].size() * 4) != 0) return false;
  return true;
}

double rel(const std::vector<float>& a, const std::vector<float>& ref) {
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) num += (a[i] - ref[i]) * double(a[i] - ref[i]), den += ref[i] * double(ref[i]);
  return std::sqrt(num / den);
}

}  // namespace

// The first forward's logits: fp16 keeps 11 significant bits to bf16's 8, so
// 8× tighter than the bf16 bound of GraphGpu.Tf32AndBf16FollowFp32 (5e-2)
// rounds up to 1e-2. The losses of six steps (one eager, five replayed): the
// cross-entropy's gradient has an ℓ1 norm ≤ 2 per row, so a 1e-2 logit error
// moves a loss near ln 10 by a few 1e-2; 5% of the first loss leaves room for
// five updates from fp16 gradients. The scale starts at 1024, not GradScaler's
// 65536, so that no step backs off (every step runs, as in the fp32 run).
TEST(GraphFp16Gpu, TrainingFollowsFp32) {
  ROOFLINE_REQUIRE_GPU();
  Context ctx(Backend::Cuda);
  for (const char* name : {"resnet18", "alexnet"}) {
    const LayerGraph g = model(name);
    std::vector<float> logits[2], losses[2];
    for (int k = 0; k < 2; ++k) {
      GraphNetwork net(g, ctx, kBatch, options(k ? Precision::FP16 : Precision::FP32, {1024.0, 2.0, 0.5, 2000}));
      start(net, g);
      net.forward(kBatch, true);
      logits[k] = net.logits(kBatch);
      net.capture_train_step(kBatch);
      losses[k].push_back(net.loss());
      for (int i = 0; i < 5; ++i) {
        net.replay();
        losses[k].push_back(net.loss());
      }
      if (k) {
        EXPECT_TRUE(net.loss_scaling());
        EXPECT_EQ(net.skipped_steps(), 0) << name << ": scale now " << net.loss_scale();
        EXPECT_EQ(net.loss_scale(), 1024.0f);
      }
    }
    std::printf("[fp16] %s: first logits rel. error %.3g against fp32; losses fp32 %.4f → %.4f, fp16 %.4f → %.4f\n",
                name, rel(logits[1], logits[0]), losses[0].front(), losses[0].back(), losses[1].front(),
                losses[1].back());
    EXPECT_LT(rel(logits[1], logits[0]), 1e-2) << name;
    for (size_t i = 0; i < losses[0].size(); ++i) {
      ASSERT_TRUE(std::isfinite(losses[1][i])) << name << " step " << i;
      EXPECT_NEAR(losses[1][i], losses[0][i], 0.05 * losses[0][0]) << name << " step " << i;
    }
    if (losses[0].back() < losses[0].front())
      EXPECT_LT(losses[1].back(), losses[1].front()) << name << ": fp32 learned in these steps, fp16 did not";
  }
}

// A scale of 1e38 makes the loss gradient infinite in fp16: the step is
// skipped (parameters bit for bit, and the fp16 copy too: the next training
// forward gives the same logits), counted, and the scale halved.
TEST(GraphFp16Gpu, AnOverflowingStepIsSkipped) {
  ROOFLINE_REQUIRE_GPU();
  Context ctx(Backend::Cuda);
  const LayerGraph g = model("resnet18");
  for (OptimizerKind k : {OptimizerKind::Sgd, OptimizerKind::AdamW}) {
    GraphOptions o = options(Precision::FP16, {1e38, 2.0, 0.5, 2000});
    o.optimizer = k;
    GraphNetwork net(g, ctx, kBatch, o);
    start(net, g);
    net.forward(kBatch, true);  // plans and library choices made (the next forward repeats this one's kernels)
    net.forward(kBatch, true);
    const auto logits = net.logits(kBatch);
    const auto before = learnable(net);
    net.train_step(kBatch);
    EXPECT_TRUE(std::isfinite(net.loss()));
    EXPECT_EQ(net.skipped_steps(), 1);
    EXPECT_EQ(net.loss_scale(), static_cast<float>(static_cast<double>(1e38f) * 0.5));
    EXPECT_TRUE(bit_equal(learnable(net), before)) << "a skipped step changed the parameters";
    net.forward(kBatch, true);
    const auto again = net.logits(kBatch);
    EXPECT_EQ(std::memcmp(logits.data(), again.data(), logits.size() * 4), 0) << "the fp16 weight copy changed";
  }
}

// A captured step against the same steps run eagerly, with an overflow in the
// middle (an input past fp16's range: infinite activations, NaN gradients):
// both skip that step alone, count it on the device and halve the scale; the
// good steps' losses agree to fp32 rounding.
TEST(GraphFp16Gpu, CapturedStepsSkipAndCountOnTheDevice) {
  ROOFLINE_REQUIRE_GPU();
  Context ctx(Backend::Cuda);
  const LayerGraph g = model("resnet18");
  std::vector<float> huge = test::golden_input(kBatch, kSize);
  for (auto& v : huge) v *= 1e6f;  // fp16's largest finite value is 65504
  std::vector<float> losses[2];
  float scale[2] = {0, 0};
  for (int captured = 0; captured < 2; ++captured) {
    GraphNetwork net(g, ctx, kBatch, options(Precision::FP16, {1024.0, 2.0, 0.5, 2000}));
    start(net, g);
    auto step = [&] { captured ? net.replay() : net.train_step(kBatch); };
    if (captured)
      net.capture_train_step(kBatch);  // one eager step, then the capture
    else
      net.train_step(kBatch);
    losses[captured].push_back(net.loss());
    step();
    losses[captured].push_back(net.loss());
    ASSERT_EQ(net.skipped_steps(), 0);
    net.set_batch(huge, test::golden_labels(kBatch, kClasses), kBatch);
    const auto before = learnable(net);
    step();
    EXPECT_EQ(net.skipped_steps(), 1) << (captured ? "captured" : "eager");
    EXPECT_EQ(net.loss_scale(), 512.0f);
    EXPECT_TRUE(bit_equal(learnable(net), before)) << "the overflowing step changed the parameters";
    net.set_batch(test::golden_input(kBatch, kSize), test::golden_labels(kBatch, kClasses), kBatch);
    for (int i = 0; i < 2; ++i) {
      step();
      losses[captured].push_back(net.loss());
    }
    EXPECT_EQ(net.skipped_steps(), 1);
    EXPECT_FALSE(bit_equal(learnable(net), before)) << "the steps after the overflow did not run";
    scale[captured] = net.loss_scale();
  }
  EXPECT_EQ(scale[0], scale[1]);
  for (size_t i = 0; i < losses[0].size(); ++i) {
    ASSERT_TRUE(std::isfinite(losses[1][i])) << "step " << i;
    EXPECT_NEAR(losses[0][i], losses[1][i], 1e-4f * std::fabs(losses[0][0])) << "step " << i;
  }
}

// roofline bench's fp16 training cell: the final scale and the skipped steps
// in its params, and a warning exactly when a step was skipped.
TEST(GraphFp16Gpu, TheBenchRecordsTheScaleAndSkippedSteps) {
  ROOFLINE_REQUIRE_GPU();
  NetBenchConfig cfg;
  cfg.models = {"resnet18"};
  cfg.precisions = {Precision::FP16};
  cfg.batches = {8};
  cfg.infer = false;
  cfg.steps = 3;
  cfg.warmup = 1;
  const auto records = run_net_bench(cfg, {}, {});
  ASSERT_EQ(records.size(), 1u);
  const NetRecord& r = records[0];
  ASSERT_TRUE(r.params.contains("loss_scale") && r.params.contains("skipped_steps")) << r.params.dump();
  const auto skipped = r.params["skipped_steps"].get<std::int64_t>();
  const float scale = r.params["loss_scale"].get<float>();
  std::printf("[fp16] resnet18 224x224 b8: %lld skipped, scale %g\n", static_cast<long long>(skipped), scale);
  // 5 steps (the eager one before the capture, 1 warm-up, 3 timed) from 65536: each skip halves it.
  EXPECT_LE(skipped, 5);
  EXPECT_EQ(scale, static_cast<float>(std::ldexp(65536.0, -static_cast<int>(skipped))));
  if (skipped == 0) {
    EXPECT_TRUE(r.warnings.empty());
  } else {
    ASSERT_EQ(r.warnings.size(), 1u);
    EXPECT_NE(r.warnings[0].find(std::to_string(skipped) + " of 5 steps skipped"), std::string::npos) << r.warnings[0];
  }
}

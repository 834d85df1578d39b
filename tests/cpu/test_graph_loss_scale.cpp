// GraphNetwork's dynamic loss scaling on the CPU, forced on in fp32
// (GraphOptions::loss_scaling; fp16 itself is the GPU's: test_graph_fp16_gpu.cpp),
// on ResNet-18 at 64 × 64, batch 2 (the golden fixtures' size): a
// power-of-two scale changes no update, an overflowing step is skipped whole
// and counted, the scale grows after `interval` good steps, and AdamW's bias
// correction does not count a skipped step (as torch, where GradScaler.step
// does not call optimizer.step()).
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <memory>

#include "roofline/engine/graph_network.hpp"
#include "tests/support/golden_init.hpp"

using namespace roofline;
using namespace roofline::engine;

namespace {

constexpr std::int64_t kBatch = 2, kSize = 64;

struct Net {
  LayerGraph g = make_resnet18(1000, {3, kSize, kSize});
  Context ctx{Backend::Cpu};
  std::unique_ptr<GraphNetwork> net;
  explicit Net(GraphOptions o) {
    net = std::make_unique<GraphNetwork>(g, ctx, kBatch, o);
    net->load_state(test::golden_state(g));
    net->set_batch(test::golden_input(kBatch, kSize), test::golden_labels(kBatch, 1000), kBatch);
  }
  // The learnable parameters only: BatchNorm's running statistics move in
  // every training forward, a skipped step's too (as torch's).
  std::vector<std::vector<float>> params() const {
    auto s = net->state();
    for (size_t i = 0; i < s.size(); ++i)
      if (!g.params()[i].learnable) s[i].clear();
    return s;
  }
};

GraphOptions scaled(ops::LossScaleConfig cfg = {}) {
  GraphOptions o;
  o.loss_scaling = true;
  o.loss_scale = cfg;
  return o;
}

// max |a − b| / max |b| per tensor, the worst tensor.
double worst_rel(const std::vector<std::vector<float>>& a, const std::vector<std::vector<float>>& b) {
  double worst = 0;
  for (size_t t = 0; t < a.size(); ++t) {
    double num = 0, den = 0;
    for (size_t i = 0; i < a[t].size(); ++i) {
      num = std::max(num, std::fabs(static_cast<double>(a[t][i]) - b[t][i]));
      den = std::max(den, std::fabs(static_cast<double>(b[t][i])));
    }
    if (den > 0) worst = std::max(worst, num / den);
  }
  return worst;
}

}  // namespace

TEST(GraphLossScale, OffUnlessFp16TrainingOrForced) {
  const LayerGraph g = make_resnet18(10, {3, 32, 32});
  Context ctx(Backend::Cpu);
  GraphNetwork plain(g, ctx, 1);
  EXPECT_FALSE(plain.loss_scaling());
  EXPECT_EQ(plain.loss_scale(), 1.0f);
  EXPECT_EQ(plain.skipped_steps(), 0);
  GraphNetwork forced(g, ctx, 1, scaled());
  EXPECT_TRUE(forced.loss_scaling());
  EXPECT_EQ(forced.loss_scale(), 65536.0f);  // GradScaler's init_scale
  EXPECT_EQ(forced.skipped_steps(), 0);
}

// A power-of-two scale multiplies the loss gradient exactly, every backward
// op is linear in it (fp32 rounding is scale-invariant away from overflow and
// underflow), and the update multiplies by its exact inverse: the step is the
// unscaled one (bound 1e-6 of each tensor's largest parameter: room for a
// reduction order, none expected).
TEST(GraphLossScale, APowerOfTwoScaleChangesNoUpdate) {
  for (OptimizerKind k : {OptimizerKind::Sgd, OptimizerKind::AdamW}) {
    GraphOptions plain;
    plain.optimizer = k;
    GraphOptions o = scaled();
    o.optimizer = k;
    Net a(plain), b(o);
    for (int i = 0; i < 2; ++i) {
      a.net->train_step(kBatch);
      b.net->train_step(kBatch);
      EXPECT_EQ(a.net->loss(), b.net->loss()) << "step " << i;
    }
    EXPECT_EQ(b.net->skipped_steps(), 0);
    EXPECT_EQ(b.net->loss_scale(), 65536.0f);
    EXPECT_LT(worst_rel(b.params(), a.params()), 1e-6) << (k == OptimizerKind::Sgd ? "sgd" : "adamw");
    // The gradients themselves are the scaled ones (GradScaler unscales inside the step here).
    const auto ga = a.net->grads(), gb = b.net->grads();
    for (size_t t = 0; t < ga.size(); ++t)
      for (size_t i = 0; i < ga[t].size(); i += 97)
        ASSERT_EQ(gb[t][i], ga[t][i] * 65536.0f) << a.g.params()[t].name << "[" << i << "]";
  }
}

TEST(GraphLossScale, AnOverflowingStepIsSkippedAndCounted) {
  for (OptimizerKind k : {OptimizerKind::Sgd, OptimizerKind::AdamW}) {
    GraphOptions o = scaled({FLT_MAX, 2.0, 0.5, 2000});
    o.optimizer = k;
    Net n(o);
    const auto before = n.params();
    n.net->train_step(kBatch);
    EXPECT_TRUE(std::isfinite(n.net->loss())) << "the loss is fp32 and unscaled";
    EXPECT_EQ(n.net->skipped_steps(), 1);
    EXPECT_EQ(n.net->loss_scale(), static_cast<float>(static_cast<double>(FLT_MAX) * 0.5));
    const auto after = n.params();
    for (size_t t = 0; t < before.size(); ++t)
      for (size_t i = 0; i < before[t].size(); ++i)
        ASSERT_EQ(std::memcmp(&before[t][i], &after[t][i], 4), 0)
            << n.g.params()[t].name << "[" << i << "] changed in a skipped step";
  }
}

TEST(GraphLossScale, TheScaleGrowsAfterIntervalGoodSteps) {
  Net n(scaled({1024.0, 2.0, 0.5, 3}));
  const float expect[] = {1024, 1024, 2048, 2048, 2048, 4096};
  for (float e : expect) {
    n.net->train_step(kBatch);
    EXPECT_EQ(n.net->loss_scale(), e);
  }
  EXPECT_EQ(n.net->skipped_steps(), 0);
}

// Skipped, then a good step: AdamW's t is 1 again (t = step − skipped + 1), so
// the parameters are those of one unscaled step (t = 2 would move them 0.74×
// as far). The overflow comes from an infinite input (NaN loss and
// gradients), so that both scales are powers of two (65536, then 32768):
// AdamW's first step is lr·g/(|g| + eps), nearly lr·sign(g), and a scale that
// rounded the gradients would flip the sign of those that BatchNorm's backward
// leaves as rounding noise.
TEST(GraphLossScale, AdamWDoesNotCountASkippedStep) {
  GraphOptions plain;
  plain.optimizer = OptimizerKind::AdamW;
  GraphOptions o = scaled();
  o.optimizer = OptimizerKind::AdamW;
  Net a(plain), b(o);
  a.net->train_step(kBatch);
  auto bad = test::golden_input(kBatch, kSize);
  bad[5] = INFINITY;
  b.net->set_batch(bad, test::golden_labels(kBatch, 1000), kBatch);
  b.net->train_step(kBatch);
  EXPECT_FALSE(std::isfinite(b.net->loss()));
  ASSERT_EQ(b.net->skipped_steps(), 1);
  b.net->set_batch(test::golden_input(kBatch, kSize), test::golden_labels(kBatch, 1000), kBatch);
  b.net->train_step(kBatch);
  EXPECT_EQ(b.net->skipped_steps(), 1);
  EXPECT_EQ(b.net->loss_scale(), 32768.0f);
  EXPECT_LT(worst_rel(b.params(), a.params()), 1e-6);
}

// BERT's fine-tuning step on the CPU: the tiny BERT's loss and every
// gradient against Hugging Face's in float64 (tests/data/golden/bert-tiny/
// train.safetensors, written by peers/pytorch_bert.py golden --size tiny),
// three AdamW steps' losses against torch.optim.AdamW's, the whole model's
// gradient against finite differences of its own loss, dropout changing the
// loss but not the eval step, and bad targets refused.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "roofline/core/error.hpp"
#include "tests/support/bert_fixture.hpp"
#include "tests/support/numeric.hpp"

using namespace roofline;
using namespace roofline::engine;

namespace {

std::string tiny_dir() { return std::string(ROOFLINE_SOURCE_DIR) + "/tests/data/golden/bert-tiny"; }

double l2(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x * x;
  return std::sqrt(s);
}

double l2_error(const std::vector<float>& got, const std::vector<double>& want) {
  double s = 0;
  for (size_t i = 0; i < want.size(); ++i) s += (double(got[i]) - want[i]) * (double(got[i]) - want[i]);
  return std::sqrt(s);
}

bert::BertTrainConfig eval_step(double lr = 0) {
  bert::BertTrainConfig t;
  t.dropout = false;
  t.adamw.lr = lr;
  return t;
}

}  // namespace

TEST(BertTrain, TinyGradientsMatchHuggingFaceOnBothCpuBackends) {
  const std::string dir = tiny_dir();
  ASSERT_TRUE(std::filesystem::exists(dir + "/train.safetensors"))
      << dir << "/train.safetensors is missing: python3 peers/pytorch_bert.py golden --size tiny --out " << dir;
  const auto cfg = bert::read_bert_config(dir + "/config.json");
  const auto g = test::read_bert_golden(dir + "/golden.safetensors", "fp64");
  const auto t = test::read_bert_train_golden(dir + "/train.safetensors", cfg);
  const auto names = bert::bert_qa_tensors(cfg);
  // Some gradients are zero in exact arithmetic (the key biases: softmax ignores a constant per row; the QA
  // bias and the last LayerNorm's beta: each sequence's logit gradients sum to zero), rounding noise here:
  // each tensor is held to 1e-4 of its own norm plus 1e-6 of the whole gradient's.
  double whole = 0;
  for (const auto& [name, v] : t.grads) whole += l2(v) * l2(v);
  whole = std::sqrt(whole);
  for (Backend b : {Backend::CpuRef, Backend::Cpu}) {
    Context ctx(b);
    bert::BertQA model(cfg, ctx);
    model.load(SafetensorsFile::open(dir + "/model.safetensors"));
    model.enable_training(eval_step());
    model.stage(g.batch);
    model.stage_targets(t.start, t.end);
    model.train_step();
    EXPECT_NEAR(model.last_loss(), t.loss, 1e-5 * t.loss) << to_string(b);
    const auto grads = model.gradients();
    ASSERT_EQ(grads.size(), t.grads.size());
    for (size_t i = 0; i < grads.size(); ++i) {
      ASSERT_EQ(t.grads[i].first, names[i].name);
      ASSERT_EQ(grads[i].size(), t.grads[i].second.size()) << names[i].name;
      EXPECT_LT(l2_error(grads[i], t.grads[i].second), 1e-4 * l2(t.grads[i].second) + 1e-6 * whole)
          << to_string(b) << " " << names[i].name;
    }
  }
}

TEST(BertTrain, ThreeAdamWStepsFollowTorch) {
  const std::string dir = tiny_dir();
  ASSERT_TRUE(std::filesystem::exists(dir + "/train.safetensors"));
  const auto cfg = bert::read_bert_config(dir + "/config.json");
  const auto g = test::read_bert_golden(dir + "/golden.safetensors", "fp64");
  const auto t = test::read_bert_train_golden(dir + "/train.safetensors", cfg);
  Context ctx(Backend::Cpu);
  bert::BertQA model(cfg, ctx);
  model.load(SafetensorsFile::open(dir + "/model.safetensors"));
  model.enable_training(eval_step(1e-3));
  model.stage(g.batch);
  model.stage_targets(t.start, t.end);
  ASSERT_EQ(t.losses64.size(), 3u);
  for (size_t s = 0; s < 3; ++s) {
    model.train_step();
    EXPECT_NEAR(model.last_loss(), t.losses64[s], 1e-4 * t.losses64[s]) << "step " << s;
  }
  EXPECT_LT(t.losses64[2], t.losses64[0]);  // the fixture itself learns
}

// The analytic gradient of the whole model against central differences of its
// own loss (no fixture): a random tiny BERT, a few coordinates of every tensor.
TEST(BertTrain, GradientMatchesFiniteDifferencesOfTheLoss) {
  auto c = test::tiny_bert();
  c.hidden = 16, c.heads = 2, c.intermediate = 32, c.layers = 2, c.vocab_size = 30, c.max_positions = 16;
  Context ctx(Backend::CpuRef);
  bert::BertQA model(c, ctx);
  model.init_random(5);
  // Larger weights than BERT's 0.02, so that every path carries a gradient well above fp32's noise.
  auto p = model.host_params();
  Rng r(9);
  const auto names = bert::bert_qa_tensors(c);
  for (size_t i = 0; i < p.size(); ++i)
    for (auto& v : p[i]) v += 0.2f * r.normal();
  model.enable_training(eval_step());
  model.set_parameters(p);
  const auto batch = test::random_bert_batch(c, {6, 3}, false, 2);
  model.stage(batch);
  model.stage_targets({1, 0}, {4, 2});
  auto loss_at = [&](const std::vector<std::vector<float>>& q) {
    model.set_parameters(q);
    model.train_step();
    return double(model.last_loss());
  };
  loss_at(p);
  const auto grads = model.gradients();
  int checked = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    // The coordinate of largest gradient, and one more.
    size_t best = 0;
    for (size_t j = 1; j < grads[i].size(); ++j)
      if (std::fabs(grads[i][j]) > std::fabs(grads[i][best])) best = j;
    for (size_t j : {best, grads[i].size() / 2}) {
      const float h = 1e-2f;
      auto q = p;
      q[i][j] = p[i][j] + h;
      const double up = loss_at(q);
      q[i][j] = p[i][j] - h;
      const double down = loss_at(q);
      const double fd = (up - down) / (2 * h), an = grads[i][j];
      EXPECT_NEAR(an, fd, 2e-3 + 3e-2 * std::fabs(fd)) << names[i].name << "[" << j << "]";
      ++checked;
    }
  }
  EXPECT_EQ(checked, int(2 * p.size()));
}

TEST(BertTrain, DropoutChangesTheStepAndEvalModeDoesNot) {
  auto c = test::tiny_bert();
  Context ctx(Backend::Cpu);
  const auto batch = test::random_bert_batch(c, {9, 5, 7}, false, 3);
  auto loss = [&](bool dropout, std::uint64_t seed) {
    bert::BertQA m(c, ctx);
    m.init_random(1);
    bert::BertTrainConfig t;
    t.dropout = dropout;
    t.seed = seed;
    t.adamw.lr = 0;
    m.enable_training(t);
    m.stage(batch);
    m.stage_targets({1, 2, 3}, {3, 4, 5});
    m.train_step();
    return m.last_loss();
  };
  EXPECT_EQ(loss(false, 1), loss(false, 2));  // no dropout: the seed plays no part
  EXPECT_EQ(loss(true, 1), loss(true, 1));    // the masks are the seed's
  EXPECT_NE(loss(true, 1), loss(false, 1));
  EXPECT_NE(loss(true, 1), loss(true, 2));
}

TEST(BertTrain, BadTargetsAndPackedBatchesAreRefused) {
  auto c = test::tiny_bert();
  Context ctx(Backend::Cpu);
  bert::BertQA m(c, ctx);
  m.enable_training({});
  m.stage(test::random_bert_batch(c, {9, 5}, false, 3));
  try {
    m.stage_targets({1, 9}, {3, 4});
    FAIL() << "a start past the padded length was taken";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Input);
    EXPECT_NE(std::string(e.what()).find("outside its 9 positions"), std::string::npos) << e.what();
  }
  try {
    m.stage_targets({1}, {3});
    FAIL() << "one span for two sequences was taken";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Input);
  }
  try {
    m.stage(test::random_bert_batch(c, {9, 5}, true, 3));
    FAIL() << "a packed batch was staged for training";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
  }
}

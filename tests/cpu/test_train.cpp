// Training on the CPU: a short run on the real data reaches a sane
// accuracy, runs are deterministic, the fast and reference backends agree,
// and a diverging run stops with the step named.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>

#include "tests/cpu/test_engine_fixtures.hpp"
#include "roofline/core/error.hpp"
#include "roofline/engine/trainer.hpp"

using namespace roofline;
using namespace roofline::engine;

using roofline::test::synthetic_split;

TEST(TrainCpu, ShortRunOnFashionMnistReachesASaneAccuracy) {
  const std::string dir = default_data_dir();
  if (::access(dir.c_str(), R_OK) != 0)
    GTEST_SKIP() << dir << " is not installed (apt-get install dataset-fashion-mnist)";
  DataSplit data = load_mnist_dir(dir);
  auto model = make_model("simple-mlp");
  Context ctx(Backend::Cpu);
  TrainOptions o;
  o.batch = 64;
  o.epochs = 1;
  o.max_steps = 0;  // one epoch: 938 steps
  o.infer_reps = 5;
  TrainResult r = train_and_evaluate(ctx, *model, data, o);
  EXPECT_EQ(r.steps, 938);
  EXPECT_GE(r.test_accuracy, 0.75) << "test accuracy after one epoch at batch 64";
  EXPECT_LT(r.test_loss, 0.8);
  ASSERT_EQ(r.epochs.size(), 1u);
  EXPECT_GT(r.epochs[0].train_accuracy, 0.6);
  EXPECT_GT(r.infer_seconds.median, 0);
  EXPECT_FALSE(r.busy_fraction.has_value());  // GPU only, and never estimated
}

TEST(TrainCpu, SameSeedSameLossesAndBackendsAgree) {
  DataSplit data = synthetic_split();
  TrainOptions o;
  o.batch = 16;
  o.epochs = 2;
  o.max_steps = 10;
  o.infer_reps = 2;
  o.eval_batch = 32;
  for (const char* name : {"simple-mlp", "simple-cnn"}) {
    auto model = make_model(name);
    Context fast(Backend::Cpu), ref(Backend::CpuRef);
    TrainResult a = train_and_evaluate(fast, *model, data, o);
    TrainResult b = train_and_evaluate(fast, *model, data, o);
    TrainResult c = train_and_evaluate(ref, *model, data, o);
    ASSERT_EQ(a.first_losses.size(), 10u);
    EXPECT_EQ(a.first_losses, b.first_losses) << name << ": the same seed must give the same run";
    for (size_t i = 0; i < a.first_losses.size(); ++i)
      EXPECT_NEAR(a.first_losses[i], c.first_losses[i], 1e-4 * std::abs(c.first_losses[i]) + 1e-6)
          << name << " step " << i;
    EXPECT_EQ(a.steps, 20);
    o.seed = 99;
    TrainResult d = train_and_evaluate(fast, *model, data, o);
    EXPECT_NE(a.first_losses, d.first_losses) << name << ": another seed must change the run";
    o.seed = 1;
  }
}

TEST(TrainCpu, TheTailBatchIsTrainedToo) {
  DataSplit data = synthetic_split(100, 30);
  TrainOptions o;
  o.batch = 32;  // 3 full batches and one of 4
  o.epochs = 1;
  o.infer_reps = 1;
  auto model = make_model("simple-mlp");
  Context ctx(Backend::Cpu);
  TrainResult r = train_and_evaluate(ctx, *model, data, o);
  EXPECT_EQ(r.steps, 4);
  ASSERT_EQ(r.first_losses.size(), 4u);
  for (float l : r.first_losses) EXPECT_TRUE(std::isfinite(l) && l > 0);
}

TEST(TrainCpu, ANonFiniteLossStopsTheRunAndNamesTheStep) {
  DataSplit data = synthetic_split();
  auto model = make_model("simple-cnn");
  Context ctx(Backend::Cpu);
  for (bool every_step : {false, true}) {
    TrainOptions o;
    o.batch = 16;
    o.epochs = 3;
    o.infer_reps = 1;
    o.check_every_step = every_step;
    o.initial_params = model->init_params(1);
    o.initial_params[static_cast<size_t>(model->param_offset(6))] = std::nanf("");  // one weight of fc2
    try {
      train_and_evaluate(ctx, *model, data, o);
      FAIL() << "a run with a NaN loss must stop";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Numeric);
      EXPECT_NE(std::string(e.what()).find("at step 1 of epoch 1"), std::string::npos) << e.what();
      EXPECT_NE(e.hint().find("--lr"), std::string::npos);
    }
  }
}

TEST(TrainCpu, BadOptionsAreUsageErrors) {
  DataSplit data = synthetic_split(40, 10);
  auto model = make_model("simple-mlp");
  Context ctx(Backend::Cpu);
  auto kind_of = [&](TrainOptions o) {
    try {
      train_and_evaluate(ctx, *model, data, o);
    } catch (const Error& e) {
      return e.kind();
    }
    return ErrorKind::Internal;
  };
  TrainOptions o;
  o.batch = 0;
  EXPECT_EQ(kind_of(o), ErrorKind::Usage);
  o.batch = 41;
  EXPECT_EQ(kind_of(o), ErrorKind::Usage);
  o.batch = 8;
  o.epochs = -1;
  EXPECT_EQ(kind_of(o), ErrorKind::Usage);
  o.epochs = 1;
  o.sgd.lr = -1;
  EXPECT_EQ(kind_of(o), ErrorKind::Usage);
}

// Training on the GPU: the same seed gives the same losses as the CPU (to
// fp32 rounding), graphs change nothing, a NaN stops the run with the step
// named, and a short run on Fashion-MNIST learns.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "tests/cpu/test_engine_fixtures.hpp"
#include "roofline/core/env.hpp"
#include "roofline/core/error.hpp"
#include "roofline/engine/trainer.hpp"
#include "roofline/store/db.hpp"
#include "tests/support/gpu.hpp"

using namespace roofline;
using namespace roofline::engine;

namespace {

DataSplit data_or_synthetic() {
  for (std::string dir : {env::get(env::Var::Data).value_or(""), default_data_dir()})
    if (!dir.empty() && ::access(dir.c_str(), R_OK) == 0) return load_mnist_dir(dir);
  roofline::test::TempDir tmp;
  roofline::test::write_synthetic_mnist(tmp.path(), 2048, 256);
  return load_mnist_dir(tmp.path());
}

const DataSplit& data() {
  static const DataSplit d = data_or_synthetic();
  return d;
}

TrainOptions quick(std::int64_t batch, std::int64_t steps) {
  TrainOptions o;
  o.batch = batch;
  o.epochs = 1;
  o.max_steps = steps;
  o.infer_reps = 5;
  o.record_first_losses = steps;
  return o;
}

}  // namespace

TEST(TrainGpu, LossesAgreeWithTheCpuOverTheFirstSteps) {
  ROOFLINE_REQUIRE_GPU();
  // Both GPU paths: the fused kernels (simple-mlp, simple-cnn) and the layers.
  for (const char* name : {"simple-mlp", "simple-cnn", "ece408"})
    for (GpuPath path : {GpuPath::Auto, GpuPath::Layers}) {
      if (path == GpuPath::Layers && std::string(name) == "ece408") continue;  // auto is layers already
      auto model = make_model(name);
      Context cpu(Backend::Cpu), gpu(Backend::Cuda);
      TrainOptions o = quick(64, 20);
      TrainResult a = train_and_evaluate(cpu, *model, data(), o);
      o.gpu_path = path;
      TrainResult b = train_and_evaluate(gpu, *model, data(), o);
      ASSERT_EQ(a.first_losses.size(), 20u);
      ASSERT_EQ(b.first_losses.size(), 20u);
      for (size_t i = 0; i < 20; ++i) {
        const double tol = (i < 10 ? 2e-4 : 2e-3) * std::abs(a.first_losses[i]) + 1e-6;
        EXPECT_NEAR(a.first_losses[i], b.first_losses[i], tol) << name << " " << b.gpu_path << " step " << i + 1;
      }
    }
}

TEST(TrainGpu, GraphsAndPlainLaunchesGiveTheSameRun) {
  ROOFLINE_REQUIRE_GPU();
  auto model = make_model("simple-cnn");
  Context gpu(Backend::Cuda);
  TrainOptions o = quick(128, 37);  // 4 graphs of 8 steps and 5 single steps
  o.epochs = 2;
  o.gpu_path = GpuPath::Layers;  // graphs are the layer path's
  TrainResult g = train_and_evaluate(gpu, *model, data(), o);
  o.use_graphs = false;
  TrainResult p = train_and_evaluate(gpu, *model, data(), o);
  ASSERT_EQ(g.first_losses.size(), p.first_losses.size());
  for (size_t i = 0; i < g.first_losses.size(); ++i)
    // Same kernels in the same order; 1e-4 leaves room for a GEMM algorithm that
    // reduces with atomics (a replayed graph reading wrong data is off by far more).
    EXPECT_NEAR(g.first_losses[i], p.first_losses[i], 1e-4 * std::abs(p.first_losses[i])) << "step " << i + 1;
  EXPECT_EQ(g.steps, 74);
  EXPECT_NEAR(g.test_accuracy, p.test_accuracy, 0.002);
}

TEST(TrainGpu, TheTailBatchRunsFromItsOwnGraph) {
  ROOFLINE_REQUIRE_GPU();
  roofline::test::TempDir tmp;
  roofline::test::write_synthetic_mnist(tmp.path(), 100, 30);
  DataSplit small = load_mnist_dir(tmp.path());
  auto model = make_model("simple-mlp");
  Context cpu(Backend::Cpu), gpu(Backend::Cuda);
  TrainOptions o = quick(32, 0);  // 3 full batches and one of 4
  o.record_first_losses = 4;
  o.epochs = 2;
  o.gpu_path = GpuPath::Layers;  // the tail's graph (the fused path's tail: test_fused_gpu.cpp)
  TrainResult a = train_and_evaluate(cpu, *model, small, o);
  TrainResult b = train_and_evaluate(gpu, *model, small, o);
  EXPECT_EQ(b.steps, 8);
  ASSERT_EQ(b.first_losses.size(), 4u);
  for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(a.first_losses[i], b.first_losses[i], 1e-4 * std::abs(a.first_losses[i]));
  EXPECT_NEAR(a.test_loss, b.test_loss, 1e-3 * a.test_loss);
}

TEST(TrainGpu, ANanLossStopsTheRunAndNamesTheStep) {
  ROOFLINE_REQUIRE_GPU();
  auto model = make_model("simple-cnn");
  Context gpu(Backend::Cuda);
  for (bool every_step : {false, true}) {
    TrainOptions o = quick(64, 30);
    o.check_every_step = every_step;
    o.initial_params = model->init_params(1);
    o.initial_params[static_cast<size_t>(model->param_offset(6))] = std::nanf("");
    try {
      train_and_evaluate(gpu, *model, data(), o);
      FAIL() << "a NaN loss must stop the run";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Numeric);
      EXPECT_NE(std::string(e.what()).find("at step 1 of epoch 1"), std::string::npos) << e.what();
    }
  }
}

TEST(TrainGpu, AShortRunLearnsAndReportsNoFakeBusyFraction) {
  ROOFLINE_REQUIRE_GPU();
  auto model = make_model("simple-mlp");
  Context gpu(Backend::Cuda);
  TrainOptions o = quick(64, 0);
  TrainResult r = train_and_evaluate(gpu, *model, data(), o);
  EXPECT_GE(r.test_accuracy, 0.75);
  EXPECT_GT(r.infer_seconds.median, 0);
  if (!kernel_time_factory()) {
    EXPECT_FALSE(r.busy_fraction.has_value());
    EXPECT_NE(r.busy_note.find("CUPTI"), std::string::npos);
  }
}

// With a fused path and --gpu-path auto the inference is timed on the faster
// of the fused forward and the layer path, and the result says which and the
// two medians; a path named by the caller is the inference's path too.
TEST(TrainGpu, InferencePathIsPickedByTimingUnderAutoAndKeptWhenNamed) {
  ROOFLINE_REQUIRE_GPU();
  auto model = make_model("simple-mlp");
  Context gpu(Backend::Cuda);
  TrainOptions o = quick(1, 3);
  TrainResult a = train_and_evaluate(gpu, *model, data(), o);
  ASSERT_EQ(a.gpu_path, "fused-mlp");
  EXPECT_TRUE(a.infer_path == "fused-mlp" || a.infer_path == "layers") << a.infer_path;
  EXPECT_NE(a.infer_path_note.find("fused-mlp "), std::string::npos) << a.infer_path_note;
  EXPECT_NE(a.infer_path_note.find("layers "), std::string::npos) << a.infer_path_note;
  for (GpuPath p : {GpuPath::Fused, GpuPath::Layers}) {
    o.gpu_path = p;
    TrainResult b = train_and_evaluate(gpu, *model, data(), o);
    EXPECT_EQ(b.infer_path, p == GpuPath::Fused ? "fused-mlp" : "layers");
    EXPECT_TRUE(b.infer_path_note.empty()) << b.infer_path_note;
    EXPECT_GT(b.infer_seconds.median, 0);
  }
  Context cpu(Backend::Cpu);
  EXPECT_TRUE(train_and_evaluate(cpu, *model, data(), quick(1, 3)).infer_path.empty());
}

TEST(TrainGpu, BenchCommandFillsTheGpuColumnsAndStoresTheRuns) {
  ROOFLINE_REQUIRE_GPU();
  roofline::test::TempDir tmp;
  roofline::test::write_synthetic_mnist(tmp.path(), 512, 128);
  auto r =
      roofline::test::run_cli({"--db", tmp.file("r.db"), "--json", "bench", "simple-mlp,simple-cnn", "--device",
                               "cpu,gpu", "--batch", "32", "--epochs", "2", "--data", tmp.path(), "--infer-reps", "5"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  bool found = false;
  for (const auto& t : j["tables"])
    if (t["id"] == "table4.roofline")
      for (const auto& row : t["rows"]) {
        found = true;
        EXPECT_GT(row["gpu_train_s"].get<double>(), 0) << row;
        EXPECT_GT(row["gpu_infer_us"].get<double>(), 0) << row;
        EXPECT_NEAR(row["gpu_acc"].get<double>(), row["cpu_acc"].get<double>(), 3.0) << row;
      }
  EXPECT_TRUE(found) << r.out;
  // Every CPU run before the first GPU run: CPU runs after GPU training runs
  // in the same process read slower (docs/perf-notes.md).
  for (const auto& t : j["tables"])
    if (t["id"] == "bench.details") {
      bool gpu_seen = false;
      for (const auto& row : t["rows"]) {
        if (row["device"] == "gpu") gpu_seen = true;
        if (row["device"] == "cpu") EXPECT_FALSE(gpu_seen) << "a CPU run after a GPU run: " << row;
      }
      EXPECT_TRUE(gpu_seen);
    }
}

// bench --profile: the in-process tracer keeps each GPU training run's profile,
// and with --no-graphs every layer's passes appear as NVTX ranges with their
// kernels; the profile is stored with the run.
TEST(TrainGpu, BenchProfileMapsKernelsToLayersAndPassesAndStoresTheProfile) {
  ROOFLINE_REQUIRE_GPU();
  roofline::test::TempDir tmp;
  roofline::test::write_synthetic_mnist(tmp.path(), 512, 128);
  auto r = roofline::test::run_cli({"--db", tmp.file("r.db"), "--json", "bench", "simple-mlp", "--device", "gpu",
                                    "--mode", "train", "--batch", "32", "--epochs", "1", "--data", tmp.path(),
                                    "--no-graphs", "--profile"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  std::int64_t kernel_rows = 0, forward = 0, weight_grad = 0, optimizer = 0;
  for (const auto& t : j["tables"]) {
    if (t["id"] == "kernels") kernel_rows += static_cast<std::int64_t>(t["rows"].size());
    if (t["id"] == "nvtx")
      for (const auto& row : t["rows"]) {
        std::string path = row["path"].get<std::string>();
        if (path.rfind("simple-mlp/", 0) != 0 || row["kernels"].get<std::int64_t>() <= 0) continue;
        forward += path.find("/forward") != std::string::npos;
        weight_grad += path.find("/weight-grad") != std::string::npos;
        optimizer += path.find("/optimizer") != std::string::npos;
      }
  }
  EXPECT_GT(kernel_rows, 0) << r.out.substr(0, 4000);
  EXPECT_GE(forward, 3) << "one forward range per Linear layer with kernels";
  EXPECT_GE(weight_grad, 3);
  EXPECT_GE(optimizer, 1);
  roofline::store::Db db(tmp.file("r.db"));
  auto st = db.prepare("SELECT COUNT(*) FROM profiles WHERE label LIKE 'simple-mlp gpu batch 32%'");
  ASSERT_TRUE(st.step());
  EXPECT_EQ(st.i64(0), 1);
}

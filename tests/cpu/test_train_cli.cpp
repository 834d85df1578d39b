// `roofline bench` and `roofline ops` from the command line: every bad input
// gets a clear message and a nonzero exit, and a good run stores its results.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <thread>

#include "tests/cpu/test_engine_fixtures.hpp"
#include "roofline/cuda/runtime.hpp"
#include "roofline/store/db.hpp"
#include "tests/support/cli.hpp"

using roofline::test::run_cli;
using roofline::test::TempDir;

namespace {

struct BenchDir {
  TempDir dir;
  std::string data() const { return dir.path() + "/data"; }
  std::string db() const { return dir.file("r.db"); }
  explicit BenchDir(std::uint32_t n_train = 64, std::uint32_t n_test = 16) {
    std::string cmd = "mkdir -p " + data();
    EXPECT_EQ(std::system(cmd.c_str()), 0);
    roofline::test::write_synthetic_mnist(data(), n_train, n_test);
  }
  roofline::test::CliResult bench(std::vector<std::string> extra, const std::vector<std::string>& env = {}) const {
    std::vector<std::string> args = {"--db", db(), "bench"};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_cli(args, env);
  }
};

}  // namespace

TEST(BenchCli, ShortRunPrintsTable4AndStoresEveryResult) {
  BenchDir b;
  auto r = b.bench({"simple-mlp,simple-cnn", "--device", "cpu", "--batch", "8,16", "--epochs", "2", "--data", b.data(),
                    "--infer-reps", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("CPU Train (s)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("GPU Infer (µs)"), std::string::npos);
  EXPECT_NE(r.out.find("simple-cnn"), std::string::npos);
  roofline::store::Db db(b.db());
  auto st = db.prepare("SELECT COUNT(*), SUM(mode = 'train'), MIN(steps) FROM bench_results");
  ASSERT_TRUE(st.step());
  EXPECT_EQ(st.i64(0), 8);  // 2 models x 2 batches x (train, infer)
  EXPECT_EQ(st.i64(1), 4);
  EXPECT_EQ(st.i64(2), 2 * 4);  // 64 images at batch 16: 4 steps per epoch
  // The CPU inference's transposed weights: their preparation time is stored with every run and noted once per model.
  auto prep = db.prepare(
      "SELECT COUNT(*) FROM bench_results WHERE json_type(params, '$.infer_prepare_us') IN ('real', 'integer')");
  ASSERT_TRUE(prep.step());
  EXPECT_EQ(prep.i64(0), 8);
  EXPECT_NE(r.out.find("CPU inference of simple-mlp: every Linear layer reads its weights transposed"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("CPU inference of simple-cnn:"), std::string::npos) << r.out;
  // The host check before the CPU runs: stored with every CPU row, noted once.
  auto check = db.prepare(
      "SELECT COUNT(*), MIN(json_extract(params, '$.cpu_scaling.ratio')), MIN(json_extract(params, "
      "'$.cpu_scaling.threads')) FROM bench_results WHERE device = 'cpu'");
  ASSERT_TRUE(check.step());
  EXPECT_EQ(check.i64(0), 8);
  EXPECT_GT(check.f64(1), 0.0);
  EXPECT_GE(check.i64(2), 1);
  EXPECT_NE(r.out.find("CPU check before timing:"), std::string::npos) << r.out;
  auto layers =
      db.prepare("SELECT COUNT(*) FROM layers WHERE model = 'simple-mlp' AND pass = 'weight-grad' AND batch = 8");
  ASSERT_TRUE(layers.step());
  EXPECT_EQ(layers.i64(0), 3);  // fc1, fc2, fc3
}

// Four times as many threads as the machine has: the check before the CPU
// runs reads far under the thread count and the bench says so.
TEST(BenchCli, AnOversubscribedHostIsNamedBeforeItsCpuTimes) {
  BenchDir b;
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  const std::string threads = std::to_string(4 * hw);
  auto r = b.bench({"simple-mlp", "--device", "cpu", "--batch", "8", "--epochs", "1", "--data", b.data(),
                    "--infer-reps", "3"},
                   {"OMP_NUM_THREADS=" + threads});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("warning: CPU check before timing: " + threads + " threads"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("share cores or are contended"), std::string::npos) << r.out;
}

TEST(BenchCli, RepeatRunsEveryCellEachRoundAndPrintsTheSpread) {
  BenchDir b;
  auto r = b.bench({"simple-mlp", "--device", "cpu", "--batch", "8", "--epochs", "1", "--data", b.data(),
                    "--infer-reps", "3", "--repeat", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("CPU Train (s)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Training step over the rounds"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Single-batch inference over the rounds"), std::string::npos) << r.out;
  roofline::store::Db db(b.db());
  auto st = db.prepare(
      "SELECT COUNT(*), COUNT(DISTINCT json_extract(params, '$.round')), MIN(json_extract(params, '$.round')), "
      "MAX(json_extract(params, '$.round')) FROM bench_results WHERE mode = 'train'");
  ASSERT_TRUE(st.step());
  EXPECT_EQ(st.i64(0), 3);  // every round stored, with its number
  EXPECT_EQ(st.i64(1), 3);
  EXPECT_EQ(st.i64(2), 1);
  EXPECT_EQ(st.i64(3), 3);
}

// --repeat with a peer: a stand-in for peers/pytorch_bench.py (python3
// only) whose step time doubles each call, so the rounds are told apart.
TEST(BenchCli, RepeatPairsEachRoundWithThePeersRound) {
  if (std::system("python3 -c 'import json' > /dev/null 2>&1") != 0)
    GTEST_SKIP() << "python3 is not installed (apt-get install python3)";
  BenchDir b;
  const std::string script = b.dir.file("peer.py"), calls = b.dir.file("calls");
  {
    std::ofstream f(script);
    f << "import argparse, json, os\n"
         "p = argparse.ArgumentParser()\n"
         "for a in ('--models', '--devices', '--modes', '--batches', '--epochs', '--max-steps', '--data', '--lr',\n"
         "          '--momentum', '--weight-decay', '--seed', '--infer-reps'):\n"
         "    p.add_argument(a)\n"
         "p.add_argument('--keep-going', action='store_true')\n"
         "a = p.parse_args()\n"
         "calls = '" << calls << "'\n"
         "n = (int(open(calls).read()) if os.path.exists(calls) else 0) + 1\n"
         "open(calls, 'w').write(str(n))\n"
         "res = [dict(device=d, model=m, batch=int(bt), trained=True, epochs=1, steps=100,\n"
         "            train_seconds=0.1 * 2 ** (n - 1), infer_median_s=1e-3 * n, test_accuracy=0.5)\n"
         "       for m in a.models.split(',') for bt in a.batches.split(',') for d in a.devices.split(',')]\n"
         "print(json.dumps({'results': res}))\n";
  }
  auto r = b.bench({"simple-mlp", "--device", "cpu", "--batch", "8", "--epochs", "1", "--data", b.data(),
                    "--infer-reps", "3", "--repeat", "3", "--peer", "pytorch", "--peer-script", script});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Training step over the rounds"), std::string::npos) << r.out;
  std::ifstream in(calls);
  int n = 0;
  in >> n;
  EXPECT_EQ(n, 3) << "the peer runs once a round";
  roofline::store::Db db(b.db());
  auto st = db.prepare(
      "SELECT COUNT(*), MIN(train_seconds), MAX(train_seconds) FROM bench_results WHERE peer = 'pytorch' AND "
      "mode = 'train'");
  ASSERT_TRUE(st.step());
  EXPECT_EQ(st.i64(0), 3);
  EXPECT_DOUBLE_EQ(st.f64(1), 0.1);
  EXPECT_DOUBLE_EQ(st.f64(2), 0.4);
  // The peer's median step: round 2's, 2 ms (0.2 s / 100 steps).
  EXPECT_NE(r.out.find("2000"), std::string::npos) << r.out;
}

TEST(BenchCli, MissingDataNamesThePackageAndTheOption) {
  BenchDir b;
  auto r = b.bench({"simple-mlp", "--device", "cpu", "--data", "/nonexistent/data"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("apt-get install dataset-fashion-mnist"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--data"), std::string::npos);
}

TEST(BenchCli, TruncatedAndMismatchedFilesAreInputErrors) {
  BenchDir b;
  std::string labels = b.data() + "/train-labels-idx1-ubyte.gz";
  // 63 labels for 64 images.
  std::vector<std::uint8_t> few(63, 1);
  roofline::test::write_gz(labels, roofline::test::idx_bytes({63}, few));
  auto r = b.bench({"simple-mlp", "--device", "cpu", "--data", b.data()});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("64 images but 63 labels"), std::string::npos) << r.err;
  // A label file cut short.
  std::string full = roofline::test::idx_bytes({64}, std::vector<std::uint8_t>(64, 1));
  roofline::test::write_gz(labels, full.substr(0, full.size() - 10));
  r = b.bench({"simple-mlp", "--device", "cpu", "--data", b.data()});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("truncated"), std::string::npos) << r.err;
}

TEST(BenchCli, BadNumbersAndNamesAreUsageErrors) {
  BenchDir b;
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  std::vector<Case> cases = {
      {{"simple-mlp", "--batch", "0"}, "not positive"},
      {{"simple-mlp", "--batch", "65"}, "larger than the training set"},
      {{"simple-mlp", "--epochs", "-1"}, "cannot be negative"},
      {{"lenet"}, "unknown model 'lenet'"},
      {{"simple-mlp", "--mode", "fly"}, "unknown mode"},
      {{"simple-mlp", "--peer", "jax"}, "unknown peer"},
      {{"simple-mlp", "--repeat", "0"}, "not a number of rounds"},
  };
  for (auto& c : cases) {
    c.args.insert(c.args.end(), {"--device", "cpu", "--data", b.data()});
    auto r = b.bench(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args[0] << " " << c.args[1] << ": " << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("what to do"), std::string::npos) << r.err;
  }
}

TEST(BenchCli, ANonFiniteLossExitsNumericAndKeepsEarlierResults) {
  BenchDir b;
  auto r = b.bench({"simple-mlp,simple-cnn", "--device", "cpu", "--batch", "8", "--epochs", "2", "--lr", "1e30",
                    "--momentum", "0", "--data", b.data()});
  EXPECT_EQ(r.exit_code, 7) << r.err;
  EXPECT_NE(r.err.find("not finite"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("at step"), std::string::npos) << r.err;
  roofline::store::Db db(b.db());
  auto st = db.prepare("SELECT status FROM runs ORDER BY id DESC LIMIT 1");
  ASSERT_TRUE(st.step());
  EXPECT_EQ(st.text(0), "failed");
  auto layers = db.prepare("SELECT COUNT(*) FROM layers");  // stored before the failure, kept
  ASSERT_TRUE(layers.step());
  EXPECT_GT(layers.i64(0), 0);
}

TEST(BenchCli, ProfileWithoutAGpuTrainingRunIsAUsageError) {
  BenchDir b;
  auto r = b.bench({"simple-mlp", "--device", "cpu", "--profile", "--data", b.data()});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--profile traces GPU training runs"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--device gpu"), std::string::npos) << r.err;
}

TEST(BenchCli, KeepGoingRecordsEveryDivergedRunAndStillFailsAtTheEnd) {
  // lr 1e30 overflows every model at its second step; without --keep-going the
  // first run stops the benchmark, with it every configuration runs.
  BenchDir b;
  std::vector<std::string> args = {"simple-mlp,simple-cnn", "--device", "cpu", "--batch", "8,16", "--epochs", "2",
                                   "--lr", "1e30", "--momentum", "0", "--data", b.data(), "--infer-reps", "2"};
  auto stop = b.bench(args);
  EXPECT_EQ(stop.exit_code, 7) << stop.err;
  {
    roofline::store::Db db(b.db());
    auto st = db.prepare("SELECT COUNT(*) FROM bench_results");
    ASSERT_TRUE(st.step());
    EXPECT_EQ(st.i64(0), 0) << "the default stops at the first non-finite loss";
  }
  args.push_back("--keep-going");
  auto r = b.bench(args);
  EXPECT_EQ(r.exit_code, 7) << r.err;
  for (const char* run : {"simple-mlp cpu batch 8 at step 2 of epoch 1", "simple-mlp cpu batch 16 at step 2 of epoch 1",
                          "simple-cnn cpu batch 8 at step 2 of epoch 1", "simple-cnn cpu batch 16 at step 2 of epoch 1"})
    EXPECT_NE(r.err.find(run), std::string::npos) << run << " missing from: " << r.err;
  EXPECT_NE(r.err.find("--lr"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("diverged at step 2 of epoch 1"), std::string::npos) << r.out;  // the table's status column
  roofline::store::Db db(b.db());
  auto st = db.prepare(
      "SELECT COUNT(*), COUNT(test_accuracy), SUM(json_extract(params, '$.diverged') = 'step 2 of epoch 1') "
      "FROM bench_results WHERE run_id = (SELECT MAX(id) FROM runs)");
  ASSERT_TRUE(st.step());
  EXPECT_EQ(st.i64(0), 8);  // 2 models x 2 batches x (train, infer), each marked diverged
  EXPECT_EQ(st.i64(1), 0);  // nothing measured is stored for a diverged run
  EXPECT_EQ(st.i64(2), 8);
}

TEST(BenchCli, KeepGoingReachesThePeer) {
  if (std::system("python3 -c 'import torch' > /dev/null 2>&1") != 0)
    GTEST_SKIP() << "python3 with PyTorch is not installed (apt-get install python3-torch)";
  BenchDir b;
  auto r = b.bench({"simple-mlp", "--device", "cpu", "--batch", "8", "--epochs", "1", "--lr", "1e30", "--momentum",
                    "0", "--data", b.data(), "--infer-reps", "2", "--peer", "pytorch", "--keep-going"});
  EXPECT_EQ(r.exit_code, 7) << r.err;
  EXPECT_NE(r.err.find("roofline simple-mlp cpu batch 8 at step 2 of epoch 1"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("pytorch simple-mlp cpu batch 8 at epoch 1"), std::string::npos) << r.err;
}

TEST(BenchCli, OmpNumThreads16StoresTheSameLossesAsOne) {
  // The whole command in a child process, as on the GPU machine's 16-core host.
  BenchDir b(640, 100);
  std::vector<std::string> args = {"simple-mlp,simple-cnn", "--device", "cpu", "--batch", "128", "--epochs", "2",
                                   "--data", b.data(), "--infer-reps", "2", "--mode", "train"};
  for (const char* threads : {"OMP_NUM_THREADS=1", "OMP_NUM_THREADS=16"}) {
    auto r = b.bench(args, {threads});
    ASSERT_EQ(r.exit_code, 0) << threads << ": " << r.err;
  }
  roofline::store::Db db(b.db());
  auto st = db.prepare(
      "SELECT model, json_extract(params, '$.cpu_threads'), json_extract(params, '$.first_losses'), "
      "json_extract(params, '$.train_losses'), test_loss FROM bench_results WHERE mode = 'train' "
      "ORDER BY model, run_id");
  std::vector<std::vector<std::string>> rows;
  while (st.step()) rows.push_back({st.text(0), st.text(1), st.text(2), st.text(3), st.text(4)});
  ASSERT_EQ(rows.size(), 4u);
  for (size_t i = 0; i < rows.size(); i += 2) {
    EXPECT_EQ(rows[i][1], "1");
    EXPECT_EQ(rows[i + 1][1], "16");
    EXPECT_EQ(rows[i][2], rows[i + 1][2]) << rows[i][0] << ": per-step losses differ between 1 and 16 threads";
    EXPECT_EQ(rows[i][3], rows[i + 1][3]) << rows[i][0] << ": per-epoch losses differ";
    EXPECT_EQ(rows[i][4], rows[i + 1][4]) << rows[i][0] << ": test losses differ";
  }
}

TEST(BenchCli, AGpuAskedForWithoutOneIsADeviceError) {
  if (roofline::cuda::gpu_count() > 0) GTEST_SKIP() << "this machine has a GPU";
  BenchDir b;
  auto r = b.bench({"simple-mlp", "--device", "gpu", "--data", b.data()});
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_NE(r.err.find("--device cpu"), std::string::npos) << r.err;
}

TEST(OpsCli, ChecksPassAndUnknownOpsAreUsageErrors) {
  TempDir d;
  auto r = run_cli({"--db", d.file("r.db"), "ops", "--device", "cpu", "--cases", "2", "--op", "conv2d+relu"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("conv2d+relu"), std::string::npos);
  EXPECT_EQ(r.out.find("FAIL"), std::string::npos) << r.out;
  r = run_cli({"--db", d.file("r.db"), "ops", "--op", "matmul9"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("known ops"), std::string::npos) << r.err;
  r = run_cli({"--db", d.file("r.db"), "ops", "--perf", "--device", "cpu", "--op", "relu", "--batch", "4"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("GFLOP/s"), std::string::npos);
}

// `roofline bench --gpus` and its ranks (issue 25), what a machine without
// GPUs can check: every bad request is refused with the problem named and a
// nonzero exit, before any rank starts; the scaling table's arithmetic; the
// records a rank hands back survive the trip.
#include <gtest/gtest.h>

#include <algorithm>
#include <future>

#include "roofline/core/error.hpp"
#include "roofline/engine/net_scaling.hpp"
#include "roofline/engine/rendezvous.hpp"
#include "roofline/cuda/runtime.hpp"
#include "roofline/measure/figure.hpp"
#include "roofline/report/store_chart.hpp"
#include "roofline/store/db.hpp"
#include "roofline/store/results.hpp"
#include "tests/support/cli.hpp"

using roofline::test::run_cli;
using roofline::test::TempDir;
using namespace roofline;

TEST(ScalingCli, BadRequestsAreRefusedWithTheProblemNamed) {
  TempDir dir;
  const auto db = dir.file("r.db");
  struct Case {
    std::vector<std::string> args;
    std::vector<std::string> env;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{"--gpus", "0"}, {}, "--gpus 0"},
      {{"--gpus", "2", "--grad-dtype", "fp8"}, {}, "gradients travel as fp32 or bf16"},
      {{"--gpus", "2", "--device", "cpu"}, {}, "data-parallel runs time GPU training steps"},
      {{"--gpus", "2", "--mode", "infer"}, {}, "data-parallel runs time GPU training steps"},
      {{"--gpus", "2", "--profile"}, {}, "are for one GPU"},
      {{"--rank-out", dir.file("x.json")}, {}, "--rank-out is for the ranks bench --gpus starts"},
      {{"--gpus", "2"}, {"RANK=0", "WORLD_SIZE=2"}, "--gpus inside a launcher's job of 2 ranks"},
      {{}, {"RANK=1"}, "WORLD_SIZE"},  // a partial launcher environment
  };
  for (const auto& c : cases) {
    std::vector<std::string> args = {"--db", db, "bench", "resnet18", "--precision", "bf16"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    const auto r = run_cli(args, c.env);
    SCOPED_TRACE(c.says);
    EXPECT_NE(r.exit_code, 0) << r.out;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
  }
}

TEST(ScalingCli, BertBaseOnSeveralGpusTakesOneSequenceLengthAndTrains) {
  TempDir dir;
  const auto two = run_cli({"--db", dir.file("r.db"), "bench", "bert-base", "--gpus", "2", "--seq", "128,384"});
  EXPECT_EQ(two.exit_code, 2);
  EXPECT_NE(two.err.find("bert-base --gpus takes one --seq"), std::string::npos) << two.err;
  const auto infer = run_cli({"--db", dir.file("r.db"), "bench", "bert-base", "--gpus", "2", "--mode", "infer"});
  EXPECT_EQ(infer.exit_code, 2);
  EXPECT_NE(infer.err.find("data-parallel runs time GPU training steps"), std::string::npos) << infer.err;
  const auto ckpt = run_cli({"--db", dir.file("r.db"), "bench", "bert-base", "--gpus", "2", "--checkpoint", dir.path()});
  EXPECT_EQ(ckpt.exit_code, 2);
  EXPECT_NE(ckpt.err.find("are for one GPU"), std::string::npos) << ckpt.err;
}

TEST(ScalingCli, MoreGpusThanTheMachineHasIsRefused) {
  TempDir dir;
  const int have = cuda::gpu_count();
  const std::string ask = std::to_string(have + 1);
  const auto r = run_cli({"--db", dir.file("r.db"), "bench", "resnet18", "--precision", "bf16", "--gpus", "1," + ask});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--gpus asks for " + ask + " GPU"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(have == 0 ? "this machine has none" : "this machine has " + std::to_string(have)),
            std::string::npos)
      << r.err;
}

// Two ranks of a launcher's job that were given different arguments meet at
// the rendezvous, compare fingerprints before any GPU is touched, and both
// stop with both fingerprints printed.
TEST(ScalingCli, RanksThatDisagreeStopTogetherWithBothNamed) {
  TempDir dir;
  const std::string port = std::to_string(engine::dist::free_port());
  const auto rank = [&](int r, const std::string& batch) {
    return run_cli({"--db", dir.file("r.db"), "bench", "resnet18", "--precision", "bf16", "--batch", batch,
                    "--rank-timeout", "30"},
                   {"RANK=" + std::to_string(r), "WORLD_SIZE=2", "LOCAL_RANK=" + std::to_string(r),
                    "LOCAL_WORLD_SIZE=2", "MASTER_ADDR=127.0.0.1", "MASTER_PORT=" + port},
                   {}, 60);
  };
  auto zero = std::async(std::launch::async, rank, 0, "128");
  auto one = std::async(std::launch::async, rank, 1, "64");
  for (const auto& r : {zero.get(), one.get()}) {
    EXPECT_EQ(r.exit_code, 3) << r.err;  // Error(Input)
    EXPECT_NE(r.err.find("rank 1 runs a different build or benchmark from rank 0"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("batches 64"), std::string::npos) << r.err;
  }
}

TEST(ScalingTable, EfficiencyAndTheAddedTimeComeFromTheOneGpuRow) {
  using engine::NetRecord;
  const auto rec = [](const std::string& source, int gpus, double ms) {
    NetRecord r;
    r.source = source, r.model = "resnet18", r.device = "gpu", r.precision = "bf16", r.mode = "train";
    r.batch = 128, r.gpus = gpus, r.median_s = ms * 1e-3, r.steps = 10;
    return r;
  };
  const std::vector<NetRecord> ours = {rec("roofline", 1, 40), rec("roofline", 2, 42), rec("roofline", 4, 50)};
  const std::vector<NetRecord> ddp = {rec("pytorch-ddp", 1, 60), rec("pytorch-ddp", 2, 66)};
  const Table t = engine::net_scaling_table(ours, ddp);
  ASSERT_EQ(t.rows().size(), 3u);
  const auto num = [&](size_t row, size_t col) { return std::get<double>(t.rows()[row][col]); };
  // columns: model precision batch gpus step images/s efficiency added ddp_step ddp_images ddp_eff vs_ddp
  EXPECT_NEAR(num(1, 5), 2 * 128 / 0.042, 1e-6);    // images/s over both GPUs
  EXPECT_NEAR(num(1, 6), 100.0 * 40 / 42, 1e-9);    // efficiency
  EXPECT_NEAR(num(1, 7), 2.0, 1e-9);                // added ms
  EXPECT_NEAR(num(1, 10), 100.0 * 60 / 66, 1e-9);   // DDP's own efficiency
  EXPECT_NEAR(num(1, 11), 66.0 / 42, 1e-9);         // × DDP
  EXPECT_TRUE(std::holds_alternative<std::monostate>(t.rows()[2][8]));       // no DDP row for 4 GPUs: an empty cell, not a zero
}

TEST(ScalingRecords, ARanksRecordsSurviveTheTrip) {
  engine::NetRecord r;
  r.model = "alexnet", r.device = "gpu", r.precision = "fp32", r.mode = "train", r.batch = 64, r.gpus = 2;
  r.steps = 7, r.median_s = 0.05, r.iqr_s = 0.001, r.min_s = 0.049, r.max_s = 0.06, r.flops = 1e12, r.loss = 6.9;
  r.peak_bytes = 3e9;
  r.params = {{"buckets", 12}, {"nccl", "2.28.9"}};
  const auto back = engine::net_records_from_json(engine::net_records_to_json({r}));
  ASSERT_EQ(back.size(), 1u);
  const auto& b = back[0];
  EXPECT_EQ(b.source, "roofline");
  EXPECT_EQ(b.gpus, 2);
  EXPECT_EQ(b.batch, 64);
  EXPECT_EQ(b.steps, 7);
  EXPECT_DOUBLE_EQ(b.median_s, 0.05);
  EXPECT_DOUBLE_EQ(b.flops, 1e12);
  EXPECT_DOUBLE_EQ(*b.loss, 6.9);
  EXPECT_DOUBLE_EQ(*b.peak_bytes, 3e9);
  EXPECT_EQ(b.params["buckets"], 12);
  EXPECT_THROW(engine::net_records_from_json(nlohmann::json::object()), Error);
}

// A stored data-parallel step is a point of the device chart against the
// communication roof: per GPU, its FLOPs over the bus bytes of its
// all-reduces (gradients × 2(n−1)/n), held against the measured all-reduce
// bus bandwidth, which the chart then shows.
TEST(ScalingChart, DataParallelStepsSitUnderTheCommunicationRoof) {
  TempDir dir;
  store::Db db(dir.file("r.db"));
  const std::int64_t run = store::begin_run(db, {"bench", {"roofline", "bench"}});
  const std::int64_t dev = store::record_device(db, run, {"gpu", 0, "NVIDIA H100 80GB HBM3", "", "{}"});
  measure::Figure busbw;
  busbw.name = "nccl.allreduce.busbw";
  busbw.label = "NCCL all-reduce (sum, float)";
  busbw.unit = "B/s";
  busbw.level = "nccl";
  busbw.value = 330e9;
  (void)measure::store_figure(db, run, dev, "ceiling", busbw);
  engine::NetRecord r;
  r.model = "resnet18", r.device = "gpu", r.precision = "bf16", r.mode = "train", r.batch = 128, r.gpus = 4;
  r.steps = 10, r.median_s = 0.05, r.flops = 4 * 1.2e11;
  r.params = {{"bucket_bytes", 46.8e6}, {"gradients", "fp32"}};
  engine::store_net_record(db, run, dev, r);
  const auto devices = report::stored_devices(db, "gpu");
  ASSERT_EQ(devices.size(), 1u);
  const auto dc = report::device_chart(db, devices[0]);
  const report::ChartSeries* dp = nullptr;
  for (const auto& s : dc.chart.series)
    if (s.name.rfind("data-parallel steps", 0) == 0) dp = &s;
  ASSERT_NE(dp, nullptr);
  ASSERT_EQ(dp->points.size(), 1u);
  const double bus = 46.8e6 * 2 * 3 / 4;
  EXPECT_NEAR(dp->points[0].ai, 1.2e11 / bus, 1e-6);
  EXPECT_NEAR(dp->points[0].flops, 1.2e11 / 0.05, 1e3);
  ASSERT_TRUE(dp->points[0].percent_of_roof.has_value());
  // At this AI the link's roof (AI × 330 GB/s) is under the bf16 tensor roof: the step's share of it.
  EXPECT_NEAR(*dp->points[0].percent_of_roof, 100 * (1.2e11 / 0.05) / (1.2e11 / bus * 330e9), 1e-6);
  const auto& shown = dc.chart.shown_ceilings;
  EXPECT_NE(std::find(shown.begin(), shown.end(), "nccl.allreduce.busbw"), shown.end());
}

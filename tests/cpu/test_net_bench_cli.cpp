// `roofline bench` with the networks: bad input gets a clear message and a
// nonzero exit; a CPU cell runs and is stored with its precision.
#include <gtest/gtest.h>

#include <limits>

#include "roofline/engine/graph_network.hpp"
#include "roofline/engine/graph_weights.hpp"
#include "roofline/engine/layer_graph.hpp"
#include "roofline/engine/net_bench.hpp"
#include "roofline/store/db.hpp"
#include "roofline/store/results.hpp"
#include "roofline/report/store_chart.hpp"
#include "roofline/profiler/profile_store.hpp"
#include "tests/support/cli.hpp"

using roofline::test::run_cli;
using roofline::test::TempDir;

TEST(NetBenchCli, UnknownPrecisionIsNamed) {
  TempDir dir;
  const auto r = run_cli({"--db", dir.file("r.db"), "bench", "resnet18", "--device", "cpu", "--precision", "fp8"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("unknown precision 'fp8'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("bf16"), std::string::npos) << r.err;
}

TEST(NetBenchCli, SmallModelsAndNetworksAreSeparateCalls) {
  TempDir dir;
  const auto r = run_cli({"--db", dir.file("r.db"), "bench", "simple-mlp,alexnet", "--device", "cpu"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("separate calls"), std::string::npos) << r.err;
}

TEST(NetBenchCli, Bf16OnTheCpuAloneIsRefused) {
  TempDir dir;
  const auto r = run_cli({"--db", dir.file("r.db"), "bench", "resnet18", "--device", "cpu", "--precision", "bf16"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("GPU only"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--precision fp32"), std::string::npos) << r.err;
}

TEST(NetBench, PeerJsonParsesAndTheTableShowsBothRatios) {
  const nlohmann::json j = nlohmann::json::parse(R"({"peer": "pytorch", "records": [
    {"source": "pytorch", "model": "resnet18", "device": "gpu", "precision": "bf16", "batch": 128, "mode": "train",
     "median_s": 0.012, "peak_bytes": 1.8e9, "loss": null},
    {"source": "pytorch-compile", "model": "resnet18", "device": "gpu", "precision": "bf16", "batch": 128,
     "mode": "train", "median_s": 0.009}]})");
  const auto peer = roofline::engine::parse_net_peer_json(j);
  ASSERT_EQ(peer.size(), 2u);
  EXPECT_FALSE(peer[0].loss.has_value());
  EXPECT_GT(peer[0].flops, 1e12);  // a bf16 ResNet-18 step at batch 128 is about 1.4 TFLOP
  EXPECT_LT(peer[0].flops, 1.6e12);
  roofline::engine::NetRecord ours = peer[0];
  ours.source = "roofline";
  ours.median_s = 0.006;
  const auto t = roofline::engine::net_peer_table({ours}, peer);
  ASSERT_EQ(t.rows().size(), 1u);
  EXPECT_DOUBLE_EQ(std::get<double>(t.rows()[0][8]), 2.0);  // × eager
  EXPECT_DOUBLE_EQ(std::get<double>(t.rows()[0][9]), 1.5);  // × compile
}

TEST(NetBenchCli, WeightsOfAnotherModelAreRefusedNamingTheTensors) {
  TempDir dir;
  roofline::test::write_file(dir.file("w.safetensors"), "not a safetensors file");
  auto r = run_cli({"--db", dir.file("r.db"), "bench", "resnet18", "--device", "cpu", "--weights",
                    dir.file("w.safetensors")});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("w.safetensors"), std::string::npos) << r.err;
}

// A CPU cell: stored with the ceiling its rate is held against, and the
// detail table gives the share of it that the engine's FLOPs over the median
// time make.
TEST(NetBenchCli, ACpuCellIsHeldAgainstItsCeiling) {
  TempDir dir;
  const auto r = run_cli({"--db", dir.file("r.db"), "bench", "alexnet", "--device", "cpu", "--batch", "1", "--mode",
                          "infer", "--steps", "1", "--warmup", "0"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("of ceiling"), std::string::npos) << r.out;
  roofline::store::Db db(dir.file("r.db"));
  auto st = db.prepare(
      "SELECT json_extract(params, '$.ceiling.name'), json_extract(params, '$.ceiling.flops'), flops, step_median_s "
      "FROM bench_results WHERE model = 'alexnet' AND mode = 'infer'");
  ASSERT_TRUE(st.step());
  EXPECT_EQ(st.text(0), "fp32.simd");
  EXPECT_GT(st.f64(1), 1e9);  // any CPU with an FMA unit
  EXPECT_GT(st.f64(2), 1e9);  // AlexNet's forward: about 1.4 GFLOP per image
  EXPECT_GT(st.f64(3), 0);
}

// The CPU runs the networks channels-last unless --layout says otherwise; the
// store keeps which; an unknown layout is named. The rule: default_format.
TEST(NetBenchCli, TheCpuDefaultsToNhwcAndLayoutChoosesIt) {
  using roofline::engine::Backend;
  using roofline::engine::MemoryFormat;
  using roofline::engine::Precision;
  EXPECT_EQ(roofline::engine::default_format(Backend::Cpu, Precision::FP32), MemoryFormat::NHWC);
  EXPECT_EQ(roofline::engine::default_format(Backend::CpuRef, Precision::FP32), MemoryFormat::NCHW);
  EXPECT_EQ(roofline::engine::default_format(Backend::Cuda, Precision::FP32), MemoryFormat::NCHW);
  EXPECT_EQ(roofline::engine::default_format(Backend::Cuda, Precision::TF32), MemoryFormat::NCHW);
  EXPECT_EQ(roofline::engine::default_format(Backend::Cuda, Precision::BF16), MemoryFormat::NHWC);
  TempDir dir;
  for (const char* layout : {"", "nchw"}) {
    std::vector<std::string> args = {"--db", dir.file("r.db"), "bench", "alexnet", "--device", "cpu", "--batch", "1",
                                     "--mode", "infer", "--steps", "1", "--warmup", "0"};
    if (*layout) args.insert(args.end(), {"--layout", layout});
    const auto r = run_cli(args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  roofline::store::Db db(dir.file("r.db"));
  auto st = db.prepare("SELECT json_extract(params, '$.format') FROM bench_results WHERE model = 'alexnet' ORDER BY id");
  ASSERT_TRUE(st.step());
  EXPECT_EQ(st.text(0), "nhwc");
  ASSERT_TRUE(st.step());
  EXPECT_EQ(st.text(0), "nchw");
  const auto bad = run_cli({"--db", dir.file("r.db"), "bench", "alexnet", "--device", "cpu", "--layout", "chwn"});
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_NE(bad.err.find("unknown layout 'chwn'"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("--layout nhwc"), std::string::npos) << bad.err;
}

TEST(NetBenchCli, ProfileWithoutAGpuIsRefused) {
  TempDir dir;
  const auto r = run_cli({"--db", dir.file("r.db"), "bench", "alexnet", "--device", "cpu", "--profile"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--profile"), std::string::npos) << r.err;
}

TEST(NetBench, DetailTableGivesTheShareOfTheCeiling) {
  roofline::engine::NetRecord r;
  r.model = "resnet18", r.device = "gpu", r.precision = "bf16", r.mode = "train", r.batch = 128;
  r.median_s = 0.01, r.flops = 1.4e12;
  r.ceiling_name = "bf16.tensor", r.ceiling_source = "measured", r.ceiling_flops = 7e14;
  r.busy_fraction = 0.97;
  const auto t = roofline::engine::net_detail_table({r});
  ASSERT_EQ(t.rows().size(), 1u);
  EXPECT_NEAR(std::get<double>(t.rows()[0][8]), 140.0, 1e-9);  // TFLOP/s
  EXPECT_NEAR(std::get<double>(t.rows()[0][9]), 20.0, 1e-9);   // % of 700 TFLOP/s
  EXPECT_NEAR(std::get<double>(t.rows()[0][11]), 97.0, 1e-9);  // busy %
}

// Kernel time by NVTX range becomes time per layer and pass; ranges no layer
// owns are counted as outside.
TEST(NetBench, LayerTableMapsRangesToLayersAndPasses) {
  roofline::engine::NetRecord r;
  r.model = "resnet18", r.device = "gpu", r.precision = "bf16", r.mode = "train", r.batch = 128;
  const std::map<std::string, double> ns = {{"resnet18/conv1/forward", 3e6},
                                            {"resnet18/layer1.0.bn1/input-grad", 1e6},
                                            {"resnet18/optimizer/optimizer", 2e6},
                                            {"", 4e6}};
  const auto rows = roofline::engine::net_layer_rows(r, ns, 2);
  const auto t = roofline::engine::net_layer_table(r, rows, 2, 0);
  ASSERT_GE(t.rows().size(), 3u);
  EXPECT_EQ(std::get<std::string>(t.rows()[0][0]), "conv1");  // the longest first
  EXPECT_EQ(std::get<std::string>(t.rows()[0][2]), "forward");
  EXPECT_NEAR(std::get<double>(t.rows()[0][3]), 1.5, 1e-9);  // 3 ms over 2 steps
  EXPECT_NEAR(std::get<double>(t.rows()[0][4]), 30.0, 1e-9);  // of 10 ms
  EXPECT_GT(std::get<double>(t.rows()[0][5]), 10.0);         // conv1 forward at batch 128: ~15 GFLOP
  EXPECT_EQ(std::get<std::string>(t.rows()[1][0]), "optimizer");
  bool outside = false;
  for (const auto& n : t.notes()) outside |= n.find("40.0% outside any layer") != std::string::npos;
  EXPECT_TRUE(outside);
  // Every layer pass is stored (the chart's layer points), in the graph's order, with the cell's precision and mode.
  TempDir dir;
  roofline::store::Db db(dir.file("r.db"));
  const std::int64_t run = roofline::store::begin_run(db, {"bench", {"roofline", "bench"}});
  roofline::engine::store_net_layers(db, run, std::nullopt, r, std::nullopt, rows);
  auto st = db.prepare("SELECT COUNT(*), SUM(seconds), MIN(precision), MIN(mode) FROM layers WHERE run_id = ?");
  st.bind(1, run);
  ASSERT_TRUE(st.step());
  EXPECT_EQ(st.i64(0), std::int64_t(rows.rows.size()));
  EXPECT_NEAR(st.f64(1), 3e-3, 1e-12);  // 1.5 + 0.5 + 1 ms per step
  EXPECT_EQ(st.text(2), "bf16");
  EXPECT_EQ(st.text(3), "train");
  auto first = db.prepare("SELECT layer_name, pass, seconds FROM layers WHERE run_id = ? ORDER BY id LIMIT 1");
  first.bind(1, run);
  ASSERT_TRUE(first.step());
  EXPECT_EQ(first.text(0), "conv1");
  EXPECT_EQ(first.text(1), "forward");
}

// The largest batch that fits, from the planned bytes at batch 1 and 2.
TEST(NetBench, LargestBatchThatFitsIsAffineInTheBatch) {
  using roofline::engine::largest_batch_that_fits;
  // 100 fixed + 10 per image: batch 1 plans 110, batch 2 120.
  EXPECT_EQ(largest_batch_that_fits(110, 120, 1000, 0), 90);    // 100 + 90 * 10 = 1000
  EXPECT_EQ(largest_batch_that_fits(110, 120, 1009, 0), 90);    // 91 would need 1010
  EXPECT_EQ(largest_batch_that_fits(110, 120, 1000, 500), 40);  // the margin comes off first
  EXPECT_EQ(largest_batch_that_fits(110, 120, 105, 0), 0);      // not even one image
  EXPECT_EQ(largest_batch_that_fits(110, 110, 1000, 0), 0);     // no per-image bytes: nothing to say
}

// Weights with a NaN: the training loss is NaN; the cell is stored and shown,
// and the bench exits with the numeric-error status naming it.
TEST(NetBenchCli, ANonFiniteLossFailsTheRunNamingTheCell) {
  TempDir dir;
  const auto g = roofline::engine::make_graph_model("resnet18");
  auto state = g.init_params(1);
  state[0][0] = std::numeric_limits<float>::quiet_NaN();  // conv1.weight
  roofline::engine::write_state(g, state, dir.file("nan.safetensors"));
  const auto r = run_cli({"--db", dir.file("r.db"), "bench", "resnet18", "--device", "cpu", "--batch", "1", "--mode",
                          "train", "--steps", "1", "--warmup", "0", "--weights", dir.file("nan.safetensors")});
  EXPECT_EQ(r.exit_code, 7) << r.err;
  EXPECT_NE(r.err.find("NaN or Inf"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("resnet18 cpu fp32 batch 1"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("roofline per cell"), std::string::npos) << r.out;  // the tables came first
  roofline::store::Db db(dir.file("r.db"));
  auto st = db.prepare("SELECT COUNT(*) FROM bench_results WHERE model = 'resnet18'");
  ASSERT_TRUE(st.step());
  EXPECT_EQ(st.i64(0), 1);
}

// bench --counters: what the counters saw of each layer's pass sits beside
// its paper figures, with their ratio and the unit that did the work, and is
// stored in the layers' counted columns (NULL for a layer not counted).
TEST(NetBench, CountedLayersStandBesideThePaperFigures) {
  roofline::engine::NetRecord r;
  r.model = "resnet18", r.device = "gpu", r.precision = "bf16", r.mode = "train", r.batch = 128;
  const std::map<std::string, double> ns = {{"resnet18/conv1/forward", 3e6}, {"resnet18/fc/forward", 1e6}};
  const auto paper = roofline::engine::net_layer_rows(r, ns, 1);
  double conv1_flops = 0;
  for (const auto& x : paper.rows)
    if (x.layer == "conv1" && x.pass == "forward") conv1_flops = x.flops;
  ASSERT_GT(conv1_flops, 0);
  roofline::engine::CountedWork c;
  c.flops = 1.25 * conv1_flops, c.tensor_flops = 1.2 * conv1_flops;
  c.by_unit = {{"tensor.bf16", 1.2 * conv1_flops}, {"cuda.fp32", 0.05 * conv1_flops}};
  c.dram_bytes = 50e6, c.l2_bytes = 200e6, c.seconds = 1e-3, c.kernels = 2;
  const auto rows = roofline::engine::net_layer_rows(r, ns, 1, {{"resnet18/conv1/forward", c}});
  ASSERT_TRUE(rows.counted_total);
  EXPECT_EQ(rows.counted_total->kernels, 2);
  const auto t = roofline::engine::net_counter_table(r, rows, 0);
  ASSERT_FALSE(t.rows().empty());
  EXPECT_EQ(std::get<std::string>(t.rows()[0][0]), "conv1");
  EXPECT_NEAR(std::get<double>(t.rows()[0][4]), 1.25, 1e-9);  // counted / paper
  EXPECT_NE(std::get<std::string>(t.rows()[0][5]).find("tensor.bf16 (96%)"), std::string::npos);
  EXPECT_NEAR(std::get<double>(t.rows()[0][7]), 50.0, 1e-9);  // DRAM MB
  // A layer the counters ran but saw no kernel in counts zero, not unknown.
  bool fc_zero = false;
  for (const auto& row : t.rows())
    if (std::get<std::string>(row[0]) == "fc" && std::get<std::string>(row[1]) == "forward")
      fc_zero = std::get<double>(row[3]) == 0.0;
  EXPECT_TRUE(fc_zero);

  TempDir dir;
  roofline::store::Db db(dir.file("r.db"));
  const std::int64_t run = roofline::store::begin_run(db, {"bench", {"roofline", "bench"}});
  roofline::engine::store_net_layers(db, run, std::nullopt, r, std::nullopt, rows);
  auto st = db.prepare(
      "SELECT counted_flops, counted_tensor_flops, counted_dram_bytes, counted_l2_bytes, "
      "json_extract(counted_by_unit, '$.\"tensor.bf16\"') FROM layers WHERE run_id = ? AND layer_name = 'conv1' "
      "AND pass = 'forward'");
  st.bind(1, run);
  ASSERT_TRUE(st.step());
  EXPECT_NEAR(st.f64(0), 1.25 * conv1_flops, 1.0);
  EXPECT_NEAR(st.f64(1), 1.2 * conv1_flops, 1.0);
  EXPECT_NEAR(st.f64(2), 50e6, 1e-3);
  EXPECT_NEAR(st.f64(3), 200e6, 1e-3);
  EXPECT_NEAR(st.f64(4), 1.2 * conv1_flops, 1.0);
  roofline::store::Db uncounted_db(dir.file("u.db"));
  const std::int64_t run2 = roofline::store::begin_run(uncounted_db, {"bench", {"roofline", "bench"}});
  roofline::engine::store_net_layers(uncounted_db, run2, std::nullopt, r, std::nullopt, paper);
  auto none = uncounted_db.prepare("SELECT COUNT(*) FROM layers WHERE counted_flops IS NOT NULL");
  ASSERT_TRUE(none.step());
  EXPECT_EQ(none.i64(0), 0);
}

// An inference cell's layers carry the forward as it ran: with BatchNorm
// folded, the convolution does the pair's work and the BatchNorm only its
// residual add (bn1 has none: no row unless a kernel ran there).
TEST(NetBench, InferenceLayersCostWhatRanFoldedOrNot) {
  roofline::engine::NetRecord r;
  r.model = "resnet18", r.device = "gpu", r.precision = "bf16", r.mode = "infer", r.batch = 8;
  const std::map<std::string, double> ns = {{"resnet18/conv1/forward", 1e6}};
  const auto flops_of = [](const roofline::engine::NetLayerRows& rows, const std::string& layer) {
    for (const auto& x : rows.rows)
      if (x.layer == layer) return x.flops;
    return -1.0;
  };
  r.batchnorm_folded = false;
  const auto separate = roofline::engine::net_layer_rows(r, ns, 1);
  r.batchnorm_folded = true;
  const auto folded = roofline::engine::net_layer_rows(r, ns, 1);
  EXPECT_GT(flops_of(separate, "bn1"), 0.0);
  EXPECT_EQ(flops_of(folded, "bn1"), -1.0);  // folded away: no work, no kernel, no row
  EXPECT_GT(flops_of(folded, "conv1"), flops_of(separate, "conv1"));  // plus the folded bias (and ReLU)
  EXPECT_GT(flops_of(folded, "layer1.0.bn2"), 0.0);                   // its residual add
  EXPECT_LT(flops_of(folded, "layer1.0.bn2"), flops_of(separate, "layer1.0.bn2"));
}

TEST(NetBenchCli, CountersNeedAProfiledNetwork) {
  TempDir dir;
  const auto alone = run_cli({"--db", dir.file("r.db"), "bench", "resnet18", "--device", "cpu", "--counters"});
  EXPECT_EQ(alone.exit_code, 2);
  EXPECT_NE(alone.err.find("add --profile"), std::string::npos) << alone.err;
  const auto small = run_cli({"--db", dir.file("r.db"), "bench", "simple-cnn", "--counters"});
  EXPECT_EQ(small.exit_code, 2);
  EXPECT_NE(small.err.find("--counters is for the networks"), std::string::npos) << small.err;
  const auto bf16 = run_cli({"--db", dir.file("r.db"), "bench", "simple-cnn", "--precision", "bf16"});
  EXPECT_EQ(bf16.exit_code, 2);
  EXPECT_NE(bf16.err.find("fp32 only"), std::string::npos) << bf16.err;
}

// A profiled cell's stored layers become the device chart's points: a series
// per pass (layers with FLOPs and time), the whole step in its own series,
// each point held against the precision's roof; the chart shows that roof,
// DRAM, L2 and fp32.cuda, and hides the rest.
TEST(NetBench, StoredLayersAreTheDeviceChartsPoints) {
  roofline::engine::NetRecord r;
  r.model = "resnet18", r.device = "gpu", r.precision = "bf16", r.mode = "train", r.batch = 128;
  const std::map<std::string, double> ns = {{"resnet18/conv1/forward", 3e6},
                                            {"resnet18/conv1/weight-grad", 2e6},
                                            {"resnet18/bn1/forward", 1e6},
                                            {"resnet18/optimizer/optimizer", 2e6}};
  const auto rows = roofline::engine::net_layer_rows(r, ns, 2);
  TempDir dir;
  roofline::store::Db db(dir.file("r.db"));
  const std::int64_t run = roofline::store::begin_run(db, {"bench", {"roofline", "bench"}});
  const std::int64_t dev = roofline::store::record_device(db, run, {"gpu", 0, "NVIDIA H200", "", "{}"});
  roofline::engine::store_net_layers(db, run, dev, r, std::nullopt, rows);
  const auto devices = roofline::report::stored_devices(db, "gpu");
  ASSERT_EQ(devices.size(), 1u);
  const auto dc = roofline::report::device_chart(db, devices[0]);
  std::map<std::string, size_t> points;
  for (const auto& s : dc.chart.series) points[s.name] = s.points.size();
  EXPECT_EQ(points["resnet18 bf16 b128 train · forward"], 2u);  // conv1 and bn1
  EXPECT_EQ(points["resnet18 bf16 b128 train · weight-grad"], 1u);
  ASSERT_EQ(points.count("whole steps (paper FLOPs and bytes over the kernel time)"), 1u);
  const auto& conv1 = dc.chart.series[0].points[0];
  EXPECT_EQ(conv1.name, "conv1 (conv2d)");
  ASSERT_TRUE(conv1.seconds.has_value());
  EXPECT_NEAR(*conv1.seconds, 1.5e-3, 1e-12);
  EXPECT_TRUE(conv1.percent_of_roof.has_value());  // against the H200 datasheet's bf16 tensor roof and DRAM
  const auto& shown = dc.chart.shown_ceilings;
  EXPECT_NE(std::find(shown.begin(), shown.end(), "bf16.tensor"), shown.end());
  EXPECT_NE(std::find(shown.begin(), shown.end(), "dram"), shown.end());
  EXPECT_EQ(std::find(shown.begin(), shown.end(), "fp64.cuda"), shown.end());
}

// The newest profile with counters on this GPU puts its kernels on the chart:
// counted FLOPs (register moves left out) over counted DRAM bytes, held against
// the roof of the precision most of their FLOPs ran in, which the chart then shows.
TEST(NetBench, CountedKernelsAreOnTheDeviceChart) {
  TempDir dir;
  roofline::store::Db db(dir.file("r.db"));
  const std::int64_t run = roofline::store::begin_run(db, {"profile", {"roofline", "profile"}});
  (void)roofline::store::record_device(db, run, {"gpu", 0, "NVIDIA H200", "", "{}"});
  roofline::prof::ProfileData p;
  p.command = "python3 train.py";
  p.exit_status = "exited 0";
  p.complete = true;
  p.devices = {"NVIDIA H200"};
  roofline::prof::KernelCounters gemm;
  gemm.kernel = "sm90_xmma_gemm_bf16bf16_bf16f32";
  gemm.instances = 10;
  gemm.duration_ns = 2e6;
  gemm.tensor_flops = {{"bf16", 1e12}};
  gemm.flops = {{"fp32", 1e9}};
  gemm.dram_read_bytes = 1e9, gemm.dram_write_bytes = 5e8;
  roofline::prof::KernelCounters copy;  // no FLOPs: not drawn
  copy.kernel = "copy_kernel";
  copy.instances = 1, copy.duration_ns = 1e5, copy.dram_read_bytes = 1e8;
  p.counters = {gemm, copy};
  (void)roofline::prof::store_profile(db, run, p, "train");
  const auto devices = roofline::report::stored_devices(db, "gpu");
  ASSERT_EQ(devices.size(), 1u) << "a device with only a counted profile is still charted";
  const auto dc = roofline::report::device_chart(db, devices[0]);
  const roofline::report::ChartSeries* kernels = nullptr;
  for (const auto& s : dc.chart.series)
    if (s.name.rfind("kernels, counted", 0) == 0) kernels = &s;
  ASSERT_NE(kernels, nullptr);
  ASSERT_EQ(kernels->points.size(), 1u);
  EXPECT_NEAR(kernels->points[0].ai, (1e12 + 1e9) / 1.5e9, 1e-6);
  EXPECT_NEAR(kernels->points[0].flops, (1e12 + 1e9) / 2e-3, 1e3);
  const auto& shown = dc.chart.shown_ceilings;
  EXPECT_NE(std::find(shown.begin(), shown.end(), "bf16.tensor"), shown.end());
}

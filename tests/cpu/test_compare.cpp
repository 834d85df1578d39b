// roofline compare: two devices from one store — ceilings side by side, a
// shared cell's layers split by where they sit on the first device's
// roofline, the ratio each roof predicts beside the measured one — and its
// bad input.
#include <gtest/gtest.h>

#include <map>

#include "roofline/core/error.hpp"
#include "roofline/engine/net_bench.hpp"
#include "roofline/report/compare.hpp"
#include "roofline/store/results.hpp"
#include "tests/support/cli.hpp"

using namespace roofline;
using roofline::test::run_cli;
using roofline::test::TempDir;

namespace {

// A device with DRAM `bw` and bf16 tensor `peak`, and a ResNet-18 bf16 cell
// whose memory-bound layers take `mem_s` and compute-bound ones `comp_s` each.
void add_device(store::Db& db, const std::string& name, double bw, double peak, double time_scale) {
  const std::int64_t run = store::begin_run(db, {"bench", {"roofline", "bench"}});
  const std::int64_t dev = store::record_device(db, run, {"gpu", 0, name, "", "{}"});
  for (auto [id, v, unit] : {std::tuple{"dram.read", bw, "B/s"}, std::tuple{"bf16.tensor", peak, "FLOP/s"},
                             std::tuple{"fp32.cuda", 60e12, "FLOP/s"}, std::tuple{"l2.read", 8e12, "B/s"}}) {
    store::MeasurementRecord m;
    m.run_id = run, m.device_id = dev, m.category = "ceiling", m.name = id, m.unit = unit, m.value = v;
    const std::string level = std::string(id).substr(0, std::string(id).find('.'));
    m.params_json = std::string(unit) == "B/s" ? R"({"level": ")" + level + R"("})" : "{}";
    store::add_measurement(db, m);
  }
  engine::NetRecord r;
  r.model = "resnet18", r.device = "gpu", r.precision = "bf16", r.mode = "train", r.batch = 128;
  // conv1 forward (AI ~124: under the slope at 900 TFLOP/s over 3 TB/s), layer4.0.conv2 forward (AI ~1700:
  // under the roof), bn1 forward (memory).
  const std::map<std::string, double> ns = {{"resnet18/conv1/forward", 3e6 * time_scale},
                                            {"resnet18/layer4.0.conv2/forward", 1e6 * time_scale},
                                            {"resnet18/bn1/forward", 2e6 * time_scale}};
  engine::store_net_layers(db, run, dev, r, std::nullopt, engine::net_layer_rows(r, ns, 1));
  store::finish_run(db, run, 0);
}

}  // namespace

TEST(Compare, SplitsTheDifferenceByRoofAndPredictsEachPart) {
  TempDir dir;
  store::Db db(dir.file("r.db"));
  add_device(db, "Test A100", 2e12, 300e12, 1.0);
  add_device(db, "Test H100", 3e12, 900e12, 0.5);
  const auto a = report::find_stored_device(db, "a100"), b = report::find_stored_device(db, "H100");
  const auto c = report::compare_devices(db, {a, b}, {});
  ASSERT_GE(c.tables.size(), 2u);
  const Table& ceilings = c.tables[0];
  bool dram = false;
  for (const auto& row : ceilings.rows())
    if (std::get<std::string>(row[0]) == "dram") {
      dram = true;
      EXPECT_NEAR(std::get<double>(row[3]), 1.5, 1e-9);  // 3 over 2 TB/s
    }
  EXPECT_TRUE(dram);
  const Table& cells = c.tables[1];
  std::map<std::string, std::vector<Cell>> by;
  for (const auto& row : cells.rows()) by[std::get<std::string>(row[1])] = row;
  ASSERT_TRUE(by.count("every layer"));
  EXPECT_NEAR(std::get<double>(by["every layer"][5]), 2.0, 1e-9);  // every layer twice as fast
  ASSERT_TRUE(by.count("under the DRAM slope"));
  EXPECT_NEAR(std::get<double>(by["under the DRAM slope"][6]), 1.5, 1e-9);  // the bandwidths' ratio
  ASSERT_TRUE(by.count("under the compute roof"));
  EXPECT_NEAR(std::get<double>(by["under the compute roof"][6]), 3.0, 1e-9);  // the peaks' ratio
  EXPECT_EQ(c.chart.roofs.size(), 2u);
  ASSERT_EQ(c.chart.series.size(), 2u);
  EXPECT_EQ(c.chart.series[0].points.size(), 3u);
  EXPECT_EQ(c.chart_cell, "resnet18 bf16 b128 train");
}

TEST(CompareCli, BadDevicesAreNamed) {
  TempDir dir;
  {
    store::Db db(dir.file("r.db"));
    add_device(db, "Test A100", 2e12, 300e12, 1.0);
    add_device(db, "Test H100", 3e12, 900e12, 0.5);
  }
  auto r = run_cli({"--db", dir.file("r.db"), "compare", "A100"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("two or more devices"), std::string::npos) << r.err;
  r = run_cli({"--db", dir.file("r.db"), "compare", "A100", "V100"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("no device in the store matches 'V100'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("'Test H100'"), std::string::npos) << r.err;
  r = run_cli({"--db", dir.file("r.db"), "compare", "Test", "A100"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("matches 2 devices"), std::string::npos) << r.err;
  r = run_cli({"--db", dir.file("r.db"), "compare", "A100", "H100", "--out", dir.file("out")});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("under the DRAM slope"), std::string::npos) << r.out;
  EXPECT_TRUE(std::filesystem::exists(dir.file("out") + "/compare-test-a100-vs-test-h100.html"));
}

// The time model: only the part of a layer's time its DRAM traffic (or its
// FLOPs) take at the first device's roof scales; counted figures win over paper.
TEST(Compare, TheTimeModelScalesOnlyTheRoofsPart) {
  report::StoredLayer l;
  l.seconds = 1e-3, l.flops = 1e9, l.bytes = 1.5e9;  // 1.5 GB at 3 TB/s: 0.5 ms of DRAM; 1 GFLOP at 1 PFLOP/s: 1 µs
  // DRAM 3 -> 6 TB/s, same compute: 0.5 ms stays, 0.5 ms halves.
  EXPECT_NEAR(report::layer_time_model(l, 1e15, 3e12, 1e15, 6e12), 0.75e-3, 1e-12);
  // Counted DRAM bytes twice the paper's: the whole millisecond is DRAM time.
  l.counted_dram_bytes = 3e9;
  EXPECT_NEAR(report::layer_time_model(l, 1e15, 3e12, 1e15, 6e12), 0.5e-3, 1e-12);
  // A compute-heavy layer scales with the peaks: 0.8 ms of FLOPs at 100 TFLOP/s, twice the peak: 0.4 + 0.2.
  report::StoredLayer c;
  c.seconds = 1e-3, c.flops = 80e9, c.bytes = 1e6;
  EXPECT_NEAR(report::layer_time_model(c, 100e12, 3e12, 200e12, 3e12), 0.6e-3, 1e-12);
}

// Two runs of one workload on one device: the shared cell's layers side by
// side; runs with nothing in common say what each has.
TEST(CompareRuns, TwoRunsOfOneCellSideBySideAndNothingInCommonIsNamed) {
  TempDir dir;
  {
    store::Db db(dir.file("r.db"));
    add_device(db, "Test H100", 3e12, 900e12, 1.0);  // run 1
    add_device(db, "Test H100", 3e12, 900e12, 0.5);  // run 2: every layer twice as fast
    add_device(db, "Test H200", 4e12, 900e12, 1.0);  // run 3: another device
  }
  store::Db db(dir.file("r.db"), store::Db::Mode::ReadOnly);
  const report::Comparison c = report::compare_runs(db, 1, 2, {});
  ASSERT_EQ(c.tables.size(), 2u);
  ASSERT_EQ(c.tables[0].rows().size(), 1u);
  EXPECT_NEAR(std::get<double>(c.tables[0].rows()[0][5]), 2.0, 1e-9);
  EXPECT_EQ(c.tables[1].rows().size(), 3u);  // the three timed layers, most changed first
  try {
    (void)report::compare_runs(db, 1, 3, {});
    FAIL() << "runs on two devices compared as one workload";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
    EXPECT_NE(std::string(e.what()).find("run 3 has resnet18 bf16 b128 train on Test H200"), std::string::npos)
        << e.what();
  }
  const auto missing = run_cli({"--db", dir.file("r.db"), "compare", "--runs", "1,99"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("no run 99"), std::string::npos) << missing.err;
  const auto both = run_cli({"--db", dir.file("r.db"), "compare", "H100", "--runs", "1,2"});
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_NE(both.err.find("not both"), std::string::npos) << both.err;
}

// `roofline device` through the real binary: what it prints, what it stores,
// and how it refuses bad input.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "roofline/core/strings.hpp"
#include "roofline/cuda/runtime.hpp"
#include "roofline/store/db.hpp"
#include "roofline/store/results.hpp"
#include "tests/support/cli.hpp"

using namespace roofline;
using roofline::test::run_cli;
using roofline::test::TempDir;

namespace {

const nlohmann::json* table(const nlohmann::json& report, const std::string& id) {
  for (const auto& t : report["tables"])
    if (t["id"] == id) return &t;
  return nullptr;
}

// The value of a Properties table's row `key`.
nlohmann::json prop(const nlohmann::json& t, const std::string& key) {
  for (const auto& r : t["rows"])
    if (r["key"] == key) return r["value"];
  return nullptr;
}

}  // namespace

TEST(DeviceCli, CpuSheetPrintsAndIsStored) {
  TempDir dir;
  auto r = run_cli({"--db", dir.file("r.db"), "device", "--device", "cpu"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "CPU: ")) << r.out;
  EXPECT_TRUE(contains(r.out, "CPU theoretical peaks")) << r.out;
  EXPECT_TRUE(contains(r.out, "FP64")) << r.out;
  EXPECT_TRUE(contains(r.out, "Number formats")) << r.out;
  EXPECT_FALSE(contains(r.out, "GPU"));  // only the CPU was asked for

  store::Db db(dir.file("r.db"), store::Db::Mode::ReadOnly);
  auto runs = store::list_runs(db, 10, "device");
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].status, "ok");
  EXPECT_FALSE(runs[0].devices.empty());
  // The stored sheet is the CPU's JSON description.
  auto st = db.prepare("SELECT kind, spec FROM devices WHERE run_id = ?");
  st.bind(1, runs[0].id);
  ASSERT_TRUE(st.step());
  EXPECT_EQ(st.text(0), "cpu");
  auto spec = nlohmann::json::parse(st.text(1));
  EXPECT_EQ(spec["kind"], "cpu");
  EXPECT_GT(spec["threads"].get<int>(), 0);
}

TEST(DeviceCli, JsonParsesAndCarriesPeaksAndFormats) {
  TempDir dir;
  auto r = run_cli({"--db", dir.file("r.db"), "--json", "device", "--device", "cpu"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  const auto* cpu = table(j, "cpu");
  const auto* peaks = table(j, "cpu_peaks");
  const auto* formats = table(j, "formats");
  ASSERT_TRUE(cpu && peaks && formats);
  EXPECT_TRUE(prop(*cpu, "cores").is_number());
  EXPECT_TRUE(prop(*cpu, "memory_bandwidth").get<std::string>().find("roofline ceilings") != std::string::npos);
  bool fp64 = false;
  for (const auto& row : (*peaks)["rows"])
    if (row["precision"] == "FP64") {
      fp64 = true;
      EXPECT_GT(row["dense"].get<double>(), 0);
      EXPECT_EQ(row["source"], "derived");
    }
  EXPECT_TRUE(fp64);
  bool fp16 = false;
  for (const auto& row : (*formats)["rows"])
    if (row["format"] == "FP16") {
      fp16 = true;
      EXPECT_EQ(row["max"].get<double>(), 65504.0);
    }
  EXPECT_TRUE(fp16);
}

TEST(DeviceCli, UnknownDeviceIsAUsageError) {
  TempDir dir;
  auto r = run_cli({"--db", dir.file("r.db"), "device", "--device", "bogus"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "unknown device 'bogus'")) << r.err;
  EXPECT_TRUE(contains(r.err, "gpu:N")) << r.err;  // says what would work
  auto r2 = run_cli({"--db", dir.file("r.db"), "device", "--device", "gpu:-1"});
  EXPECT_EQ(r2.exit_code, 2) << r2.err;
}

TEST(DeviceCli, ExplicitGpuWithoutGpuFailsNamingTheReason) {
  if (cuda::gpu_count() > 0) GTEST_SKIP() << "this machine has a GPU";
  TempDir dir;
  auto r = run_cli({"--db", dir.file("r.db"), "device", "--device", "gpu:0"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(r.exit_code, 4);  // device error
  EXPECT_TRUE(contains(r.err, "no GPU available")) << r.err;
  EXPECT_TRUE(contains(r.err, cuda::gpu_unavailable_reason())) << r.err;
  EXPECT_TRUE(contains(r.err, "--device cpu")) << r.err;
}

TEST(DeviceCli, AllWithoutGpuShowsCpuAndSaysWhyNoGpu) {
  if (cuda::gpu_count() > 0) GTEST_SKIP() << "this machine has a GPU";
  TempDir dir;
  auto r = run_cli({"--db", dir.file("r.db"), "device"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "CPU theoretical peaks"));
  EXPECT_TRUE(contains(r.out, "no GPU: " + cuda::gpu_unavailable_reason())) << r.out;
}

TEST(DeviceCli, DatasheetListAndEntry) {
  TempDir dir;
  auto list = run_cli({"--db", dir.file("r.db"), "device", "--datasheets"});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_TRUE(contains(list.out, "h100-sxm5-80gb"));
  EXPECT_TRUE(contains(list.out, "b200-sxm-180gb"));
  EXPECT_FALSE(contains(list.out, "CPU: "));  // the listing alone describes no device
  EXPECT_FALSE(contains(list.out, "Number formats"));

  auto one = run_cli({"--db", dir.file("r.db"), "--json", "device", "--datasheet", "h100-sxm5-80gb"});
  ASSERT_EQ(one.exit_code, 0) << one.err;
  auto j = nlohmann::json::parse(one.out);
  const auto* peaks = table(j, "datasheet_peaks");
  ASSERT_TRUE(peaks);
  bool bf16 = false;
  for (const auto& row : (*peaks)["rows"])
    if (row["precision"] == "BF16" && row["unit"] == "tensor cores") {
      bf16 = true;
      EXPECT_DOUBLE_EQ(row["dense"].get<double>(), 989.4);
      EXPECT_DOUBLE_EQ(row["sparse"].get<double>(), 1978.9);
      EXPECT_EQ(row["rate"], "TFLOP/s");
    }
  EXPECT_TRUE(bf16);
  ASSERT_TRUE(table(j, "datasheet_sources"));

  // A unique part of a name will do; an ambiguous or unknown one is a usage error listing the ids.
  EXPECT_EQ(run_cli({"--db", dir.file("r.db"), "device", "--datasheet", "l40s"}).exit_code, 0);
  auto amb = run_cli({"--db", dir.file("r.db"), "device", "--datasheet", "h100"});
  EXPECT_EQ(amb.exit_code, 2);
  EXPECT_TRUE(contains(amb.err, "h100-pcie-80gb")) << amb.err;
  auto none = run_cli({"--db", dir.file("r.db"), "device", "--datasheet", "mi300x"});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_TRUE(contains(none.err, "no datasheet entry matches")) << none.err;

  // Listings record no run.
  store::Db db(dir.file("r.db"));
  EXPECT_TRUE(store::list_runs(db, 10, "device").empty());
}

TEST(DeviceCli, FormatsAlone) {
  TempDir dir;
  auto r = run_cli({"--db", dir.file("r.db"), "device", "--formats"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "FP8 E4M3"));
  EXPECT_TRUE(contains(r.out, "448"));
  EXPECT_FALSE(contains(r.out, "CPU: "));
}

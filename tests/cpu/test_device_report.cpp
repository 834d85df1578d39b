// The GPU sheet of `roofline device`, rendered without a GPU from the H100
// description query_gpu() reads on the lent machine: the tables must carry
// the matched entry, dense and sparse apart, and what was ruled out.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "roofline/core/error.hpp"
#include "roofline/core/report.hpp"
#include "roofline/core/strings.hpp"
#include "roofline/hardware/device_report.hpp"
#include "roofline/hardware/gpu_info.hpp"

using namespace roofline;
using namespace roofline::hw;

namespace {

GpuInfo lent_h100() {
  GpuInfo g;
  g.name = "NVIDIA H100 80GB HBM3";
  g.cc_major = 9;
  g.sms = 132;
  g.memory_bytes = 85029158912ull;
  g.memory_bus_bits = 5120;
  g.sm_clock_max_mhz = 1980;
  g.mem_clock_max_mhz = 2619;
  g.l2_bytes = 50u << 20;
  g.smem_per_sm = 228u << 10;
  g.smem_per_block_optin = 227u << 10;
  g.regs_per_sm = 65536;
  g.max_threads_per_sm = 2048;
  g.tdp_w = 700;
  complete_gpu_info(g);
  return g;
}

const Table* find(const Report& r, const std::string& id) { return r.find(id); }

std::string text_of(const Report& r) {
  std::ostringstream s;
  render(r, Format::Text, s);
  return s.str();
}

}  // namespace

TEST(DeviceReport, GpuSheetShowsMatchAndDenseSparseApart) {
  Report r("device");
  add_gpu_sheet(r, lent_h100());
  ASSERT_TRUE(find(r, "gpu0"));
  ASSERT_TRUE(find(r, "gpu0_match"));
  const Table* peaks = find(r, "gpu0_peaks");
  ASSERT_TRUE(peaks);
  auto j = to_json(r);
  bool bf16 = false, dram = false;
  for (const auto& t : j["tables"]) {
    if (t["id"] != "gpu0_peaks") continue;
    for (const auto& row : t["rows"]) {
      if (row["precision"] == "BF16" && row["unit"] == "tensor cores") {
        bf16 = true;
        EXPECT_DOUBLE_EQ(row["dense"].get<double>(), 989.4);
        EXPECT_DOUBLE_EQ(row["sparse"].get<double>(), 1978.9);
        EXPECT_EQ(row["source"], "datasheet");
        // Derived at 1980 MHz: 132 x 4096 x 1.98 GHz = 1070.5 TFLOP/s, above the datasheet (1830 MHz).
        EXPECT_NEAR(row["derived"].get<double>(), 132 * 4096 * 1.98e9 / 1e12, 1e-9);
      }
      if (row["precision"] == "memory") {
        dram = true;
        EXPECT_DOUBLE_EQ(row["dense"].get<double>(), 3350.0);  // GB/s
      }
      if (row["precision"] == "FP32" && row["unit"] == "CUDA cores") EXPECT_EQ(row["sparse"], "-");
    }
  }
  EXPECT_TRUE(bf16);
  EXPECT_TRUE(dram);
  std::string text = text_of(r);
  EXPECT_TRUE(contains(text, "h100-sxm5-80gb")) << text;
  EXPECT_TRUE(contains(text, "ruled out")) << text;
  EXPECT_TRUE(contains(text, "114 SMs, this GPU has 132")) << text;  // the PCIe board
  EXPECT_TRUE(contains(text, "HBM3 (datasheet h100-sxm5-80gb)")) << text;
  EXPECT_TRUE(contains(text, "16896")) << text;  // CUDA cores
}

TEST(DeviceReport, UnknownGpuSheetSaysDerived) {
  GpuInfo g = lent_h100();
  g.name = "NVIDIA Hopper Engineering Sample";
  complete_gpu_info(g);
  Report r("device");
  add_gpu_sheet(r, g);
  std::string text = text_of(r);
  EXPECT_TRUE(contains(text, "none: figures below are derived")) << text;
  EXPECT_TRUE(contains(text, "derived from attributes")) << text;
  EXPECT_TRUE(contains(text, "guessed")) << text;  // memory type
}

TEST(DeviceReport, DatasheetLookupErrors) {
  Report r("device");
  EXPECT_THROW(add_datasheet(r, "h100"), Error);
  try {
    add_datasheet(r, "nothing-like-this");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
    EXPECT_TRUE(contains(e.hint(), "a100-sxm4-80gb"));
  }
  add_datasheet(r, "NVIDIA L40S 48GB");
  ASSERT_TRUE(find(r, "datasheet_peaks"));
}

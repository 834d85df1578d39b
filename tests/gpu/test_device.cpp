// query_gpu() on a real GPU: attributes sane and consistent with each other,
// the per-SM table applied, NVML figures present, and on the lent H100 the
// datasheet entry h100-sxm5-80gb matched.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "roofline/core/strings.hpp"
#include "roofline/hardware/datasheet.hpp"
#include "roofline/hardware/gpu_info.hpp"
#include "roofline/hardware/nvml.hpp"
#include "roofline/hardware/peaks.hpp"
#include "tests/support/cli.hpp"
#include "tests/support/gpu.hpp"

using namespace roofline;
using namespace roofline::hw;

TEST(GpuDevice, QueryGpuIsSane) {
  ROOFLINE_REQUIRE_GPU();
  GpuInfo g = query_gpu(0);
  EXPECT_FALSE(g.name.empty());
  EXPECT_GE(g.cc_major, 6);
  EXPECT_GT(g.sms, 0);
  EXPECT_GT(g.memory_bytes, 1ull << 30);
  EXPECT_GT(g.l2_bytes, 0u);
  EXPECT_GT(g.smem_per_sm, 0u);
  EXPECT_GE(g.smem_per_block_optin, 48u << 10);
  EXPECT_GT(g.regs_per_sm, 0);
  EXPECT_EQ(g.warp_size, 32);
  EXPECT_FALSE(g.pci_bus_id.empty());
  EXPECT_GT(g.runtime_version, 0);
  EXPECT_GT(g.sm_clock_max_mhz, 300);
  EXPECT_LT(g.sm_clock_max_mhz, 4000);
  EXPECT_FALSE(g.sm_clock_source.empty());
  EXPECT_FALSE(contains(g.architecture, "unknown")) << g.architecture;
  if (g.cuda_cores_per_sm > 0) EXPECT_EQ(g.cuda_cores(), g.sms * g.cuda_cores_per_sm);
  if (nvml::available()) {
    EXPECT_FALSE(g.uuid.empty());
    EXPECT_GT(g.mem_clock_max_mhz, 0);
    EXPECT_GT(g.memory_bus_bits, 0);
    EXPECT_TRUE(g.tdp_w.has_value());
    EXPECT_EQ(g.sm_clock_source, "NVML max SM clock");
  }
  if (g.memory_bus_bits > 0 && g.mem_clock_max_mhz > 0)
    EXPECT_DOUBLE_EQ(g.bandwidth_theoretical, 2.0 * g.mem_clock_max_mhz * 1e6 * g.memory_bus_bits / 8);
  auto j = g.to_json();
  EXPECT_EQ(j["sms"], g.sms);
  auto all = query_gpus();
  ASSERT_FALSE(all.empty());
  EXPECT_EQ(all[0].name, g.name);
}

TEST(GpuDevice, H100MatchesItsDatasheet) {
  ROOFLINE_REQUIRE_GPU();
  GpuInfo g = query_gpu(0);
  if (!contains(g.name, "H100")) GTEST_SKIP() << "not an H100: " << g.name;
  auto m = explain_match(g);
  ASSERT_NE(m.entry, nullptr) << m.reason;
  if (g.sms == 132 && contains(g.name, "HBM3")) {
    EXPECT_EQ(m.entry->id, "h100-sxm5-80gb") << m.reason;
    EXPECT_EQ(g.memory_type, "HBM3");
    EXPECT_EQ(g.architecture, "Hopper");
    EXPECT_EQ(g.cuda_cores(), 16896);
    EXPECT_EQ(g.tensor_cores(), 528);
    EXPECT_EQ(g.memory_bus_bits, 5120);
    // The attributes agree with the datasheet: bus x clock x 2 within 2% of 3.35 TB/s.
    EXPECT_NEAR(g.bandwidth_theoretical / m.entry->bandwidth, 1.0, 0.02);
    // FP32 derived at the max clock (1980 MHz) within 2% of the datasheet's 66.9.
    for (const auto& p : derived_gpu_peaks(g))
      if (p.id == "fp32.cuda") EXPECT_NEAR(p.dense / 66.9e12, 1.0, 0.02);
  }
  model::Roofline r = reference_roofline(g);
  ASSERT_TRUE(r.compute("bf16", "tensor"));
  EXPECT_EQ(r.compute("bf16", "tensor")->source, model::Source::Datasheet);
  ASSERT_TRUE(r.memory("dram"));
}

TEST(GpuDevice, CliDescribesGpuZero) {
  ROOFLINE_REQUIRE_GPU();
  test::TempDir dir;
  auto r = test::run_cli({"--db", dir.file("r.db"), "--json", "device", "--device", "gpu:0"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  bool sheet = false, peaks = false, match = false;
  for (const auto& t : j["tables"]) {
    sheet |= t["id"] == "gpu0";
    peaks |= t["id"] == "gpu0_peaks";
    match |= t["id"] == "gpu0_match";
  }
  EXPECT_TRUE(sheet && peaks && match);
  auto out_of_range = test::run_cli({"--db", dir.file("r.db"), "device", "--device", "gpu:99"});
  EXPECT_EQ(out_of_range.exit_code, 2) << out_of_range.err;
  EXPECT_TRUE(contains(out_of_range.err, "GPU 99 does not exist")) << out_of_range.err;
}

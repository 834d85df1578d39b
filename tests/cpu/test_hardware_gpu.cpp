// GPU description without a GPU: the per-architecture tables, what
// complete_gpu_info() derives from attributes, and the reference roofline
// (datasheet when an entry matches, derived otherwise).
#include <gtest/gtest.h>

#include "roofline/core/strings.hpp"
#include "roofline/hardware/datasheet.hpp"
#include "roofline/hardware/gpu_arch.hpp"
#include "roofline/hardware/gpu_info.hpp"
#include "roofline/hardware/peaks.hpp"

using namespace roofline;
using namespace roofline::hw;

namespace {

// What query_gpu() reads on the lent H100 (docs/gpu-machine.md).
GpuInfo h100_sxm() {
  GpuInfo g;
  g.name = "NVIDIA H100 80GB HBM3";
  g.cc_major = 9;
  g.cc_minor = 0;
  g.sms = 132;
  g.memory_bytes = 85029158912ull;  // 79.2 GiB
  g.memory_bus_bits = 5120;
  g.sm_clock_max_mhz = 1980;
  g.mem_clock_max_mhz = 2619;
  complete_gpu_info(g);
  return g;
}

// An RTX A6000: Ampere GA102 (CC 8.6), not in the datasheet database.
GpuInfo a6000() {
  GpuInfo g;
  g.name = "NVIDIA RTX A6000";
  g.cc_major = 8;
  g.cc_minor = 6;
  g.sms = 84;
  g.memory_bytes = 51041271808ull;
  g.memory_bus_bits = 384;
  g.sm_clock_max_mhz = 1800;
  g.mem_clock_max_mhz = 8001;
  complete_gpu_info(g);
  return g;
}

}  // namespace

TEST(GpuArch, UnitsPerSmByComputeCapability) {
  struct Want {
    int major, minor, fp32, fp64, tensor;
    const char* name;
  };
  for (Want w : {Want{7, 0, 64, 32, 8, "Volta"}, Want{7, 5, 64, 2, 8, "Turing"},
                 Want{8, 0, 64, 32, 4, "Ampere (GA100)"}, Want{8, 6, 128, 2, 4, "Ampere (GA10x)"},
                 Want{8, 9, 128, 2, 4, "Ada Lovelace"}, Want{9, 0, 128, 64, 4, "Hopper"},
                 Want{10, 0, 128, 64, 4, "Blackwell (B200)"}, Want{12, 0, 128, 2, 4, "Blackwell (GB20x)"}}) {
    const GpuArch* a = gpu_arch(w.major, w.minor);
    ASSERT_NE(a, nullptr) << w.major << "." << w.minor;
    EXPECT_EQ(a->name, w.name);
    EXPECT_EQ(a->fp32_lanes_per_sm, w.fp32);
    EXPECT_EQ(a->fp64_units_per_sm, w.fp64);
    EXPECT_EQ(a->tensor_cores_per_sm, w.tensor);
    // FP32 CUDA-core rate is 2 FLOP (one FMA) per lane per clock everywhere.
    bool found = false;
    for (const auto& [k, v] : a->per_clock)
      if (k == "fp32.cuda") {
        EXPECT_DOUBLE_EQ(v, 2.0 * w.fp32);
        found = true;
      }
    EXPECT_TRUE(found);
  }
  EXPECT_EQ(gpu_arch(13, 0), nullptr);
  EXPECT_TRUE(contains(architecture_name(13, 0), "unknown"));
  EXPECT_EQ(architecture_name(8, 7), "Ampere (Orin)");
}

TEST(GpuInfoComplete, H100MatchesItsDatasheetAndDerivesBandwidth) {
  GpuInfo g = h100_sxm();
  EXPECT_EQ(g.architecture, "Hopper");
  EXPECT_EQ(g.cuda_cores(), 16896);
  EXPECT_EQ(g.tensor_cores(), 528);
  EXPECT_EQ(g.tensor_core_generation, "4th generation");
  EXPECT_EQ(g.datasheet_id, "h100-sxm5-80gb");
  EXPECT_EQ(g.memory_type, "HBM3");
  EXPECT_TRUE(starts_with(g.memory_type_source, "datasheet"));
  EXPECT_DOUBLE_EQ(g.bandwidth_theoretical, 2.0 * 2619e6 * 5120 / 8);  // 3.35 TB/s
  auto j = g.to_json();
  EXPECT_EQ(j["datasheet_id"], "h100-sxm5-80gb");
  EXPECT_EQ(j["cuda_cores"], 16896);
}

TEST(GpuInfoComplete, MissingClockOrBusMeansNoBandwidthFigure) {
  GpuInfo g = h100_sxm();
  g.mem_clock_max_mhz = 0;  // e.g. CUDA 13 without NVML
  complete_gpu_info(g);
  EXPECT_EQ(g.bandwidth_theoretical, 0);
}

TEST(GpuInfoComplete, UnknownGpuGetsAGuessedMemoryTypeMarkedAsSuch) {
  GpuInfo g = a6000();
  EXPECT_TRUE(g.datasheet_id.empty());
  EXPECT_FALSE(g.memory_type.empty());
  EXPECT_TRUE(starts_with(g.memory_type_source, "guessed")) << g.memory_type_source;
  EXPECT_EQ(g.cuda_cores(), 84 * 128);
}

TEST(ReferenceRoofline, MatchedGpuUsesDatasheetDenseFigures) {
  model::Roofline r = reference_roofline(h100_sxm());
  const model::Ceiling* bf16 = r.compute("bf16", "tensor");
  ASSERT_TRUE(bf16);
  EXPECT_EQ(bf16->id, "bf16.tensor");
  EXPECT_EQ(bf16->source, model::Source::Datasheet);
  EXPECT_DOUBLE_EQ(bf16->value, 989.4e12);  // dense, never the 1978.9 sparse figure
  EXPECT_TRUE(contains(bf16->label, "dense")) << bf16->label;
  EXPECT_TRUE(contains(bf16->label, "FLOP/s")) << bf16->label;
  // compute("bf16") over every unit still picks the dense tensor rate.
  EXPECT_DOUBLE_EQ(r.compute("bf16")->value, 989.4e12);
  EXPECT_DOUBLE_EQ(r.compute("fp32", "cuda")->value, 66.9e12);
  EXPECT_DOUBLE_EQ(r.compute("fp64", "tensor")->value, 66.9e12);
  const model::Ceiling* dram = r.memory("dram");
  ASSERT_TRUE(dram);
  EXPECT_DOUBLE_EQ(dram->value, 3.35e12);
  EXPECT_EQ(dram->source, model::Source::Datasheet);
  for (const auto& c : r.ceilings()) EXPECT_FALSE(ends_with(c.id, ".sparse")) << c.id;
  // Derived fill-ins of an entry (none on H100 SXM5) would carry Source::Derived.
  ASSERT_TRUE(r.find("fp16.cuda"));
  EXPECT_EQ(r.find("fp16.cuda")->source, model::Source::Datasheet);
}

TEST(ReferenceRoofline, UnknownGpuGetsDerivedCeilings) {
  GpuInfo g = a6000();
  model::Roofline r = reference_roofline(g);
  ASSERT_FALSE(r.ceilings().empty());
  for (const auto& c : r.ceilings()) EXPECT_EQ(c.source, model::Source::Derived) << c.id;
  const model::Ceiling* fp32 = r.compute("fp32", "cuda");
  ASSERT_TRUE(fp32);
  EXPECT_DOUBLE_EQ(fp32->value, 84 * 256 * 1800e6);
  const model::Ceiling* bf16 = r.compute("bf16", "tensor");
  ASSERT_TRUE(bf16);
  EXPECT_DOUBLE_EQ(bf16->value, 84 * 1024 * 1800e6);
  EXPECT_EQ(r.find("fp8.tensor"), nullptr);  // Ampere has no FP8
  const model::Ceiling* dram = r.memory("dram");
  ASSERT_TRUE(dram);
  EXPECT_DOUBLE_EQ(dram->value, 2.0 * 8001e6 * 384 / 8);
  EXPECT_TRUE(contains(dram->note, "384-bit"));
}

TEST(ReferenceRoofline, DerivedSparseOnlyWhereTheArchitectureHasIt) {
  auto peaks = gpu_peaks(a6000());
  for (const auto& p : peaks) {
    if (p.unit == "tensor") {
      ASSERT_TRUE(p.sparse) << p.id;
      EXPECT_DOUBLE_EQ(*p.sparse, 2 * p.dense);
    } else {
      EXPECT_FALSE(p.sparse) << p.id;
    }
  }
  GpuInfo v100;
  v100.name = "Some Volta";
  v100.cc_major = 7;
  v100.sms = 80;
  v100.sm_clock_max_mhz = 1530;
  complete_gpu_info(v100);
  for (const auto& p : gpu_peaks(v100)) EXPECT_FALSE(p.sparse) << p.id;
}

TEST(ReferenceRoofline, UnknownArchitectureHasNoComputeCeilings) {
  GpuInfo g;
  g.name = "Future GPU";
  g.cc_major = 13;
  g.sms = 200;
  g.sm_clock_max_mhz = 2000;
  g.memory_bus_bits = 4096;
  g.mem_clock_max_mhz = 4000;
  complete_gpu_info(g);
  model::Roofline r = reference_roofline(g);
  EXPECT_TRUE(r.of_kind(model::CeilingKind::Compute).empty());  // no rates guessed
  ASSERT_TRUE(r.memory("dram"));
  EXPECT_EQ(r.memory("dram")->source, model::Source::Derived);
}

TEST(GpuInfoJson, RoundTripsThroughTheStoredSheet) {
  roofline::hw::GpuInfo g;
  g.name = "NVIDIA H100 80GB HBM3";
  g.cc_major = 9;
  g.sms = 132;
  g.cuda_cores_per_sm = 128;
  g.sm_clock_max_mhz = 1980;
  g.memory_bytes = 85ull << 30;
  g.memory_bus_bits = 5120;
  g.mem_clock_max_mhz = 2619;
  g.tdp_w = 700;
  g.l2_bytes = 50 << 20;
  auto j = g.to_json();
  EXPECT_EQ(roofline::hw::GpuInfo::from_json(j).to_json(), j);
}

// CPU ceilings: plateau detection on synthetic curves, and a quick real run
// that must produce sane figures (no timing thresholds).
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "roofline/ceilings/cpu_ceilings.hpp"
#include "src/ceilings/cpu/plateaus.hpp"

using namespace roofline;
using ceilings::cpu::SweepSample;

namespace {
// 16 KiB .. 1 GiB per thread, doubling; bandwidth by level with noise and
// one transitional size between each level.
std::vector<SweepSample> synthetic(double noise) {
  std::vector<SweepSample> s;
  int i = 0;
  for (double b = 16 * 1024; b <= 1024.0 * 1024 * 1024; b *= 2, ++i) {
    double bw;
    if (b <= 32 * 1024) bw = 1000;
    else if (b == 64 * 1024) bw = 600;  // transition
    else if (b <= 512 * 1024) bw = 400;
    else if (b == 1024 * 1024) bw = 250;
    else if (b <= 8 * 1024 * 1024) bw = 150;
    else if (b == 16 * 1024 * 1024) bw = 60;
    else bw = 20;
    double wiggle = (i % 3 == 0 ? 1 : i % 3 == 1 ? -1 : 0.3) * noise;
    s.push_back({b, bw * 1e9 * (1 + wiggle)});
  }
  return s;
}
}  // namespace

TEST(CpuPlateaus, FindsFourLevelsByOrderWhenCacheSizesAreUnknown) {
  auto r = ceilings::cpu::find_plateaus(synthetic(0.05), {}, 2, 64.0 * (1 << 20));
  ASSERT_NE(r.find("l1"), nullptr);
  ASSERT_NE(r.find("l2"), nullptr);
  ASSERT_NE(r.find("l3"), nullptr);
  ASSERT_NE(r.find("mem"), nullptr);
  EXPECT_NEAR(r.find("l1")->bandwidth, 1000e9, 60e9);
  EXPECT_NEAR(r.find("l2")->bandwidth, 400e9, 25e9);
  EXPECT_NEAR(r.find("l3")->bandwidth, 150e9, 10e9);
  EXPECT_NEAR(r.find("mem")->bandwidth, 20e9, 1.5e9);
  EXPECT_NE(r.method.find("labelled by order"), std::string::npos);
  EXPECT_TRUE(r.notes.empty());
}

TEST(CpuPlateaus, UsesCacheSizesWhenKnown) {
  ceilings::cpu::CacheSizes c;
  c.l1 = 48 * 1024;
  c.l2 = 1024 * 1024;
  c.l3 = 16 * 1024 * 1024;
  auto r = ceilings::cpu::find_plateaus(synthetic(0.0), c, 2, 64.0 * (1 << 20));
  ASSERT_NE(r.find("l1"), nullptr);
  EXPECT_DOUBLE_EQ(r.find("l1")->bandwidth, 1000e9);
  EXPECT_DOUBLE_EQ(r.find("l2")->bandwidth, 400e9);
  EXPECT_DOUBLE_EQ(r.find("l3")->bandwidth, 150e9);
  EXPECT_DOUBLE_EQ(r.find("mem")->bandwidth, 20e9);
  EXPECT_NE(r.method.find("cache sizes"), std::string::npos);
}

TEST(CpuPlateaus, SaysWhatIsMissing) {
  // Flat up to 256 KiB, then memory: no L2/L3 plateau.
  std::vector<SweepSample> s;
  for (double b = 16 * 1024; b <= 256 * 1024; b *= 2) s.push_back({b, 500e9});
  for (double b = 128.0 * 1024 * 1024; b <= 1024.0 * 1024 * 1024; b *= 2) s.push_back({b, 20e9});
  auto r = ceilings::cpu::find_plateaus(s, {}, 1, 64.0 * (1 << 20));
  EXPECT_NE(r.find("l1"), nullptr);
  EXPECT_NE(r.find("mem"), nullptr);
  EXPECT_EQ(r.find("l3"), nullptr);
  bool said = false;
  for (const auto& n : r.notes) said |= n.find("no l3 plateau") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST(CpuCeilings, QuickRunGivesSanePositiveFigures) {
  ceilings::CeilingOptions o;
  o.quick = true;
  o.measure = measure::MeasureOptions::quick();
  auto figs = ceilings::measure_cpu_ceilings(o, {});
  std::set<std::string> names;
  for (const auto& f : figs) {
    names.insert(f.name);
    EXPECT_TRUE(std::isfinite(f.value)) << f.name;
    EXPECT_GT(f.value, 0) << f.name;
    EXPECT_FALSE(f.method.empty()) << f.name;
    EXPECT_GE(f.measurement.samples.size(), 10u) << f.name;  // the discipline: at least 10 samples
    ASSERT_TRUE(f.ceiling().has_value()) << f.name;
    if (f.unit == "FLOP/s") {
      EXPECT_EQ(f.level, "simd");
      EXPECT_TRUE(f.precision == "fp32" || f.precision == "fp64");
    } else {
      EXPECT_EQ(f.unit, "B/s");
    }
  }
  for (const char* n : {"fp32.simd", "fp64.simd", "fp32.simd.addmul", "fp64.simd.addmul", "mem.read", "mem.copy",
                        "mem.triad", "cache.l1"})
    EXPECT_TRUE(names.count(n)) << "missing " << n;
  // Every cache figure carries the whole working-set curve.
  for (const auto& f : figs)
    if (f.name.rfind("cache.", 0) == 0) EXPECT_GE(f.params["sweep"].size(), 10u);
}

TEST(CpuCeilings, OnlyMeasuresWhatIsAskedFor) {
  ceilings::CeilingOptions o;
  o.quick = true;
  o.measure = measure::MeasureOptions::quick();
  o.only = {"fp64.simd"};
  auto figs = ceilings::measure_cpu_ceilings(o, {});
  ASSERT_FALSE(figs.empty());
  for (const auto& f : figs) EXPECT_EQ(f.name.rfind("fp64.simd", 0), 0u) << f.name;
}

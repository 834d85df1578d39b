// CPU description: /proc/cpuinfo, sysfs and CPUID parsing on fixtures
// (tests/data/hardware), the microarchitecture table and derived peaks.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "roofline/core/strings.hpp"
#include "roofline/hardware/cpu_info.hpp"
#include "roofline/hardware/cpu_uarch.hpp"
#include "roofline/hardware/datasheet.hpp"
#include "roofline/hardware/peaks.hpp"
#include "tests/support/cli.hpp"

using namespace roofline;
using namespace roofline::hw;

namespace {

const std::string kData = std::string(ROOFLINE_TEST_DATA) + "/hardware";
const std::string kAmd = kData + "/amd-epyc-zen5-vm";
const std::string kIntel = kData + "/intel-xeon-spr";

// "80000005: ff60ff40 ff60ff40 300c0140 20080140" lines, by leaf.
std::map<std::uint32_t, CpuidRegs> read_cpuid_fixture(const std::string& path) {
  std::map<std::uint32_t, CpuidRegs> out;
  std::istringstream in(test::read_file(path));
  std::string line;
  while (std::getline(in, line)) {
    unsigned leaf, a, b, c, d;
    if (std::sscanf(line.c_str(), "%x: %x %x %x %x", &leaf, &a, &b, &c, &d) == 5) out[leaf] = {a, b, c, d};
  }
  return out;
}

const Peak* find_peak(const std::vector<Peak>& v, const std::string& id) {
  for (const auto& p : v)
    if (p.id == id) return &p;
  return nullptr;
}

CpuSources fixture_sources(const std::string& dir) {
  CpuSources s;
  s.proc_cpuinfo = dir + "/cpuinfo";
  s.sysfs_cpu = dir + "/sys/devices/system/cpu";  // absent for the AMD VM, as on the machine itself
  s.use_cpuid = false;                            // CPUID would describe the machine running the test
  s.allow_measure = false;
  return s;
}

}  // namespace

TEST(CpuInfoParse, AmdZen5VmFromProcCpuinfo) {
  CpuInfo c = parse_proc_cpuinfo(test::read_file(kAmd + "/cpuinfo"));
  EXPECT_EQ(c.vendor, "AuthenticAMD");
  EXPECT_EQ(c.model_name, "AMD EPYC");
  EXPECT_EQ(c.family, 26);
  EXPECT_EQ(c.model, 2);
  EXPECT_EQ(c.stepping, 1);
  EXPECT_EQ(c.isa, "x86_64");
  EXPECT_EQ(c.threads, 2);
  EXPECT_EQ(c.cores, 2);
  EXPECT_EQ(c.sockets, 1);
  EXPECT_EQ(c.simd, "AVX-512");
  EXPECT_EQ(c.simd_bits, 512);
  EXPECT_TRUE(c.has_fma);
  EXPECT_TRUE(c.has_flag("avx512_bf16"));
  EXPECT_FALSE(c.has_flag("amx_bf16"));
  EXPECT_NEAR(c.current_mhz, 2096.001, 1e-9);
}

TEST(CpuInfoParse, AffinityMaskLimitsCoresAndThreads) {
  CpuInfo one = parse_proc_cpuinfo(test::read_file(kAmd + "/cpuinfo"), {1});
  EXPECT_EQ(one.threads, 1);
  EXPECT_EQ(one.cores, 1);
  // Intel fixture: CPUs 0 and 2 are the two hyperthreads of core 0.
  CpuInfo siblings = parse_proc_cpuinfo(test::read_file(kIntel + "/cpuinfo"), {0, 2});
  EXPECT_EQ(siblings.threads, 2);
  EXPECT_EQ(siblings.cores, 1);
}

TEST(CpuInfoParse, IntelSapphireRapidsFixtureWithSysfs) {
  CpuInfo c = query_cpu_from(fixture_sources(kIntel));
  EXPECT_EQ(c.vendor, "GenuineIntel");
  EXPECT_EQ(c.model, 0x8F);
  EXPECT_EQ(c.threads, 4);
  EXPECT_EQ(c.cores, 2);
  EXPECT_EQ(c.microarchitecture, "Sapphire Rapids");
  EXPECT_TRUE(c.has_flag("amx_bf16"));
  EXPECT_TRUE(c.has_flag("avx512_fp16"));

  ASSERT_EQ(c.caches.size(), 4u);
  EXPECT_EQ(c.cache_source, "sysfs");
  EXPECT_EQ(c.caches[0].level, 1);
  EXPECT_EQ(c.caches[0].type, "data");
  EXPECT_EQ(c.caches[0].bytes, 48u << 10);
  EXPECT_EQ(c.caches[0].ways, 12);
  EXPECT_EQ(c.caches[0].shared_by_threads, 2);
  EXPECT_EQ(c.caches[1].type, "instruction");
  EXPECT_EQ(c.caches[2].bytes, 2048u << 10);
  EXPECT_EQ(c.caches[3].level, 3);
  EXPECT_EQ(c.caches[3].type, "unified");
  EXPECT_EQ(c.caches[3].bytes, 107520ull << 10);
  EXPECT_EQ(c.caches[3].shared_by_threads, 4);
  for (const auto& l : c.caches) EXPECT_EQ(l.source, "sysfs");

  EXPECT_DOUBLE_EQ(c.max_mhz, 3800);
  EXPECT_DOUBLE_EQ(c.base_mhz, 2000);
  EXPECT_DOUBLE_EQ(c.peak_clock_mhz(), 3800);
  EXPECT_TRUE(contains(c.frequency_source, "cpufreq"));
  EXPECT_EQ(c.measured_mhz, 0);
}

TEST(CpuInfoParse, AmdVmWithoutSysfsFallsBackToProcMhz) {
  CpuInfo c = query_cpu_from(fixture_sources(kAmd));
  EXPECT_TRUE(c.caches.empty());
  EXPECT_TRUE(starts_with(c.cache_source, "none")) << c.cache_source;
  EXPECT_EQ(c.max_mhz, 0);
  EXPECT_EQ(c.base_mhz, 0);
  EXPECT_NEAR(c.peak_clock_mhz(), 2096.001, 1e-9);
  EXPECT_TRUE(contains(c.frequency_source, "/proc/cpuinfo")) << c.frequency_source;
  EXPECT_TRUE(contains(c.peak_clock_source(), "cpu MHz")) << c.peak_clock_source();
  EXPECT_EQ(c.microarchitecture, "Zen 5 (server)");
}

TEST(CpuInfoParse, MissingSourcesAreSaidNotGuessed) {
  CpuSources s;
  s.proc_cpuinfo = kData + "/does-not-exist";
  s.sysfs_cpu = kData + "/does-not-exist";
  s.use_cpuid = false;
  s.allow_measure = false;
  s.allowed_cpus = {0, 1, 2};
  CpuInfo c = query_cpu_from(s);
  EXPECT_EQ(c.threads, 3);
  EXPECT_EQ(c.peak_clock_mhz(), 0);
  EXPECT_EQ(c.frequency_source, "none");
  EXPECT_TRUE(cpu_peaks(c).empty());  // no clock, no SIMD width: no made-up peak
}

TEST(CpuInfoParse, SmallParsers) {
  EXPECT_EQ(count_cpu_list("0-3,8,10-11"), 7);
  EXPECT_EQ(count_cpu_list("5"), 1);
  EXPECT_EQ(count_cpu_list("0,56"), 2);
  EXPECT_DOUBLE_EQ(mhz_from_model_name("Intel(R) Xeon(R) Gold 6148 CPU @ 2.40GHz"), 2400);
  EXPECT_DOUBLE_EQ(mhz_from_model_name("Intel(R) Core(TM) i7 CPU 920 @ 2666MHz"), 2666);
  EXPECT_EQ(mhz_from_model_name("AMD EPYC"), 0);
  EXPECT_TRUE(read_sysfs_caches(kData + "/nowhere").empty());
  CpuFreq none = read_cpufreq(kData + "/nowhere");
  EXPECT_EQ(none.max_mhz, 0);
  EXPECT_TRUE(none.source.empty());
}

TEST(Cpuid, AmdLegacyLeavesRecordedOnZen5Vm) {
  auto regs = read_cpuid_fixture(kAmd + "/cpuid.txt");
  ASSERT_TRUE(regs.count(0x80000005) && regs.count(0x80000006));
  // TOPOEXT clear, and 0x8000001D empty: the reason roofline falls back.
  EXPECT_EQ((regs[0x80000001].ecx >> 22) & 1, 0u);
  EXPECT_FALSE(decode_cpuid_cache(regs[0x8000001D], "cpuid 0x8000001D"));
  auto caches = decode_amd_legacy_caches(regs[0x80000005], regs[0x80000006]);
  ASSERT_EQ(caches.size(), 4u);
  EXPECT_EQ(caches[0].level, 1);
  EXPECT_EQ(caches[0].type, "data");
  EXPECT_EQ(caches[0].bytes, 48u << 10);  // Zen 5: 48 KiB L1d, 12-way
  EXPECT_EQ(caches[0].ways, 12);
  EXPECT_EQ(caches[0].line_bytes, 64);
  EXPECT_EQ(caches[1].type, "instruction");
  EXPECT_EQ(caches[1].bytes, 32u << 10);
  EXPECT_EQ(caches[2].level, 2);
  EXPECT_EQ(caches[2].bytes, 1u << 20);  // 1 MiB L2 per core
  EXPECT_EQ(caches[3].level, 3);
  EXPECT_EQ(caches[3].bytes, 1016ull * 512 * 1024);                // as the hypervisor reports it, in 512 KiB units
  for (const auto& c : caches) EXPECT_EQ(c.shared_by_threads, 0);  // the legacy leaves do not say
}

TEST(Cpuid, Leaf4LayoutDecodesIntelCaches) {
  // Hand-encoded leaf 4 registers for Sapphire Rapids' L1d, L2 and L3
  // (Intel SDM vol. 2A, CPUID leaf 04H): size = ways x partitions x line x sets.
  auto regs = [](unsigned type, unsigned level, unsigned sharing, unsigned ways, unsigned line, unsigned sets) {
    CpuidRegs r;
    r.eax = type | (level << 5) | (1u << 8) | ((sharing - 1) << 14) | (63u << 26);
    r.ebx = (line - 1) | (0u << 12) | ((ways - 1) << 22);
    r.ecx = sets - 1;
    return r;
  };
  auto l1 = decode_cpuid_cache(regs(1, 1, 2, 12, 64, 64), "cpuid leaf 4");
  ASSERT_TRUE(l1);
  EXPECT_EQ(l1->type, "data");
  EXPECT_EQ(l1->level, 1);
  EXPECT_EQ(l1->bytes, 48u << 10);
  EXPECT_EQ(l1->ways, 12);
  EXPECT_EQ(l1->shared_by_threads, 2);
  auto l2 = decode_cpuid_cache(regs(3, 2, 2, 16, 64, 2048), "cpuid leaf 4");
  ASSERT_TRUE(l2);
  EXPECT_EQ(l2->bytes, 2048u << 10);
  auto l3 = decode_cpuid_cache(regs(3, 3, 128, 15, 64, 114688), "cpuid leaf 4");
  ASSERT_TRUE(l3);
  EXPECT_EQ(l3->bytes, 107520ull << 10);
  EXPECT_EQ(l3->shared_by_threads, 128);
  EXPECT_FALSE(decode_cpuid_cache(CpuidRegs{}, "cpuid leaf 4"));
}

TEST(CpuPeaks, Zen5ServerUsesFull512BitDatapath) {
  CpuInfo c = query_cpu_from(fixture_sources(kAmd));
  CpuMicroarch u = cpu_microarch(c);
  EXPECT_TRUE(u.known);
  EXPECT_EQ(u.fma_pipes, 2);
  EXPECT_EQ(u.datapath_bits, 512);
  auto peaks = cpu_peaks(c);
  const double hz = c.cores * c.peak_clock_mhz() * 1e6;
  const Peak* fp64 = find_peak(peaks, "fp64.simd");
  const Peak* fp32 = find_peak(peaks, "fp32.simd");
  const Peak* bf16 = find_peak(peaks, "bf16.simd");
  ASSERT_TRUE(fp64 && fp32 && bf16);
  EXPECT_DOUBLE_EQ(fp64->dense, hz * 2 /*pipes*/ * 8 /*lanes*/ * 2 /*FMA*/);
  EXPECT_DOUBLE_EQ(fp32->dense, 2 * fp64->dense);
  EXPECT_DOUBLE_EQ(bf16->dense, 2 * fp32->dense);
  EXPECT_EQ(find_peak(peaks, "bf16.amx"), nullptr);  // no AMX on AMD
  for (const auto& p : peaks) {
    EXPECT_EQ(p.source, model::Source::Derived);
    EXPECT_FALSE(p.sparse);
    EXPECT_TRUE(contains(p.basis, "2 FMA")) << p.basis;  // the assumption travels with the figure
  }
}

TEST(CpuPeaks, Zen4SplitsAvx512OnTwo256BitPipes) {
  CpuInfo c = query_cpu_from(fixture_sources(kAmd));
  c.family = 0x19;
  c.model = 0x11;  // Genoa
  CpuMicroarch u = cpu_microarch(c);
  EXPECT_EQ(u.name, "Zen 4");
  EXPECT_EQ(u.datapath_bits, 256);
  const auto fp64_peaks = cpu_peaks(c);  // kept alive: find_peak points into it
  const Peak* fp64 = find_peak(fp64_peaks, "fp64.simd");
  ASSERT_TRUE(fp64);
  EXPECT_DOUBLE_EQ(fp64->dense, c.cores * c.peak_clock_mhz() * 1e6 * 2 * 4 * 2);
}

TEST(CpuPeaks, SapphireRapidsAddsAmxAndFp16) {
  CpuInfo c = query_cpu_from(fixture_sources(kIntel));
  auto peaks = cpu_peaks(c);
  const double hz = 2 /*cores*/ * 3800e6;
  const Peak* fp64 = find_peak(peaks, "fp64.simd");
  ASSERT_TRUE(fp64);
  EXPECT_DOUBLE_EQ(fp64->dense, hz * 2 * 8 * 2);
  const Peak* fp16 = find_peak(peaks, "fp16.simd");
  ASSERT_TRUE(fp16);
  EXPECT_DOUBLE_EQ(fp16->dense, 4 * fp64->dense);
  const Peak* amx = find_peak(peaks, "bf16.amx");
  ASSERT_TRUE(amx);
  EXPECT_DOUBLE_EQ(amx->dense, hz * 1024);
  const Peak* amx8 = find_peak(peaks, "int8.amx");
  ASSERT_TRUE(amx8);
  EXPECT_DOUBLE_EQ(amx8->dense, 2 * amx->dense);
  EXPECT_STREQ(amx8->rate_unit(), "OP/s");
}

TEST(CpuPeaks, UnknownMicroarchitectureIsMarkedAsAGuess) {
  CpuInfo c = query_cpu_from(fixture_sources(kIntel));
  c.model = 0x01;  // not in the table
  CpuMicroarch u = cpu_microarch(c);
  EXPECT_FALSE(u.known);
  EXPECT_TRUE(contains(u.assumption, "not in roofline's table")) << u.assumption;
  const auto fp64_peaks = cpu_peaks(c);  // kept alive: find_peak points into it
  const Peak* fp64 = find_peak(fp64_peaks, "fp64.simd");
  ASSERT_TRUE(fp64);
  EXPECT_TRUE(contains(fp64->basis, "not in roofline's table"));
}

TEST(CpuReference, RooflineHasDerivedComputeAndNoMemoryCeiling) {
  CpuInfo c = query_cpu_from(fixture_sources(kIntel));
  model::Roofline r = reference_roofline(c);
  const model::Ceiling* fp32 = r.compute("fp32", "simd");
  ASSERT_TRUE(fp32);
  EXPECT_EQ(fp32->id, "fp32.simd");
  EXPECT_EQ(fp32->source, model::Source::Derived);
  EXPECT_TRUE(contains(fp32->label, "FLOP/s"));
  ASSERT_TRUE(r.find("bf16.amx"));
  EXPECT_EQ(r.memory("dram"), nullptr);  // needs DMI: measured by `roofline ceilings`
}

TEST(CpuClock, MeasuredEstimateIsAPlausibleClock) {
  double mhz = measure_cpu_mhz();
#if defined(__x86_64__) || defined(__aarch64__)
  // Loose bounds: this checks the arithmetic (adds per second), not speed.
  EXPECT_GT(mhz, 50);
  EXPECT_LT(mhz, 20000);
#else
  EXPECT_EQ(mhz, 0);
#endif
}

TEST(CpuInfoThisMachine, QueryCpuIsConsistent) {
  CpuInfo c = query_cpu();
  EXPECT_GT(c.threads, 0);
  EXPECT_GT(c.cores, 0);
  EXPECT_LE(c.cores, c.threads);
  EXPECT_FALSE(c.frequency_source.empty());
  auto j = c.to_json();
  EXPECT_EQ(j["kind"], "cpu");
  EXPECT_EQ(j["threads"], c.threads);
}

TEST(CpuInfoJson, RoundTripsThroughTheStoredSheet) {
  roofline::hw::CpuInfo c = roofline::hw::query_cpu();
  auto j = c.to_json();
  EXPECT_EQ(roofline::hw::CpuInfo::from_json(j).to_json(), j);
}

TEST(CpuInfoClock, AMeasuredClockWellAboveCpuMhzWinsForThePeaks) {
  roofline::hw::CpuInfo c;
  c.current_mhz = 2096;  // a VM's nominal rate
  c.measured_mhz = 3600;
  EXPECT_DOUBLE_EQ(c.peak_clock_mhz(), 3600);
  EXPECT_NE(c.peak_clock_source().find("measured"), std::string::npos);
  c.measured_mhz = 2150;  // agrees within the margin: keep what the system reports
  EXPECT_DOUBLE_EQ(c.peak_clock_mhz(), 2096);
  c.max_mhz = 3700;  // cpufreq's limit always wins
  c.measured_mhz = 3600;
  EXPECT_DOUBLE_EQ(c.peak_clock_mhz(), 3700);
}

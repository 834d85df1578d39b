// The sweep's arithmetic, host emulation, CPU kernels, CSV and SASS parsing.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "roofline/sweep/sweep.hpp"
#include "roofline/sweep/input.hpp"
#include "roofline/sweep/roof.hpp"
#include "roofline/sweep/sass.hpp"
#include "roofline/core/error.hpp"
#include "src/ceilings/cpu/simd.hpp"
#include "src/sweep/reference.hpp"

using namespace roofline;
namespace sw = roofline::sweep;

TEST(SweepReference, HalfAndBf16RoundToNearestEven) {
  EXPECT_EQ(sw::ref::to_half_bits(1.0), 0x3C00);
  EXPECT_EQ(sw::ref::to_half_bits(-2.0), 0xC000);
  EXPECT_EQ(sw::ref::to_half_bits(65504.0), 0x7BFF);
  EXPECT_EQ(sw::ref::to_half_bits(65520.0), 0x7C00);               // rounds past the largest: inf
  EXPECT_EQ(sw::ref::to_half_bits(std::ldexp(1.0, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(sw::ref::to_half_bits(1.0 + std::ldexp(1.0, -11)), 0x3C00);      // tie -> even
  EXPECT_EQ(sw::ref::to_half_bits(1.0 + 3 * std::ldexp(1.0, -11)), 0x3C02);  // tie -> even (up)
  EXPECT_EQ(sw::ref::to_bf16_bits(1.0), 0x3F80);
  EXPECT_EQ(sw::ref::to_bf16_bits(1.0 + std::ldexp(1.0, -8)), 0x3F80);
  EXPECT_EQ(sw::ref::to_bf16_bits(1.0 + 3 * std::ldexp(1.0, -8)), 0x3F82);
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1000, 1000);
  for (int i = 0; i < 2000; ++i) {
    double v = u(rng);
    double h = sw::ref::half_value(sw::ref::to_half_bits(v));
    double b = sw::ref::bf16_value(sw::ref::to_bf16_bits(v));
    EXPECT_LE(std::fabs(h - v), std::fabs(v) * std::ldexp(1.0, -11) * 1.0000001 + std::ldexp(1.0, -25));
    EXPECT_LE(std::fabs(b - v), std::fabs(v) * std::ldexp(1.0, -8) * 1.0000001);
    EXPECT_EQ(sw::ref::to_half_bits(h), sw::ref::to_half_bits(v));  // idempotent
  }
}

TEST(SweepReference, InputsAreInRangeAndNotConstant) {
  double lo = 1, hi = 0;
  for (std::uint64_t i = 0; i < 10000; ++i) {
    float x = sw::input_value(i, 4);
    lo = std::min<double>(lo, x);
    hi = std::max<double>(hi, x);
  }
  EXPECT_GE(lo, 0.5);
  EXPECT_LT(hi, 1.0);
  EXPECT_GT(hi - lo, 0.4);
  EXPECT_NE(sw::input_value(5, 4), sw::input_value(5, 5));
}

TEST(SweepReference, HalfEmulationStaysFiniteForTheSeedsLargestK) {
  for (auto v : {sw::Variant::Fp16, sw::Variant::Bf16, sw::Variant::Fp32, sw::Variant::Fp64})
    for (std::uint64_t i = 0; i < 50; ++i) {
      double y = sw::ref::expected(v, sw::ref::input(v, i, 4), 1000);
      EXPECT_TRUE(std::isfinite(y)) << sw::info(v).name;
      EXPECT_GT(y, 0.4);
    }
}

// Every kernel set this CPU runs against the host emulation, on a length that
// leaves a tail for the scalar path.
TEST(SweepCpu, EveryIsaMatchesTheHostEmulation) {
  const std::int64_t n = 1000 + 37;
  std::vector<float> a(n), b(n);
  std::vector<double> ad(n), bd(n);
  for (std::int64_t i = 0; i < n; ++i) {
    a[i] = sw::input_value(static_cast<std::uint64_t>(i), 11);
    ad[i] = a[i];
  }
  for (const auto* kern : ceilings::cpu::supported_loops()) {
    for (std::int64_t k : {1, 7, 64}) {
      std::fill(b.begin(), b.end(), NAN);
      kern->poly_f32(a.data(), b.data(), n, k);
      for (std::int64_t i = 0; i < n; ++i)
        ASSERT_EQ(b[i], static_cast<float>(sw::ref::expected(sw::Variant::Fp32, a[i], k)))
            << kern->isa << " fp32 k=" << k << " i=" << i;
      std::fill(b.begin(), b.end(), NAN);
      kern->horner_f32(a.data(), b.data(), n, k);
      for (std::int64_t i = 0; i < n; ++i)
        ASSERT_EQ(b[i], static_cast<float>(sw::ref::expected(sw::Variant::Fma, a[i], k)))
            << kern->isa << " fma k=" << k << " i=" << i;
      std::fill(bd.begin(), bd.end(), NAN);
      kern->poly_f64(ad.data(), bd.data(), n, k);
      for (std::int64_t i = 0; i < n; ++i)
        ASSERT_EQ(bd[i], sw::ref::expected(sw::Variant::Fp64, ad[i], k)) << kern->isa << " fp64 k=" << k << " i=" << i;
    }
  }
}

TEST(SweepCpu, RunCpuChecksEveryPointAndTimesEachRun) {
  sw::Options o;
  o.n = 4099;
  o.k = {1, 3, 10};
  o.runs = 3;
  o.warmup = 1;
  for (auto v : {sw::Variant::Fp32, sw::Variant::Fma, sw::Variant::Fp64}) {
    auto pts = sw::run_cpu(v, o, {});
    ASSERT_EQ(pts.size(), 3u);
    for (const auto& p : pts) {
      EXPECT_TRUE(p.check.ok()) << p.check.first_mismatch;
      EXPECT_GT(p.check.checked, 100);
      EXPECT_EQ(p.timing.samples_s.size(), 3u);
      EXPECT_GT(p.timing.mean_s, 0);
    }
  }
  EXPECT_THROW(sw::run_cpu(sw::Variant::Fp16, o, {}), Error);
}

TEST(SweepMath, TimingIsTheSeedsMeanAndRms) {
  auto t = sw::timing_of({1.0, 2.0, 3.0, 4.0});
  EXPECT_DOUBLE_EQ(t.mean_s, 2.5);
  EXPECT_NEAR(t.rms_pct, 100 * std::sqrt(1.25) / 2.5, 1e-12);  // population RMS, as the seed
  EXPECT_DOUBLE_EQ(t.median_s, 2.5);
  EXPECT_DOUBLE_EQ(t.min_s, 1.0);
  EXPECT_DOUBLE_EQ(t.max_s, 4.0);
}

TEST(SweepMath, PercentPredictedAndRatio) {
  sw::Roof roof;
  roof.peak = 1000e9;
  roof.bandwidth = 100e9;
  sw::Point p;
  p.variant = sw::Variant::Fp32;
  p.n = 1000000;
  p.k = 1;
  p.timing = sw::timing_of({1e-3, 1e-3});
  sw::finish_point(p, roof);
  EXPECT_DOUBLE_EQ(p.ai, 0.25);
  EXPECT_NEAR(p.gflops, 2.0, 1e-9);       // 2e6 FLOPs in 1 ms
  EXPECT_NEAR(p.bandwidth, 8.0, 1e-9);    // 8e6 bytes in 1 ms
  EXPECT_NEAR(p.percent_peak, 0.2, 1e-9);
  EXPECT_NEAR(p.predicted_gflops, 25.0, 1e-9);  // memory-bound: 0.25 x 100 GB/s
  EXPECT_NEAR(p.ratio, 0.08, 1e-9);
  EXPECT_TRUE(p.low());
  // Compute-bound side: k = 1000 on fp64 (AI 125) meets the 1 TFLOP/s roof.
  p.variant = sw::Variant::Fp64;
  p.k = 1000;
  sw::finish_point(p, roof);
  EXPECT_DOUBLE_EQ(p.ai, 125.0);
  EXPECT_NEAR(p.predicted_gflops, 1000.0, 1e-9);
  EXPECT_DOUBLE_EQ(sw::info(sw::Variant::Fp16).ai(10), 5.0);  // 2 bytes in, 2 out
}

TEST(SweepCsv, HeaderAndRowsAreTheSeeds) {
  EXPECT_EQ(sw::csv_header(), "k,ai,gflops,bandwidth,percent_peak");
  sw::Point p;
  p.k = 10;
  p.ai = 2.5;
  p.gflops = 123.456;
  p.bandwidth = 45.678;
  p.percent_peak = 12.345;
  sw::Point q = p;
  q.k = 1000;
  q.ai = 250;
  EXPECT_EQ(sw::to_csv({p, q}),
            "k,ai,gflops,bandwidth,percent_peak\n10,2.500000,123.46,45.68,12.35\n1000,250.000000,123.46,45.68,12.35\n");
}

TEST(SweepOptions, BadValuesAreUsageErrorsNamingTheOption) {
  auto expect_usage = [](sw::Options o, const std::string& word) {
    try {
      sw::validate(o);
      ADD_FAILURE() << "no error for " << word;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Usage);
      EXPECT_NE(std::string(e.what()).find(word), std::string::npos) << e.what();
      EXPECT_FALSE(e.hint().empty());
    }
  };
  sw::Options o;
  o.k = {1, 0};
  expect_usage(o, "k must be a positive integer");
  o = {};
  o.k = {-5};
  expect_usage(o, "k must be");
  o = {};
  o.n = 0;
  expect_usage(o, "n must be");
  o = {};
  o.block = 100;
  expect_usage(o, "--block");
  o.block = 2048;
  expect_usage(o, "--block");
  o = {};
  o.runs = 1;
  expect_usage(o, "--runs");
  EXPECT_NO_THROW(sw::validate(sw::Options{}));
  EXPECT_THROW(sw::parse_variants("fp32,fp99"), Error);
  EXPECT_EQ(sw::parse_variants("fp32, BF16,fp32").size(), 2u);
}

namespace {
// What cuobjdump -sass prints (abridged): an ELF section per architecture.
const char* kSass = R"(
Fatbin elf code:
================
arch = sm_90
code version = [1,8]
host = linux
compile_size = 64bit

	code for sm_90
		Function : compute_k_terms_bf16
	.headerflags	@"EF_CUDA_TEXMODE_UNIFIED EF_CUDA_64BIT_ADDRESS EF_CUDA_SM90"
        /*0000*/                   LDC R1, c[0x0][0x28] ;                          /* 0x00000a00ff017b82 */
        /*0100*/                   HADD2.BF16_V2 R5, R5, R4 ;                      /* 0x0000000405057230 */
        /*0110*/                   HMUL2.BF16_V2 R4, R4, R3 ;                      /* 0x0000000304047232 */
        /*0120*/                   HADD2.BF16_V2 R5, R5, R4 ;                      /* 0x0000000405057230 */
        /*0130*/                   HMUL2.BF16_V2 R4, R4, R3 ;                      /* 0x0000000304047232 */
		..........

		Function : compute_k_terms
	.headerflags	@"EF_CUDA_TEXMODE_UNIFIED EF_CUDA_64BIT_ADDRESS EF_CUDA_SM90"
        /*0000*/                   HFMA2.MMA R5, -RZ, RZ, 0, 0 ;                   /* 0x000000ffff057435 */
        /*0090*/                   FADD R5, R5, R4 ;                               /* 0x0000000405057221 */
        /*00a0*/                   FMUL R4, R4, R3 ;                               /* 0x0000000304047220 */
        /*00b0*/                   FADD R5, R5, R4 ;                               /* 0x0000000405057221 */
        /*00c0*/              @!P0 FMUL R4, R4, R3 ;                               /* 0x0000000304048220 */
        /*00d0*/                   EXIT ;                                          /* 0x000000000000794d */
		..........

		Function : compute_k_terms_fma
        /*0090*/                   FFMA R5, R5, R4, 1 ;                            /* 0x3f80000005057423 */
        /*00a0*/                   FFMA R5, R5, R4, 1 ;                            /* 0x3f80000005057423 */

Fatbin elf code:
================
arch = sm_80
	code for sm_80
		Function : compute_k_terms
        /*0090*/                   FFMA R5, R4, R3, R5 ;                           /* 0x0000000304057223 */
        /*00a0*/                   FMUL R4, R4, R3 ;                               /* 0x0000000304047220 */
)";
}  // namespace

TEST(SweepSass, ParsesCountsPerKernelAndArchitecture) {
  auto ks = sw::parse_sass(kSass);
  sw::SassCheck c;
  c.done = true;
  c.kernels = ks;
  const auto* seed = c.find("compute_k_terms", "sm_90");
  ASSERT_NE(seed, nullptr);
  EXPECT_EQ(seed->count("FADD"), 2);
  EXPECT_EQ(seed->count("FMUL"), 2);  // predicated ones count
  EXPECT_EQ(seed->count("FFMA"), 0);
  EXPECT_EQ(seed->count("HFMA2"), 0);  // a constant load, not arithmetic
  const auto* bf = c.find("compute_k_terms_bf16", "sm_90");
  ASSERT_NE(bf, nullptr);
  EXPECT_EQ(bf->count("HADD2.BF16"), 2);
  EXPECT_EQ(bf->count("HMUL2.BF16"), 2);
  const auto* old = c.find("compute_k_terms", "sm_80");
  ASSERT_NE(old, nullptr);
  EXPECT_EQ(old->count("FFMA"), 1);

  auto m = sw::mix_verdict(sw::Variant::Fp32, c, "sm_90");
  EXPECT_TRUE(m.from_sass);
  EXPECT_DOUBLE_EQ(m.fraction_of_fma_peak, 0.5);
  EXPECT_NE(m.text.find("FADD + FMUL per term, no FFMA"), std::string::npos) << m.text;
  auto f = sw::mix_verdict(sw::Variant::Fma, c, "sm_90");
  EXPECT_DOUBLE_EQ(f.fraction_of_fma_peak, 1.0);
  // A contracted seed loop is still two instructions per term.
  auto contracted = sw::mix_verdict(sw::Variant::Fp32, c, "sm_80");
  EXPECT_DOUBLE_EQ(contracted.fraction_of_fma_peak, 0.5);
  EXPECT_NE(contracted.text.find("FFMA"), std::string::npos);
  // No listing: said so, and the source's mix is used.
  sw::SassCheck none;
  none.why_not = "cuobjdump was not found";
  auto n = sw::mix_verdict(sw::Variant::Fp32, none, "sm_90");
  EXPECT_FALSE(n.from_sass);
  EXPECT_NE(n.text.find("SASS not checked (cuobjdump was not found)"), std::string::npos) << n.text;
}

TEST(SweepRoof, PrefersMeasuredCeilingsAndSaysWhich) {
  model::Roofline measured("gpu");
  measured.add({"fp32.cuda", "FP32", model::CeilingKind::Compute, 60e12, model::Source::Measured, "fp32", "cuda", ""});
  measured.add({"fp32.cuda.addmul", "FP32 add+mul", model::CeilingKind::Compute, 27e12, model::Source::Measured, "fp32",
                "cuda", ""});
  measured.add({"dram.read", "DRAM read", model::CeilingKind::Memory, 3.0e12, model::Source::Measured, "", "dram", ""});
  measured.add({"dram.copy", "DRAM copy", model::CeilingKind::Memory, 2.8e12, model::Source::Measured, "", "dram", ""});
  hw::GpuInfo g;
  g.name = "test";
  sw::MixVerdict mix;
  mix.fraction_of_fma_peak = 0.5;
  mix.from_sass = true;
  // The seed's FADD + FMUL is held against the measured add+multiply rate as
  // it is (not half the FMA rate, which it may not reach).
  auto r = sw::gpu_roof(sw::Variant::Fp32, measured, model::Roofline(), mix, g, 0);
  EXPECT_DOUBLE_EQ(r.peak, 27e12);
  EXPECT_TRUE(r.peak_measured);
  EXPECT_EQ(r.peak_id, "fp32.cuda.addmul");
  EXPECT_NE(r.peak_source.find("fp32.cuda.addmul"), std::string::npos) << r.peak_source;
  EXPECT_DOUBLE_EQ(r.bandwidth, 2.8e12);  // the copy stream, not the larger read
  EXPECT_NE(r.bandwidth_source.find("dram.copy"), std::string::npos);
  // Horner's FFMA: the FMA rate, times the SASS verdict's fraction (1 here).
  sw::MixVerdict fused;
  fused.fraction_of_fma_peak = 1.0;
  fused.from_sass = true;
  auto h = sw::gpu_roof(sw::Variant::Fma, measured, model::Roofline(), fused, g, 0);
  EXPECT_DOUBLE_EQ(h.peak, 60e12);
  EXPECT_EQ(h.peak_id, "fp32.cuda");
  EXPECT_TRUE(h.peak_measured);
  // Nothing stored: the theoretical peak at the measured clock, labelled.
  g.cc_major = 9;
  g.cc_minor = 0;
  g.sms = 132;
  auto t = sw::gpu_roof(sw::Variant::Fp32, model::Roofline(), model::Roofline(), mix, g, 1980);
  EXPECT_NEAR(t.peak, 0.5 * 2 * 128 * 132 * 1980e6, 1);
  EXPECT_FALSE(t.peak_measured);
  EXPECT_NE(t.peak_source.find("theoretical"), std::string::npos);
}

// Without the mix's own ceiling the FMA rate x the mix's fraction stands in,
// said loudly and not counted as measured (the CLI measures the ceiling first).
TEST(SweepRoof, MissingMixCeilingIsNotPassedOffAsMeasured) {
  model::Roofline measured("gpu");
  measured.add({"fp16.cuda", "FP16", model::CeilingKind::Compute, 132e12, model::Source::Measured, "fp16", "cuda", ""});
  measured.add({"fp32.cuda.addmul", "FP32 add+mul", model::CeilingKind::Compute, 33e12, model::Source::Measured, "fp32",
                "cuda", ""});
  sw::MixVerdict mix;
  mix.fraction_of_fma_peak = 0.5;
  auto r = sw::gpu_roof(sw::Variant::Fp16, measured, model::Roofline(), mix, hw::GpuInfo(), 0);
  EXPECT_DOUBLE_EQ(r.peak, 66e12);
  EXPECT_FALSE(r.peak_measured);
  EXPECT_EQ(r.peak_id, "fp16.cuda");
  EXPECT_NE(r.peak_source.find("NOT the mix's own rate"), std::string::npos) << r.peak_source;
  EXPECT_NE(r.peak_source.find("fp16.cuda.addmul"), std::string::npos) << r.peak_source;
  // bf16 has its own ceiling name; fp32's add+mul is not borrowed.
  measured.add({"bf16.cuda.addmul", "BF16 add+mul", model::CeilingKind::Compute, 50e12, model::Source::Measured, "bf16",
                "cuda", ""});
  auto b = sw::gpu_roof(sw::Variant::Bf16, measured, model::Roofline(), mix, hw::GpuInfo(), 0);
  EXPECT_DOUBLE_EQ(b.peak, 50e12);
  EXPECT_TRUE(b.peak_measured);
}

TEST(SweepRoof, CeilingsTheGpuPredictionsNeed) {
  auto ids = sw::gpu_ceilings_needed({sw::Variant::Fp32, sw::Variant::Fma, sw::Variant::Fp64, sw::Variant::Fp16,
                                      sw::Variant::Bf16, sw::Variant::Fp32});
  const std::vector<std::string> want = {"dram.copy", "fp32.cuda.addmul", "fp32.cuda", "fp64.cuda.addmul",
                                         "fp16.cuda.addmul", "bf16.cuda.addmul"};
  EXPECT_EQ(ids, want);
}

// The first H100 run (2026-11-22): seed fp32 at k = 50 took 402 us; with
// fp32.cuda.addmul = 33.1 TFLOP/s and dram.copy = 2.88 TB/s, t_mem = 186 us and
// t_comp = 203 us, and a kernel that never overlaps them reaches 17.2 TFLOP/s.
TEST(SweepModel, NoOverlapModelAndTheTwoTimes) {
  sw::Roof roof;
  roof.peak = 33.1e12;
  roof.bandwidth = 2.88e12;
  sw::Point p;
  p.variant = sw::Variant::Fp32;
  p.kernel = sw::Kernel::Seed;
  p.n = std::int64_t{1} << 26;
  p.k = 50;
  p.timing = sw::timing_of({0.402e-3, 0.402e-3});
  sw::finish_point(p, roof);
  EXPECT_NEAR(p.t_mem_s * 1e6, 186.4, 0.1);
  EXPECT_NEAR(p.t_comp_s * 1e6, 202.7, 0.1);
  EXPECT_NEAR(p.no_overlap_gflops, 17247, 5);
  EXPECT_NEAR(p.predicted_gflops, 33100, 1);  // compute-bound by a little: AI 12.5 x 2.88 = 36 TFLOP/s
  EXPECT_NEAR(p.gflops, 16693, 5);
  EXPECT_FALSE(p.on_target());
  EXPECT_TRUE(p.low());
  // No bandwidth known: no times, no model.
  sw::Roof peak_only;
  peak_only.peak = 33.1e12;
  sw::finish_point(p, peak_only);
  EXPECT_EQ(p.t_mem_s, 0);
  EXPECT_EQ(p.no_overlap_gflops, 0);
  // The target band is 0.9 to 1.1.
  sw::Point q;
  q.ratio = 0.9;
  EXPECT_TRUE(q.on_target());
  q.ratio = 1.1;
  EXPECT_TRUE(q.on_target());
  q.ratio = 1.11;
  EXPECT_FALSE(q.on_target());
  q.ratio = 0.899;
  EXPECT_FALSE(q.on_target());
}

TEST(SweepModel, NoOverlapNotePicksThePointNearestTheRidge) {
  sw::Roof roof;
  roof.peak = 33.1e12;
  roof.bandwidth = 2.88e12;
  std::vector<sw::Point> pts;
  for (auto [k, ms] : {std::pair<std::int64_t, double>{1, 0.236}, {50, 0.402}, {1000, 4.599}}) {
    sw::Point p;
    p.variant = sw::Variant::Fp32;
    p.n = std::int64_t{1} << 26;
    p.k = k;
    p.timing = sw::timing_of({ms * 1e-3});
    sw::finish_point(p, roof);
    pts.push_back(p);
  }
  const std::string note = sw::no_overlap_note(pts);
  EXPECT_NE(note.find("k=50"), std::string::npos) << note;
  EXPECT_NE(note.find("17.2 TFLOP/s"), std::string::npos) << note;
  EXPECT_NE(note.find("16.7 TFLOP/s"), std::string::npos) << note;
  EXPECT_TRUE(sw::no_overlap_note({}).empty());
}

// Little's law for the seed's fp32 kernel on the H100 of the first run: 2048
// resident threads x one 4-byte load = 8 KiB per SM, against the 1.07 MiB
// (8.3 KiB per SM) that dram.bytes_in_flight says DRAM needs at 351 ns.
TEST(SweepModel, LittlesLawForTheSeedKernel) {
  const double needed = 1.07 * (1 << 20);
  const double reads = (std::int64_t{1} << 26) * 4 / 0.236e-3;  // k = 1: 0.236 ms
  auto f = sw::in_flight("seed kernel", 2048 * 4.0, 2048, 132, needed, 351e-9, reads, 1);
  EXPECT_DOUBLE_EQ(f.per_sm, 8192);
  EXPECT_NEAR(f.needed_per_sm, needed / 132, 1e-9);
  EXPECT_NEAR(f.fraction, 8192 / (needed / 132), 1e-12);
  EXPECT_LT(f.fraction, 1.0);
  EXPECT_NEAR(f.implied_latency_s * 1e9, 951, 2);
  EXPECT_NE(f.text.find("8.00 KiB"), std::string::npos) << f.text;
  EXPECT_NE(f.text.find("barely cover"), std::string::npos) << f.text;
  // Nothing stored to compare with: said so, the rest still computed.
  auto g = sw::in_flight("overlap kernel", 1024 * 192.0, 1024, 132, 0, 0, reads, 1);
  EXPECT_EQ(g.fraction, 0);
  EXPECT_NE(g.text.find("no dram.bytes_in_flight"), std::string::npos) << g.text;
  EXPECT_GT(g.implied_latency_s, 0);
}

TEST(SweepKernels, ParseNamesAndFigureNames) {
  auto ks = sw::parse_kernels("seed, OVERLAP,seed");
  ASSERT_EQ(ks.size(), 2u);
  EXPECT_EQ(ks[0], sw::Kernel::Seed);
  EXPECT_EQ(ks[1], sw::Kernel::Overlap);
  EXPECT_THROW(sw::parse_kernels("seed,fast"), Error);
  EXPECT_THROW(sw::parse_kernels("cpu"), Error);  // the CPU's loop is not a GPU kernel
  EXPECT_THROW(sw::parse_kernels(""), Error);
  sw::Point p;
  p.variant = sw::Variant::Fp16;
  p.kernel = sw::Kernel::Overlap;
  p.k = 20;
  p.device = "gpu:0";
  auto f = sw::to_figure(p, sw::Roof());
  EXPECT_EQ(f.name, "sweep.fp16.overlap.k=20");
  EXPECT_EQ(f.params["kernel"], "overlap");
  EXPECT_EQ(f.params["variant"], "fp16");
  EXPECT_STREQ(sw::info(sw::Variant::Fp16).gpu_kernel(sw::Kernel::Overlap), "overlap_k_terms_fp16");
  EXPECT_STREQ(sw::info(sw::Variant::Fp16).gpu_kernel(sw::Kernel::Seed), "compute_k_terms_fp16");
  for (const auto& vi : sw::variants()) EXPECT_NE(std::string(vi.mix_ceiling).find(vi.precision), std::string::npos);
}

TEST(SweepKernels, WsKernelIsNamedAndStored) {
  auto ks = sw::parse_kernels("seed,WS, overlap");
  ASSERT_EQ(ks.size(), 3u);
  EXPECT_EQ(ks[1], sw::Kernel::Ws);
  EXPECT_STREQ(sw::info(sw::Kernel::Ws).name, "ws");
  for (const auto& vi : sw::variants()) {
    const std::string ws = vi.gpu_kernel(sw::Kernel::Ws), ov = vi.gpu_kernel(sw::Kernel::Overlap);
    EXPECT_EQ(ws.substr(0, 3), "ws_") << ws;
    EXPECT_EQ(ws.substr(3), ov.substr(8)) << "ws and overlap kernels of a variant differ only in the prefix";
  }
  sw::Point p;
  p.variant = sw::Variant::Bf16;
  p.kernel = sw::Kernel::Ws;
  p.k = 50;
  p.device = "gpu:0";
  p.clock_mhz = 1755;
  auto f = sw::to_figure(p, sw::Roof());
  EXPECT_EQ(f.name, "sweep.bf16.ws.k=50");
  EXPECT_EQ(f.params["kernel"], "ws");
  EXPECT_EQ(f.params["clock_mhz"], 1755);
  try {
    sw::parse_kernels("seed,tma");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(e.hint().find("ws"), std::string::npos) << e.hint();
  }
}

// What the first H100 run's SASS showed for the half-precision seed loop: the
// compiler issues some adds (R * 1 + R) and multiplies (R * R - 0) as
// HFMA2.MMA, the second pipe's form. Counted within HFMA2 and on their own.
TEST(SweepSass, CountsTheSecondPipesHfma2ApartPerKernel) {
  const char* text = R"(
	code for sm_90
		Function : overlap_k_terms_fp16
        /*01c0*/                   HFMA2.MMA R5, R5, 1, 1, R8 ;                   /* 0x3c003c0005057835 */
        /*01d0*/                   HMUL2 R6, R8, R2 ;                             /* 0x0000000208067232 */
        /*0200*/                   HADD2 R5, R5, R6 ;                             /* 0x0000000605057230 */
        /*0210*/                   HFMA2.MMA R6, R6, R2, -RZ ;                    /* 0x0000000206067235 */
        /*0220*/                   HFMA2 R7, R7, R2, R9 ;                         /* 0x0000000207077231 */
		Function : overlap_k_terms_bf16
        /*0300*/                   HFMA2.MMA.BF16_V2 R5, R5, R12, R11 ;            /* 0x0000000c05057235 */
        /*0310*/                   HADD2.BF16_V2 R6, R6, R4 ;                      /* 0x0000000c06067231 */
)";
  sw::SassCheck c;
  c.done = true;
  c.kernels = sw::parse_sass(text);
  const auto* h = c.find("overlap_k_terms_fp16", "sm_90");
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(h->count("HFMA2"), 3);
  EXPECT_EQ(h->count("HFMA2.MMA"), 2);
  EXPECT_EQ(h->count("HADD2"), 1);
  EXPECT_EQ(h->count("HMUL2"), 1);
  const auto* b = c.find("overlap_k_terms_bf16", "sm_90");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->count("HFMA2.BF16"), 1);
  EXPECT_EQ(b->count("HFMA2.MMA.BF16"), 1);
  auto m = sw::mix_verdict(sw::Variant::Fp16, sw::Kernel::Overlap, c, "sm_90");
  EXPECT_TRUE(m.from_sass);
  EXPECT_NE(m.text.find("overlap_k_terms_fp16"), std::string::npos) << m.text;
  EXPECT_NE(m.text.find("of which 2 HFMA2.MMA on the second pipe"), std::string::npos) << m.text;
  // The seed kernel is not in this listing: said so.
  auto seed = sw::mix_verdict(sw::Variant::Fp16, sw::Kernel::Seed, c, "sm_90");
  EXPECT_FALSE(seed.from_sass);
  EXPECT_NE(seed.text.find("no compute_k_terms_fp16 code"), std::string::npos) << seed.text;
}

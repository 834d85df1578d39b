// Counter problems (ERR_NVGPUCTRPERM, another profiler, unknown metrics) and
// PM-sample conversion: plain logic, tested without a GPU. Also the entry
// points' behaviour in this build when no GPU is usable.
#include <gtest/gtest.h>

#include <cmath>

#include "roofline/cuda/runtime.hpp"
#include "roofline/profiler/counter_status.hpp"
#include "roofline/profiler/pm_sampler.hpp"
#include "roofline/profiler/range_profiler.hpp"

using namespace roofline;
using namespace roofline::prof;

TEST(CounterStatus, InsufficientPrivilegesSaysHowToAllowCounters) {
  // CUPTI_ERROR_INSUFFICIENT_PRIVILEGES = 35
  CounterStatus s =
      CounterStatus::from_cupti(35, "cuptiProfilerGetCounterAvailability", "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES");
  EXPECT_EQ(s.problem, CounterProblem::NotPermitted);
  EXPECT_NE(s.what.find("not permitted for this user (ERR_NVGPUCTRPERM)"), std::string::npos) << s.what;
  EXPECT_NE(s.what.find("cuptiProfilerGetCounterAvailability"), std::string::npos);
  EXPECT_NE(s.hint.find("NVreg_RestrictProfilingToAdminUsers=0"), std::string::npos);
  EXPECT_NE(s.hint.find("root"), std::string::npos);
  EXPECT_NE(s.hint.find("https://developer.nvidia.com/ERR_NVGPUCTRPERM"), std::string::npos);
  EXPECT_NE(s.hint.find("tracing carries on"), std::string::npos);
  Error e = s.to_error();
  EXPECT_EQ(e.kind(), ErrorKind::Device);
  EXPECT_EQ(e.exit_code(), 4);
  // vGPU flavour (40) reads the same.
  EXPECT_EQ(CounterStatus::from_cupti(40, "x", "").problem, CounterProblem::NotPermitted);
}

TEST(CounterStatus, AnotherProfilerHoldingCuptiIsBusy) {
  for (int code : {26, 36, 39}) {  // HARDWARE_BUSY, OLD_PROFILER_API_INITIALIZED, MULTIPLE_SUBSCRIBERS
    CounterStatus s = CounterStatus::from_cupti(code, "cuptiSubscribe", "busy");
    EXPECT_EQ(s.problem, CounterProblem::Busy) << code;
    EXPECT_NE(s.what.find("another profiler"), std::string::npos);
    EXPECT_NE(s.hint.find("Nsight"), std::string::npos);
    EXPECT_EQ(s.code, code);
  }
}

TEST(CounterStatus, KindsAndMessages) {
  EXPECT_TRUE(CounterStatus::from_cupti(0, "x", "").ok());
  EXPECT_EQ(CounterStatus::from_cupti(17, "cuptiProfilerHostConfigAddMetrics", "bad name").to_error().kind(),
            ErrorKind::Usage);
  EXPECT_EQ(CounterStatus::from_cupti(43, "x", "MIG").to_error().kind(), ErrorKind::Unsupported);
  CounterStatus other = CounterStatus::from_cupti(999, "cuptiRangeProfilerStart", "CUPTI_ERROR_UNKNOWN");
  EXPECT_EQ(other.problem, CounterProblem::Failed);
  EXPECT_NE(other.what.find("CUPTI_ERROR_UNKNOWN"), std::string::npos);
  EXPECT_EQ(other.to_error().kind(), ErrorKind::Device);
  EXPECT_NE(other.message().find("("), std::string::npos);  // what (hint)
  EXPECT_THROW(other.throw_if_error(), Error);
  EXPECT_NO_THROW(CounterStatus::success().throw_if_error());
}

TEST(PmSampleConversion, PercentsBecomeFractionsAndCountsBecomeRates) {
  std::vector<std::pair<PmMetricCandidate, double>> v = {
      {{PmQuantity::GrActive, "gr", PmUnit::Percent}, 97.5},
      {{PmQuantity::SmActive, "sm", PmUnit::Percent}, 101.0},  // sample-edge overshoot is clamped
      {{PmQuantity::TensorActive, "tc", PmUnit::Percent}, 40},
      {{PmQuantity::DramRead, "rd", PmUnit::BytesPerSample}, 2.5e5},
      {{PmQuantity::DramWrite, "wr", PmUnit::PercentOfDramPeak}, 50},
  };
  PmSample s = to_pm_sample(1000000, 1100000, v, 3.35e12);  // a 100 us sample
  EXPECT_EQ(s.t_ns, 1000000u);
  EXPECT_DOUBLE_EQ(s.gr_active, 0.975);
  EXPECT_DOUBLE_EQ(s.sm_active, 1.0);
  EXPECT_DOUBLE_EQ(s.tensor_active, 0.4);
  EXPECT_DOUBLE_EQ(s.dram_read_bps, 2.5e5 / 100e-6);
  EXPECT_DOUBLE_EQ(s.dram_write_bps, 0.5 * 3.35e12);
  std::vector<std::pair<PmMetricCandidate, double>> rate = {
      {{PmQuantity::DramRead, "rd", PmUnit::BytesPerSecond}, 1.2e12}};
  EXPECT_DOUBLE_EQ(to_pm_sample(0, 0, rate, 0).dram_read_bps, 1.2e12);
  // A zero-length sample cannot give a rate from a count.
  std::vector<std::pair<PmMetricCandidate, double>> count = {
      {{PmQuantity::DramRead, "rd", PmUnit::BytesPerSample}, 1e6}};
  EXPECT_DOUBLE_EQ(to_pm_sample(5, 5, count, 0).dram_read_bps, 0);
  std::vector<std::pair<PmMetricCandidate, double>> nan = {
      {{PmQuantity::GrActive, "gr", PmUnit::Percent}, std::nan("")}};
  EXPECT_DOUBLE_EQ(to_pm_sample(0, 100, nan, 0).gr_active, 0);
  std::vector<std::pair<PmMetricCandidate, double>> frac = {{{PmQuantity::SmActive, "sm", PmUnit::Fraction}, 0.25}};
  EXPECT_DOUBLE_EQ(to_pm_sample(0, 100, frac, 0).sm_active, 0.25);
}

TEST(PmSampleConversion, SamplesStartingBeforeTheSessionAreStale) {
  // The first H100 run: a first sample stamped 1.68 s before the sampler started.
  const std::uint64_t start = 1795324859612338057ull, interval = 100000;
  EXPECT_FALSE(pm_sample_in_session(1795324857930010891ull, start, interval));
  EXPECT_TRUE(pm_sample_in_session(start + 250000, start, interval));
  // The host's and the GPU's view of the clock may differ a little: 10 ms of slack,
  // or 10 intervals when those are longer.
  EXPECT_TRUE(pm_sample_in_session(start - 9000000, start, interval));
  EXPECT_FALSE(pm_sample_in_session(start - 11000000, start, interval));
  EXPECT_TRUE(pm_sample_in_session(start - 90000000, start, 10000000));
  EXPECT_TRUE(pm_sample_in_session(5, 1000, interval));  // no wrap-around near zero
}

TEST(PmSampleConversion, EveryQuantityHasCandidates) {
  for (PmQuantity q : {PmQuantity::GrActive, PmQuantity::SmActive, PmQuantity::TensorActive, PmQuantity::DramRead,
                       PmQuantity::DramWrite}) {
    int n = 0;
    for (const auto& c : pm_metric_candidates()) n += c.quantity == q;
    EXPECT_GT(n, 0) << to_string(q);
  }
}

TEST(CounterEntryPoints, BadPmIntervalIsAUsageError) {
  PmSamplerOptions o;
  o.interval_ns = 10;  // below 1 us
  PmSampler pm(o);
  CounterStatus s = pm.try_start();
  EXPECT_FALSE(s.ok());
#if ROOFLINE_HAVE_CUDA
  EXPECT_EQ(s.problem, CounterProblem::BadOption);
  EXPECT_EQ(s.to_error().kind(), ErrorKind::Usage);
#else
  EXPECT_EQ(s.problem, CounterProblem::Unsupported);
#endif
  EXPECT_THROW(pm.start(), Error);
  EXPECT_FALSE(pm.running());
}

TEST(CounterEntryPoints, WithoutAGpuTheyFailCleanlyAndNeverThrowOnTheStatusPath) {
  if (cuda::gpu_count() > 0) GTEST_SKIP() << "a GPU is present: tests/gpu/test_counters_gpu.cpp covers it";
  RangeProfiler rp;
  CounterStatus s = rp.try_start();
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(s.problem == CounterProblem::NoGpu || s.problem == CounterProblem::Unsupported) << s.message();
  EXPECT_THROW(rp.start(), Error);
  EXPECT_TRUE(rp.records().empty());
  EXPECT_TRUE(rp.try_stop().ok());
  PmSampler pm;
  CounterStatus p = pm.try_start();
  EXPECT_FALSE(p.ok());
  try {
    pm.start();
    FAIL() << "start() without a GPU must throw";
  } catch (const Error& e) {
    EXPECT_TRUE(e.kind() == ErrorKind::Device || e.kind() == ErrorKind::Unsupported);
    EXPECT_FALSE(e.hint().empty());
  }
}

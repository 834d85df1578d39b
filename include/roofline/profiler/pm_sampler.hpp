// Utilization over a window: CUPTI PM sampling. The GPU's performance monitor
// samples counters at a fixed time interval into a hardware buffer; a
// background thread decodes that buffer every few milliseconds into PmSample
// points (GR active, SM active, tensor pipe active, DRAM read and write
// bandwidth). Nothing runs per kernel launch, so the workload in the same
// process is not serialized or instrumented (docs/counters.md, "Overhead").
//
// Works in our own binaries (start() throws roofline::Error) and inside the
// injection library (try_start() returns a CounterStatus and never throws).
// PM sampling is per device and needs a single-pass metric set; which metric
// measures each quantity is chosen at runtime from what the chip supports.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "roofline/profiler/counter_status.hpp"
#include "roofline/profiler/profile_data.hpp"

namespace roofline::prof {

// The shortest interval `roofline profile --pm-sampling` accepts. Measured on an
// H200 with CUPTI 13.0 (2026-11-27, a PyTorch CNN script): at 10, 20 and 50 us
// the hardware buffer overflowed after 2,044, 1,020 and 4,950 samples, leaving
// most of the run unsampled (50 us covered the run in a second call); 70, 100
// and 200 us covered it. Below this the series would not cover the run.
inline constexpr std::uint64_t kMinPmIntervalNs = 100'000;

// ----------------------------------------------------------------- metric choice (plain C++)

enum class PmQuantity { GrActive, SmActive, TensorActive, DramRead, DramWrite };
const char* to_string(PmQuantity q) noexcept;

// How a metric's value becomes the PmSample field.
enum class PmUnit {
  Percent,            // 0..100 -> fraction 0..1
  Fraction,           // 0..1 as is (per_cycle_elapsed ratios)
  BytesPerSecond,     // as is
  BytesPerSample,     // a count over the sample: divided by the sample's duration
  PercentOfDramPeak,  // 0..100 of the DRAM peak -> bytes/s (needs the peak bandwidth)
};

struct PmMetricCandidate {
  PmQuantity quantity;
  std::string metric;  // full name with rollup/submetric
  PmUnit unit;
};

// Candidates in order of preference per quantity; the sampler takes, for each
// quantity, the first one the chip supports in PM sampling, as long as the set
// stays single-pass.
const std::vector<PmMetricCandidate>& pm_metric_candidates();

// Whether a sample starting at `start_ns` (CUPTI timestamp clock) belongs to a
// session that began at `session_start_ns`: not more than max(10 ms, 10 intervals)
// earlier, a margin for the GPU's and the host's views of the clock.
bool pm_sample_in_session(std::uint64_t start_ns, std::uint64_t session_start_ns, std::uint64_t interval_ns);

// Turns one decoded sample into a PmSample. `values` pairs each chosen candidate
// with its evaluated value; quantities without a chosen metric stay 0.
// `dram_peak_bps` is used only for PercentOfDramPeak metrics.
PmSample to_pm_sample(std::uint64_t start_ns, std::uint64_t end_ns,
                      const std::vector<std::pair<PmMetricCandidate, double>>& values, double dram_peak_bps);

// ----------------------------------------------------------------- the sampler

struct PmSamplerOptions {
  int device = 0;                       // CUDA device ordinal
  std::uint64_t interval_ns = 100000;   // sampling interval (time-based trigger); >= 1000
  std::uint32_t decode_period_ms = 20;  // how often the background thread drains the hardware buffer
  std::size_t hw_buffer_bytes = 0;      // 0: sized for 4 decode periods of samples (at least 32 MiB)
  double dram_peak_bps = 0;             // 0: from the device's memory clock and bus width
  std::size_t max_kept_samples = 0;     // 0: keep all; else the oldest are dropped (and counted)
  std::size_t min_image_samples = 0;    // the counter-data image holds at least this many samples
};

struct PmStats {
  std::uint64_t decodes = 0;        // decode passes
  std::uint64_t samples = 0;        // samples kept
  std::uint64_t empty_samples = 0;  // zero-length or unstamped samples skipped
  // Samples that claim to start before this session did (more than the slack below
  // earlier), skipped: the first sample after a start can carry a stale start time
  // (1.68 s before the session on the H100, in a process that had used the range
  // profiler), so its values cover an unknown stretch (docs/counters.md).
  std::uint64_t stale_samples = 0;
  std::uint64_t dropped_samples = 0;  // lost to a full counter-data image or max_kept_samples
  std::uint64_t image_full = 0;       // decode passes that filled the counter-data image (samples may be lost)
  std::uint64_t image_overruns = 0;       // CUPTI calls that wrote past the counter-data image (into its guard)
  std::uint64_t image_overrun_bytes = 0;  // the furthest such write, in bytes past the image
  bool hw_overflow = false;           // the hardware buffer overflowed (samples lost for good)
  double decode_seconds = 0;          // host time spent decoding and evaluating (background thread)
};

class PmSampler {
 public:
  explicit PmSampler(PmSamplerOptions opts = {});
  ~PmSampler();  // stops sampling; never throws
  PmSampler(const PmSampler&) = delete;
  PmSampler& operator=(const PmSampler&) = delete;

  // Enables PM sampling on the device, chooses the metrics and starts the
  // decode thread. Throws roofline::Error (Usage for bad options, Device for
  // permission/busy/no GPU, Unsupported in a CPU-only build or on GPUs without
  // time-based sampling such as GA100).
  void start();
  void start(int device, std::uint64_t interval_ns);
  CounterStatus try_start() noexcept;
  // Stops sampling, decodes what is left and joins the thread. Throws on failure.
  void stop();
  CounterStatus try_stop() noexcept;
  // At process exit: stops sampling and decodes what is left like try_stop(),
  // but leaves the PM-sampling object enabled for the driver to free with the
  // process. cuptiPmSamplingDisable at exit crashed (SIGSEGV in
  // libnvperf_host) after a 1.5 s program of 300,000 launches on an H100
  // (CUDA 13.0, driver 580), losing the program's final profile. The crash
  // came with the sampler started from a second thread, which the injection
  // library does not do (counters_bridge.cpp says why); disabling at exit
  // buys nothing, so it is skipped.
  CounterStatus try_stop_at_exit() noexcept;

  bool running() const;
  std::vector<PmSample> samples() const;  // everything kept so far (copy)
  std::vector<PmSample> take_samples();   // and forget them (periodic snapshots)
  // The metric chosen for each quantity ("" when the chip offers none).
  std::map<std::string, std::string> chosen_metrics() const;
  PmStats stats() const;
  // The first error the decode thread met (ok while all is well).
  CounterStatus status() const;
  double interval_ns() const;

  // Base metric names PM sampling supports on this device's chip (for docs and --list).
  static std::vector<std::string> supported_metrics(int device);

 private:
  CounterStatus stop_impl(bool release) noexcept;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace roofline::prof

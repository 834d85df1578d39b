// Measurement as a library, after nvbench: warm-up, at least `min_samples`
// timed samples, a stopping rule on relative spread, median/min/max/IQR, the
// clock sampled with every sample and throttled samples flagged (and left out
// of the summary while enough clean samples remain).
#pragma once
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "roofline/core/stats.hpp"

namespace roofline::measure {

struct MeasureOptions {
  int warmup = 3;                // untimed runs first
  int min_samples = 10;
  int max_samples = 200;
  double target_rel_stdev = 0.005;  // stop once stdev/mean of the samples is this small...
  double min_seconds = 0.0;         // ...and at least this much time was spent sampling
  double max_seconds = 3.0;         // give up on the spread after this long (flagged unconverged)
  bool flush_l2 = false;            // GPU: overwrite L2 before every sample
  // GPU: a spin kernel of this many microseconds runs before each sample's start
  // event, so the host's own launch overhead between the two events is hidden
  // behind it instead of timed as idle GPU (0: off).
  double launch_cover_us = 50;
  double throttle_fraction = 0.75;  // a sample whose clock fell below this x the max clock is throttled

  static MeasureOptions quick();    // fewer samples, shorter limits (--quick)
};

struct Measurement {
  Summary time;                  // seconds per sample, throttled samples left out
  std::vector<double> samples;   // every sample, seconds, in order
  std::vector<double> clock_mhz; // clock read with each sample (empty when unknown)
  std::vector<bool> throttled;   // per sample
  double clock_median_mhz = 0;   // 0 when unknown
  int throttled_count = 0;
  bool converged = false;        // the spread target was met
  std::string clock_source;      // "nvml", "in-kernel clock64/%globaltimer", "cpufreq", "" (unknown)
  // NVML's SM clock per sample when clock_mhz came from elsewhere (the kernel's
  // own probe): both are kept, so the two can be compared.
  std::vector<double> nvml_clock_mhz;
  double nvml_clock_median_mhz = 0;

  nlohmann::json to_json() const;
};

// Times `fn` on the host (steady_clock).
Measurement measure_cpu(const std::function<void()>& fn, const MeasureOptions& opts = {});

// Builds a Measurement from raw samples (shared by the CPU and GPU timers).
Measurement summarise_samples(std::vector<double> samples, std::vector<double> clocks, double max_clock_mhz,
                              double throttle_fraction, std::vector<bool> throttled_hint = {});

// Whether the sampling loop may stop after these samples.
bool stopping_rule_met(const std::vector<double>& samples, const MeasureOptions& opts, double elapsed_s);

}  // namespace roofline::measure

#include "roofline/measure/measure.hpp"

#include <chrono>
#include <fstream>
#include <string>

#include "roofline/core/strings.hpp"

namespace roofline::measure {

MeasureOptions MeasureOptions::quick() {
  MeasureOptions o;
  o.warmup = 2;
  o.min_samples = 10;
  o.max_samples = 30;
  o.target_rel_stdev = 0.01;
  o.max_seconds = 0.5;
  return o;
}

nlohmann::json Measurement::to_json() const {
  return {{"median_s", time.median}, {"min_s", time.min},     {"max_s", time.max},
          {"q1_s", time.q1},         {"q3_s", time.q3},       {"mean_s", time.mean},
          {"rel_stdev", time.rel_stdev}, {"samples", samples.size()}, {"used_samples", time.n},
          {"clock_mhz", clock_median_mhz}, {"clock_source", clock_source},
          {"throttled_samples", throttled_count}, {"converged", converged},
          {"nvml_clock_mhz", nvml_clock_median_mhz}};
}

bool stopping_rule_met(const std::vector<double>& samples, const MeasureOptions& opts, double elapsed_s) {
  if (static_cast<int>(samples.size()) < opts.min_samples) return false;
  if (static_cast<int>(samples.size()) >= opts.max_samples) return true;
  if (elapsed_s >= opts.max_seconds) return true;
  if (elapsed_s < opts.min_seconds) return false;
  return summarize(samples).rel_stdev <= opts.target_rel_stdev;
}

Measurement summarise_samples(std::vector<double> samples, std::vector<double> clocks, double max_clock_mhz,
                              double throttle_fraction, std::vector<bool> hint) {
  Measurement m;
  m.samples = std::move(samples);
  m.clock_mhz = std::move(clocks);
  m.throttled.assign(m.samples.size(), false);
  for (size_t i = 0; i < m.samples.size(); ++i) {
    bool t = i < hint.size() && hint[i];
    if (max_clock_mhz > 0 && i < m.clock_mhz.size() && m.clock_mhz[i] > 0 &&
        m.clock_mhz[i] < throttle_fraction * max_clock_mhz)
      t = true;
    m.throttled[i] = t;
    m.throttled_count += t;
  }
  std::vector<double> clean;
  for (size_t i = 0; i < m.samples.size(); ++i)
    if (!m.throttled[i]) clean.push_back(m.samples[i]);
  // Keep throttled samples out of the figures while at least half are clean;
  // otherwise report all of them (and the count says why they are slow).
  m.time = summarize(clean.size() * 2 >= m.samples.size() && !clean.empty() ? clean : m.samples);
  std::vector<double> known;
  for (double c : m.clock_mhz)
    if (c > 0) known.push_back(c);
  m.clock_median_mhz = known.empty() ? 0 : summarize(known).median;
  return m;
}

namespace {
// Current frequency of the CPU we run on, from cpufreq or /proc/cpuinfo (MHz).
double cpu_clock_mhz() {
  std::ifstream f("/sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq");
  double khz = 0;
  if (f >> khz && khz > 0) return khz / 1000.0;
  return 0;
}
}  // namespace

Measurement measure_cpu(const std::function<void()>& fn, const MeasureOptions& opts) {
  using clock = std::chrono::steady_clock;
  for (int i = 0; i < opts.warmup; ++i) fn();
  std::vector<double> samples, clocks;
  auto start = clock::now();
  for (;;) {
    auto t0 = clock::now();
    fn();
    auto t1 = clock::now();
    samples.push_back(std::chrono::duration<double>(t1 - t0).count());
    clocks.push_back(cpu_clock_mhz());
    double elapsed = std::chrono::duration<double>(t1 - start).count();
    if (stopping_rule_met(samples, opts, elapsed)) break;
  }
  Measurement m = summarise_samples(std::move(samples), std::move(clocks), 0, opts.throttle_fraction);
  m.converged = m.time.rel_stdev <= opts.target_rel_stdev;
  m.clock_source = m.clock_median_mhz > 0 ? "cpufreq" : "";
  return m;
}

}  // namespace roofline::measure

#include "src/profiler/diagnosis/facts.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "roofline/core/strings.hpp"

namespace roofline::prof::diag {

std::string t(double ns) { return format_seconds(ns * 1e-9); }

std::string pct(double f) {
  double p = f * 100;
  if (p != 0 && p < 0.1) return fmt::format("{:.2f}%", p);
  if (p < 10) return fmt::format("{:.1f}%", p);
  return fmt::format("{:.0f}%", p);
}

std::string count(std::uint64_t n) {
  std::string digits = std::to_string(n), s;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) s += ',';
    s += digits[i];
  }
  return s;
}

namespace {

// Gap histogram buckets of 1 ms and more, with their lower bounds.
constexpr struct {
  const char* key;
  double min_ns;
  bool long_gap;
} kBuckets[] = {{"<10us", 0, false},
                {"10-100us", 10e3, false},
                {"0.1-1ms", 100e3, false},
                {"1-10ms", 1e6, true},
                {">10ms", 10e6, true}};

}  // namespace

Facts::Facts(const ProfileData& profile, const DiagnosisOptions& options) : p(profile), o(options) {
  std::map<std::string, KernelAgg> by_name;
  for (const auto& [key, k] : p.kernels) {
    auto& a = by_name[k.name];
    if (a.name.empty()) {
      a.name = k.name;
      // Decode the demangled form when the profiler kept one (same result, less work).
      a.info = explain_kernel(k.demangled.empty() ? k.name : k.demangled);
      a.shown = shorten_kernel_name(k.demangled.empty() ? k.name : k.demangled, 60);
      a.blocks = std::uint64_t{k.grid[0]} * std::max(1u, k.grid[1]) * std::max(1u, k.grid[2]);
    }
    a.total_ns += k.duration.total();
    a.count += k.duration.count();
  }
  for (auto& [n, a] : by_name) {
    a.mean_ns = a.count ? a.total_ns / static_cast<double>(a.count) : 0;
    kernel_total_ns += a.total_ns;
    launches += a.count;
    kernels.push_back(std::move(a));
  }
  std::sort(kernels.begin(), kernels.end(), [](const KernelAgg& x, const KernelAgg& y) {
    return x.total_ns != y.total_ns ? x.total_ns > y.total_ns : x.name < y.name;
  });

  const Timeline& tl = p.timeline;
  // With a capture range, only captured time: the window less what the gate
  // left out, and the captured ranges in place of the process's wall time.
  window_ns = static_cast<double>(tl.window_ns());
  const double process_ns =
      tl.process_end_ns > tl.process_start_ns ? static_cast<double>(tl.process_end_ns - tl.process_start_ns) : 0;
  wall_ns = p.capture.active() ? static_cast<double>(p.capture.captured_ns()) : process_ns;
  base_ns = wall_ns > 0 ? wall_ns : window_ns;
  busy = tl.busy_fraction();
  double gpu_busy = static_cast<double>(std::max(tl.gpu_busy_ns, tl.kernel_busy_ns));
  idle_ns = std::max(0.0, window_ns - gpu_busy);

  for (const auto& b : kBuckets) {
    auto it = tl.gap_histogram.find(b.key);
    if (it != tl.gap_histogram.end() && b.long_gap) long_gaps += it->second;
  }
  if (!tl.gap_ns_histogram.empty()) {
    idle_split_exact = true;
    for (const auto& b : kBuckets) {
      auto it = tl.gap_ns_histogram.find(b.key);
      if (it == tl.gap_ns_histogram.end()) continue;
      (b.long_gap ? long_idle_ns : short_idle_ns) += static_cast<double>(it->second);
    }
  } else {
    // Only counts per bucket: a lower bound on the long-gap idle time from
    // the listed largest gaps plus each other long gap at its bucket's minimum.
    double listed = 0;
    std::uint64_t listed_n = 0;
    for (const auto& g : tl.largest_gaps) {
      double d = static_cast<double>(g.end_ns - g.start_ns);
      if (d >= 1e6) {
        listed += d;
        ++listed_n;
      }
    }
    double rest = 0;
    std::uint64_t over10 = tl.gap_histogram.count(">10ms") ? tl.gap_histogram.at(">10ms") : 0;
    std::uint64_t unlisted = long_gaps > listed_n ? long_gaps - listed_n : 0;
    std::uint64_t unlisted_over10 = std::min(unlisted, over10 > listed_n ? over10 - listed_n : 0);
    rest = static_cast<double>(unlisted_over10) * 10e6 + static_cast<double>(unlisted - unlisted_over10) * 1e6;
    long_idle_ns = std::min(idle_ns, listed + rest);
    short_idle_ns = std::max(0.0, idle_ns - long_idle_ns);
  }

  steady_window_ns = window_ns;
  steady_long_idle_ns = long_idle_ns;
  if (!tl.largest_gaps.empty() && window_ns > 0) {
    std::vector<Interval> g = tl.largest_gaps;
    std::sort(g.begin(), g.end(), [](const Interval& a, const Interval& b) {
      return a.end_ns - a.start_ns > b.end_ns - b.start_ns;
    });
    const double first = static_cast<double>(g[0].end_ns - g[0].start_ns);
    const double second = g.size() > 1 ? static_cast<double>(g[1].end_ns - g[1].start_ns) : 0;
    const double starts_at = static_cast<double>(g[0].start_ns) - static_cast<double>(tl.first_gpu_ns);
    if (first >= 1e9 && first >= 5 * second && starts_at <= 0.25 * window_ns && first <= long_idle_ns) {
      one_time_gap = g[0];
      steady_window_ns = window_ns - first;
      steady_long_idle_ns = long_idle_ns - first;
    }
  }

  sm_count = o.sm_count;
  if (sm_count == 0)
    for (const auto& d : p.devices)
      if (int n = sm_count_from_name(d)) sm_count = n;
}

const KernelAgg* Facts::kernel(const std::string& name) const {
  for (const auto& k : kernels)
    if (k.name == name || k.info.demangled == name) return &k;
  return nullptr;
}

Diagnosis Facts::make(const Rule& rule, std::string evidence, std::string suggestion, double impact_ns) const {
  Diagnosis d;
  d.rule = rule.id;
  d.title = rule.title;
  d.evidence = std::move(evidence);
  d.suggestion = std::move(suggestion);
  d.impact_ns = std::max(0.0, impact_ns);
  d.severity = severity_for(d.impact_ns, base_ns, o);
  return d;
}

}  // namespace roofline::prof::diag

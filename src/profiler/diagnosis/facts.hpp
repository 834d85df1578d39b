// What every diagnosis rule reads, computed once from a ProfileData
// (private to diagnosis/).
#pragma once
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "roofline/profiler/diagnosis.hpp"
#include "roofline/profiler/explain.hpp"

namespace roofline::prof::diag {

// One kernel name, summed over its NVTX paths.
struct KernelAgg {
  std::string name;   // as recorded (mangled or not)
  std::string shown;  // short name for evidence text
  KernelInfo info;
  double total_ns = 0;
  std::uint64_t count = 0;
  double mean_ns = 0;
  std::uint64_t blocks = 0;  // grid size of the first launch (0: unknown)
};

struct Facts;

// One diagnosis rule: a row of the table in rules.cpp, which diagnose() runs
// in order. The function (one file per rule) returns a finding made with
// Facts::make(rule, ...) when the profile shows what the rule looks for.
struct Rule {
  const char* id;     // stable: tests, stored profiles and docs/diagnosis.md name it
  const char* title;  // the finding's heading
  const char* when;   // the condition, in words, with the option names
  std::optional<Diagnosis> (*check)(const Facts& facts, const Rule& rule);
  bool empty_profile = false;  // runs on a profile without GPU work, alone, instead of the others
  // Reads the timeline (gaps, busy fraction): off when launches are missing
  // from it (--counters replayed them without timestamps).
  bool reads_timeline = false;
};
// Every rule, in the order diagnose() runs them.
std::span<const Rule> rules();

struct Facts {
  const ProfileData& p;
  const DiagnosisOptions& o;
  std::vector<KernelAgg> kernels;  // longest total first
  double kernel_total_ns = 0;
  std::uint64_t launches = 0;  // kernel instances
  double window_ns = 0;        // GPU-active window: first GPU activity to last (captured time only)
  double wall_ns = 0;          // profiled process wall time, or the captured ranges' time (0: unknown)
  double base_ns = 0;          // wall time, else the window: what shares are of
  double busy = 0;             // kernel busy fraction of the window
  double idle_ns = 0;          // window minus GPU busy (kernels, copies, memsets)
  // Idle split by gap length (gaps < 1 ms: launch-sized; >= 1 ms: host-sized).
  double short_idle_ns = 0, long_idle_ns = 0;
  bool idle_split_exact = false;  // from gap_ns_histogram; else bounds from counts
  std::uint64_t long_gaps = 0;    // number of gaps >= 1 ms
  // A one-time phase: one gap of at least 1 s, at least 5 times any other,
  // starting in the first quarter of the window (compilation, loading, a
  // warm-up before the steady state; torch.compile's graphs are built so).
  // Its length is left out of the starvation figures below.
  Interval one_time_gap;             // {0, 0}: none
  double steady_window_ns = 0;       // window_ns less the one-time gap
  double steady_long_idle_ns = 0;    // long_idle_ns less the one-time gap
  int sm_count = 0;

  Facts(const ProfileData& profile, const DiagnosisOptions& options);
  const KernelAgg* kernel(const std::string& name) const;
  // Total time and calls of the APIs whose names `match` accepts.
  struct ApiTotal {
    double ns = 0;
    std::uint64_t calls = 0;
    std::vector<std::string> names;
  };
  template <class F>
  ApiTotal apis(F match) const {
    ApiTotal t;
    for (const auto& [key, a] : p.apis)
      if (match(a.name)) {
        t.ns += a.duration.total();
        t.calls += a.duration.count();
        t.names.push_back(a.name);
      }
    return t;
  }
  // A finding of `rule` (its id and title) with its evidence, suggestion and
  // the time at stake, from which the severity follows.
  Diagnosis make(const Rule& rule, std::string evidence, std::string suggestion, double impact_ns) const;
};

// Text helpers for evidence: "1.23 ms", "12.3%", "1,234".
std::string t(double ns);
std::string pct(double fraction);
std::string count(std::uint64_t n);

// The rules' checks, one file each (the memory and compute roofline rules
// share roofline_rules.cpp).
std::optional<Diagnosis> waiting_on_data(const Facts& c, const Rule& rule);
std::optional<Diagnosis> host_starvation(const Facts& c, const Rule& rule);
std::optional<Diagnosis> one_time_phase(const Facts& c, const Rule& rule);
std::optional<Diagnosis> launch_bound(const Facts& c, const Rule& rule);
std::optional<Diagnosis> blocking_sync(const Facts& c, const Rule& rule);
std::optional<Diagnosis> sync_memcpy(const Facts& c, const Rule& rule);
std::optional<Diagnosis> pageable_memcpy(const Facts& c, const Rule& rule);
std::optional<Diagnosis> fp32_no_tensor_cores(const Facts& c, const Rule& rule);
std::optional<Diagnosis> small_batch(const Facts& c, const Rule& rule);
std::optional<Diagnosis> fusion_candidates(const Facts& c, const Rule& rule);
std::optional<Diagnosis> memory_bound_low_bandwidth(const Facts& c, const Rule& rule);
std::optional<Diagnosis> compute_below_peak(const Facts& c, const Rule& rule);
std::optional<Diagnosis> no_gpu_work(const Facts& c, const Rule& rule);
std::optional<Diagnosis> straggler(const Facts& c, const Rule& rule);

}  // namespace roofline::prof::diag

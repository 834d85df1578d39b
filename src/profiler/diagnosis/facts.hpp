// What every diagnosis rule reads, computed once from a ProfileData
// (private to diagnosis/).
#pragma once
#include <optional>
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

struct Facts {
  const ProfileData& p;
  const DiagnosisOptions& o;
  std::vector<KernelAgg> kernels;  // longest total first
  double kernel_total_ns = 0;
  std::uint64_t launches = 0;  // kernel instances
  double window_ns = 0;        // GPU-active window: first GPU activity to last
  double wall_ns = 0;          // profiled process wall time (0: unknown)
  double base_ns = 0;          // wall time, else the window: what shares are of
  double busy = 0;             // kernel busy fraction of the window
  double idle_ns = 0;          // window minus GPU busy (kernels, copies, memsets)
  // Idle split by gap length (gaps < 1 ms: launch-sized; >= 1 ms: host-sized).
  double short_idle_ns = 0, long_idle_ns = 0;
  bool idle_split_exact = false;  // from gap_ns_histogram; else bounds from counts
  std::uint64_t long_gaps = 0;    // number of gaps >= 1 ms
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
  Diagnosis make(const std::string& rule, const std::string& title, std::string evidence, std::string suggestion,
                 double impact_ns) const;
};

// Text helpers for evidence: "1.23 ms", "12.3%", "1,234".
std::string t(double ns);
std::string pct(double fraction);
std::string count(std::uint64_t n);

// The rules, one per file.
std::optional<Diagnosis> launch_bound(const Facts& c);
std::optional<Diagnosis> host_starvation(const Facts& c);
std::optional<Diagnosis> waiting_on_data(const Facts& c);
std::optional<Diagnosis> pageable_memcpy(const Facts& c);
std::optional<Diagnosis> sync_memcpy(const Facts& c);
std::optional<Diagnosis> blocking_sync(const Facts& c);
std::optional<Diagnosis> fp32_no_tensor_cores(const Facts& c);
std::optional<Diagnosis> small_batch(const Facts& c);
std::optional<Diagnosis> fusion_candidates(const Facts& c);
std::optional<Diagnosis> memory_bound_low_bandwidth(const Facts& c);
std::optional<Diagnosis> compute_below_peak(const Facts& c);

}  // namespace roofline::prof::diag

// diagnose(): runs every rule over a profile and orders the findings by the
// time at stake.
#include <algorithm>

#include "roofline/hardware/datasheet.hpp"
#include "src/profiler/diagnosis/facts.hpp"

namespace roofline::prof {

const std::vector<RuleInfo>& diagnosis_rules() {
  static const std::vector<RuleInfo> rules = {
      {"waiting-on-data", "GPU waits for input data between steps",
       "at least min_steps host-to-device copies and as many gaps of 1 ms or more (0.5 to 8 copies per gap)"},
      {"host-starvation", "GPU idle in long gaps: the host is not submitting work",
       "idle time in gaps >= 1 ms is at least starvation_share of the GPU-active window"},
      {"launch-bound", "Kernels are shorter than their launch: launch overhead dominates",
       "busy fraction < busy_low, idle in gaps < 1 ms, and >= short_launch_share of launches shorter than their "
       "launch call or mean kernel < small_kernel_ns"},
      {"blocking-sync", "Blocking synchronisation stalls the pipeline",
       "synchronise calls take >= sync_share of wall time or number >= sync_per_launch per launch, and the GPU "
       "is idle for at least low_share of the run"},
      {"sync-memcpy", "Synchronous copies or memsets block the host", "any copy or memset issued by a synchronous API"},
      {"pageable-memcpy", "Copies from pageable host memory", "any copy that touched pageable host memory"},
      {"fp32-no-tensor-cores", "FP32 GEMMs/convolutions run on CUDA cores, not tensor cores",
       "kernels decoded as FP32 GEMM/convolution without tensor cores hold >= fp32_matmul_share of kernel time"},
      {"low-utilization-small-batch", "Kernels too small to fill the GPU",
       "busy fraction < busy_low and kernels with fewer blocks than SMs hold >= small_grid_share of kernel time"},
      {"fusion-candidates", "Chains of memory-bound elementwise kernels (fusion candidates)",
       "a recorded sequence of >= 2 elementwise kernels seen >= min_sequence_count times holding >= fusion_share "
       "of kernel time"},
      {"memory-bound-low-bandwidth", "Memory-bound kernels far below the memory bandwidth",
       "with counters and a roofline: memory-bound kernels below low_efficiency of the bandwidth roof"},
      {"compute-bound-below-peak", "Compute-bound kernels far below the compute peak",
       "with counters and a roofline: compute-bound kernels below low_efficiency of the compute roof"},
      {"no-gpu-work", "No GPU work recorded", "no kernel, copy or memset in the profile"},
  };
  return rules;
}

std::string severity_for(double impact_ns, double base_ns, const DiagnosisOptions& o) {
  if (base_ns <= 0 || impact_ns <= 0) return "info";
  double share = impact_ns / base_ns;
  if (share >= o.high_share) return "high";
  if (share >= o.medium_share) return "medium";
  if (share >= o.low_share) return "low";
  return "info";
}

int sm_count_from_name(const std::string& device_name) {
  // The name alone (no memory size or SM count): it may fit several boards of
  // one product, which count as one answer when they agree.
  int sms = 0;
  for (const hw::Datasheet* d : hw::explain_match(device_name, 0, 0).fits) {
    if (d->sms <= 0 || (sms != 0 && d->sms != sms)) return 0;
    sms = d->sms;
  }
  return sms;
}

std::vector<Diagnosis> diagnose(const ProfileData& profile, const DiagnosisOptions& options) {
  using namespace diag;
  Facts c(profile, options);
  std::vector<Diagnosis> out;
  if (profile.kernels.empty() && profile.memcpys.empty()) {
    out.push_back(
        c.make("no-gpu-work", "No GPU work recorded",
               "the profile holds no kernel, copy or memset" +
                   (profile.apis.empty() ? std::string(" and no CUDA API call")
                                         : ", but " + count(profile.apis.size()) + " CUDA API functions were called"),
               "check that the program uses the GPU (device placement, CUDA_VISIBLE_DEVICES) and runs long "
               "enough to launch work; a process killed early leaves only a partial profile",
               0));
    return out;
  }
  using Rule = std::optional<Diagnosis> (*)(const Facts&);
  static constexpr Rule rules[] = {
      waiting_on_data,   host_starvation,      launch_bound, blocking_sync,     sync_memcpy,
      pageable_memcpy,   fp32_no_tensor_cores, small_batch,  fusion_candidates, memory_bound_low_bandwidth,
      compute_below_peak};
  for (Rule r : rules)
    if (auto d = r(c)) out.push_back(std::move(*d));
  std::stable_sort(out.begin(), out.end(),
                   [](const Diagnosis& a, const Diagnosis& b) { return a.impact_ns > b.impact_ns; });
  return out;
}

}  // namespace roofline::prof

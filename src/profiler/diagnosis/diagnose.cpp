// diagnose(): runs every rule over a profile and orders the findings by the
// time at stake.
#include <fmt/format.h>

#include <algorithm>

#include "roofline/core/strings.hpp"
#include "roofline/hardware/datasheet.hpp"
#include "src/profiler/diagnosis/facts.hpp"

namespace roofline::prof {

const std::vector<RuleInfo>& diagnosis_rules() {
  static const std::vector<RuleInfo> infos = [] {
    std::vector<RuleInfo> v;
    for (const diag::Rule& r : diag::rules()) v.push_back({r.id, r.title, r.when});
    return v;
  }();
  return infos;
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
  // A profile without GPU work gets the finding that says so; the other rules
  // read GPU work (an API-only profile would make them speak of nothing).
  const bool empty = profile.kernels.empty() && profile.memcpys.empty();
  // Launches missing from the timeline (--counters replays kernels without
  // timestamps, serialized and several times over) would read as idle GPU
  // time: the rules that read the timeline stay off, and say why.
  const std::uint64_t untimed = profile.untimed_launch_count();
  std::vector<std::string> off;
  for (const Rule& r : rules()) {
    if (r.empty_profile != empty) continue;
    if (untimed > 0 && r.reads_timeline) {
      off.push_back(r.id);
      continue;
    }
    if (auto d = r.check(c, r)) out.push_back(std::move(*d));
  }
  if (!off.empty())
    out.push_back({"timeline-rules-off", "info", "The rules that read the timeline did not run",
                   fmt::format("{} kernel launches were replayed by --counters without timestamps, so the timeline "
                               "misses them and its gaps are not the program's: {} off",
                               untimed, join(off, ", ")),
                   "profile once without --counters for the timeline and its diagnoses, once with it for the "
                   "counters",
                   0.0});
  std::stable_sort(out.begin(), out.end(),
                   [](const Diagnosis& a, const Diagnosis& b) { return a.impact_ns > b.impact_ns; });
  return out;
}

}  // namespace roofline::prof

#include "src/ceilings/cpu/plateaus.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "roofline/core/strings.hpp"

namespace roofline::ceilings::cpu {

const Plateau* PlateauResult::find(const std::string& level) const {
  for (const auto& p : plateaus)
    if (p.level == level) return &p;
  return nullptr;
}

namespace {
double median_of(const std::vector<SweepSample>& s, size_t first, size_t last) {
  std::vector<double> v;
  for (size_t i = first; i <= last; ++i) v.push_back(s[i].bandwidth);
  std::sort(v.begin(), v.end());
  size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}
}  // namespace

PlateauResult find_plateaus(const std::vector<SweepSample>& s, const CacheSizes& caches, int threads,
                            double mem_min_total_bytes, double tolerance) {
  PlateauResult r;
  const double band = std::log1p(tolerance);
  // 1. Greedy runs: extend while the new sample stays near the run's median.
  std::vector<Plateau> runs;
  size_t i = 0;
  while (i < s.size()) {
    size_t j = i;
    while (j + 1 < s.size() && s[j + 1].bandwidth > 0 &&
           std::fabs(std::log(s[j + 1].bandwidth / median_of(s, i, j + 1))) <= band &&
           std::fabs(std::log(s[j + 1].bandwidth / median_of(s, i, j))) <= band)
      ++j;
    if (j > i) runs.push_back({i, j, median_of(s, i, j), ""});
    i = j + 1;
  }
  // 2. Neighbouring runs at the same level (split by one noisy sample) are one plateau.
  for (size_t k = 0; k < runs.size(); ++k) {
    if (!r.plateaus.empty() && std::fabs(std::log(runs[k].bandwidth / r.plateaus.back().bandwidth)) <= band) {
      r.plateaus.back().last = runs[k].last;
      r.plateaus.back().bandwidth = median_of(s, r.plateaus.back().first, runs[k].last);
    } else {
      r.plateaus.push_back(runs[k]);
    }
  }
  std::string how = fmt::format(
      "plateaus: runs of 2 or more consecutive sizes within {:.0f}% of the run's median bandwidth; each level's "
      "figure is its plateau's median",
      100 * tolerance);
  // 3. Labels.
  if (caches.known()) {
    r.method = how + "; labelled by the cache sizes (the level that holds the plateau's largest working set)";
    for (auto& p : r.plateaus) {
      double top = s[p.last].bytes_per_thread;
      std::string level = top <= caches.l1 ? "l1" : top <= caches.l2 ? "l2" : (caches.l3 > 0 && top <= caches.l3) ? "l3" : "mem";
      // Keep one plateau per level: the longest.
      auto same = std::find_if(r.plateaus.begin(), r.plateaus.end(), [&](const Plateau& q) { return q.level == level; });
      if (same != r.plateaus.end()) {
        if (same->last - same->first >= p.last - p.first) continue;
        same->level.clear();
      }
      p.level = level;
    }
  } else {
    r.method = how + "; cache sizes unknown, so labelled by order: L1, L2, L3 from the smallest, memory for a last "
                     "plateau beyond " + format_bytes(mem_min_total_bytes) + " in total";
    size_t n = r.plateaus.size();
    size_t caches_end = n;
    if (n >= 2 && s[r.plateaus.back().first].bytes_per_thread * threads >= mem_min_total_bytes) {
      r.plateaus.back().level = "mem";
      caches_end = n - 1;
    }
    static const char* names[] = {"l1", "l2", "l3"};
    for (size_t k = 0; k < caches_end && k < 3; ++k) r.plateaus[k].level = names[k];
    if (caches_end > 3) r.notes.push_back(fmt::format("{} cache plateaus found; the ones after the third are unlabelled", caches_end));
  }
  for (const char* level : {"l1", "l2", "l3", "mem"})
    if (!r.find(level)) r.notes.push_back(fmt::format("no {} plateau found", level));
  return r;
}

}  // namespace roofline::ceilings::cpu

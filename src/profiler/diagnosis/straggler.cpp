// straggler: in a multi-process profile (one process per rank), one rank
// reaches the collectives last most of the time, and the others wait for it.
// The k-th NCCL kernel of every rank is the same collective (the ranks issue
// them in one order); the rank whose kernel starts last is the one the others
// wait for, from their own start to its start (their kernels spin meanwhile,
// which is why their NCCL time is long and the straggler's short).
#include <algorithm>

#include "src/profiler/diagnosis/facts.hpp"

namespace roofline::prof::diag {

std::optional<Diagnosis> straggler(const Facts& c, const Rule& rule) {
  std::vector<const RankRow*> ranks;
  for (const RankRow& r : c.p.ranks)
    if (!r.collectives.empty()) ranks.push_back(&r);
  if (ranks.size() < 2) return std::nullopt;
  size_t n = ranks[0]->collectives.size();
  for (const RankRow* r : ranks) n = std::min(n, r->collectives.size());
  if (n < c.o.straggler_min_collectives) return std::nullopt;
  std::vector<std::uint64_t> last(ranks.size(), 0);
  std::vector<double> waits(ranks.size(), 0);  // what the others waited for each rank, summed over the ranks it was last at
  std::vector<std::vector<double>> each(ranks.size());
  for (size_t k = 0; k < n; ++k) {
    size_t late = 0;
    for (size_t r = 1; r < ranks.size(); ++r)
      if (ranks[r]->collectives[k].start_ns > ranks[late]->collectives[k].start_ns) late = r;
    ++last[late];
    // The others' median wait for it at this collective.
    std::vector<double> w;
    for (size_t r = 0; r < ranks.size(); ++r)
      if (r != late)
        w.push_back(static_cast<double>(ranks[late]->collectives[k].start_ns - ranks[r]->collectives[k].start_ns));
    std::nth_element(w.begin(), w.begin() + static_cast<std::ptrdiff_t>(w.size() / 2), w.end());
    const double median = w[w.size() / 2];
    waits[late] += median;
    each[late].push_back(median);
  }
  const size_t worst = static_cast<size_t>(std::max_element(last.begin(), last.end()) - last.begin());
  const double share = static_cast<double>(last[worst]) / static_cast<double>(n);
  // Fair play among R ranks makes each last about 1/R of the time.
  if (share < c.o.straggler_share || share <= 1.0 / static_cast<double>(ranks.size()) + 0.1) return std::nullopt;
  // The time at stake: the median wait times the collectives it was last at
  // (a sum would be ruled by one-time waits: start-up, a first compilation).
  double window = 0;
  for (const RankRow* r : ranks) window = std::max(window, static_cast<double>(r->window_ns));
  auto& w = each[worst];
  std::nth_element(w.begin(), w.begin() + static_cast<std::ptrdiff_t>(w.size() / 2), w.end());
  const double at_stake = w[w.size() / 2] * static_cast<double>(last[worst]);
  if (window <= 0 || at_stake < c.o.low_share * window) return std::nullopt;
  const RankRow& s = *ranks[worst];
  const std::string who = s.rank >= 0 ? "rank " + std::to_string(s.rank) : "process " + std::to_string(s.pid);
  Diagnosis d = c.make(
      rule,
      who + " reaches the NCCL collectives last at " + count(last[worst]) + " of " + count(n) + " (" + pct(share) +
          ", " + std::to_string(ranks.size()) + " ranks); the others wait a median " + t(w[w.size() / 2]) +
          " for it each time, about " + t(at_stake) + " over those collectives (" + pct(at_stake / window) +
          " of the GPU-active window; " + t(waits[worst]) + " summed, one-time waits included)",
      "find what " + who + " does before each collective that the others do not: a slower or throttled GPU "
          "(roofline device shows clocks and throttling), more work (a larger batch or longer sequences), its "
          "input pipeline or host code; the other ranks' NCCL time is mostly this wait, not the link",
      at_stake);
  return d;
}

}  // namespace roofline::prof::diag

// `roofline bench --repeat N`: the rounds' spread and the speedups over them.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "roofline/core/stats.hpp"
#include "roofline/engine/bench.hpp"

namespace roofline::engine {

namespace {
using Key = std::tuple<std::string, std::string, std::string, std::int64_t>;  // source, device, model, batch
Key key_of(const BenchRecord& r) { return {r.source, r.device, r.model, r.batch}; }

double step_s(const BenchRecord& r) { return r.trained && r.diverged.empty() ? r.seconds_per_step() : 0; }
double infer_s(const BenchRecord& r) { return r.diverged.empty() ? r.infer_median_s : 0; }

// Summary of f over the records where it was measured (> 0).
Summary over(const std::vector<const BenchRecord*>& rs, double (*f)(const BenchRecord&)) {
  std::vector<double> v;
  for (const BenchRecord* r : rs)
    if (f(*r) > 0) v.push_back(f(*r));
  return summarize(v);
}

// The cells in first-seen order, each with its records (one per round).
std::vector<std::pair<Key, std::vector<const BenchRecord*>>> cells(const std::vector<BenchRecord>& records) {
  std::vector<std::pair<Key, std::vector<const BenchRecord*>>> out;
  for (const auto& r : records) {
    auto it = std::find_if(out.begin(), out.end(), [&](const auto& c) { return c.first == key_of(r); });
    if (it == out.end()) {
      out.push_back({key_of(r), {}});
      it = out.end() - 1;
    }
    it->second.push_back(&r);
  }
  return out;
}
}  // namespace

std::vector<BenchRecord> median_records(const std::vector<BenchRecord>& records) {
  std::vector<BenchRecord> out;
  for (const auto& [key, rs] : cells(records)) {
    // The round whose training step is the median one (the lower of the two
    // middle rounds for an even count), so its accuracy and epochs are one
    // real run's; its inference figure is the median over the rounds.
    std::vector<const BenchRecord*> sorted = rs;
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const BenchRecord* a, const BenchRecord* b) { return step_s(*a) < step_s(*b); });
    BenchRecord m = *sorted[(sorted.size() - 1) / 2];
    const Summary inf = over(rs, infer_s);
    if (inf.n > 0) m.infer_median_s = inf.median;
    out.push_back(std::move(m));
  }
  return out;
}

Table repeat_table(const std::vector<BenchRecord>& ours, const std::vector<BenchRecord>& peer, bool train) {
  Table t(train ? "bench.repeat.train" : "bench.repeat.infer",
          train ? "Training step over the rounds (roofline and the PyTorch peer, interleaved)"
                : "Single-batch inference over the rounds (roofline and the PyTorch peer, interleaved)");
  t.col("device", "Device")
      .col("model", "Model")
      .col("batch", "Batch")
      .col("rounds", "Rounds")
      .col("ours_median_us", "roofline median", "µs")
      .col("ours_min_us", "min", "µs")
      .col("ours_max_us", "max", "µs")
      .col("peer_median_us", "PyTorch median", "µs")
      .col("peer_min_us", "min", "µs")
      .col("peer_max_us", "max", "µs")
      .col("speedup", "Speedup (medians)", "x")
      .col("speedup_min", "round min", "x")
      .col("speedup_max", "round max", "x");
  auto f = train ? step_s : infer_s;
  const auto peer_cells = cells(peer);
  for (const auto& [key, rs] : cells(ours)) {
    const auto& [source, device, model, batch] = key;
    const std::vector<const BenchRecord*>* ps = nullptr;
    for (const auto& [pk, prs] : peer_cells)
      if (std::get<1>(pk) == device && std::get<2>(pk) == model && std::get<3>(pk) == batch) ps = &prs;
    const Summary o = over(rs, f);
    if (o.n == 0) continue;  // not measured in this mode
    Cell pm, pmin, pmax, sp, spmin, spmax;
    if (ps) {
      const Summary p = over(*ps, f);
      if (p.n > 0) {
        pm = p.median * 1e6, pmin = p.min * 1e6, pmax = p.max * 1e6, sp = p.median / o.median;
        // Round i's ratio: the peer's run of round i against ours of round i.
        std::vector<double> ratios;
        for (size_t i = 0; i < rs.size() && i < ps->size(); ++i)
          if (f(*rs[i]) > 0 && f(*(*ps)[i]) > 0) ratios.push_back(f(*(*ps)[i]) / f(*rs[i]));
        if (!ratios.empty()) {
          spmin = *std::min_element(ratios.begin(), ratios.end());
          spmax = *std::max_element(ratios.begin(), ratios.end());
        }
      }
    }
    t.row({device, model, batch, static_cast<std::int64_t>(o.n), o.median * 1e6, o.min * 1e6, o.max * 1e6, pm, pmin,
           pmax, sp, spmin, spmax});
  }
  t.note(train ? "Per training step (train time / steps) of each round's run; speedup = PyTorch median / roofline "
                 "median; round min/max = the lowest and highest PyTorch/roofline ratio of one round (each round "
                 "runs roofline, then the peer)."
               : "Each round's inference median (of --infer-reps synchronised calls); speedup = PyTorch median / "
                 "roofline median; round min/max = the lowest and highest PyTorch/roofline ratio of one round.");
  return t;
}

}  // namespace roofline::engine

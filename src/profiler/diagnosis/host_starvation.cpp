// host-starvation: the GPU idles in gaps of a millisecond or more, waiting
// for the host to submit work (nsys "GPU gaps", HTA's host wait).
#include <algorithm>

#include "src/profiler/diagnosis/facts.hpp"
#include "roofline/core/strings.hpp"

namespace roofline::prof::diag {

std::optional<Diagnosis> host_starvation(const Facts& c, const Rule& rule) {
  // The steady state's figures: a one-time phase (one-time-phase) is not starvation.
  if (c.steady_window_ns <= 0 || c.steady_long_idle_ns < c.o.starvation_share * c.steady_window_ns)
    return std::nullopt;
  std::vector<double> largest;
  for (const auto& g : c.p.timeline.largest_gaps) largest.push_back(static_cast<double>(g.end_ns - g.start_ns));
  std::sort(largest.rbegin(), largest.rend());
  std::string ev = "GPU idle " + t(c.idle_ns) + " of its " + t(c.window_ns) + " active window (" +
                   pct(c.idle_ns / c.window_ns) + "); " + count(c.long_gaps) + " gaps of 1 ms or more hold " +
                   (c.idle_split_exact ? "" : "at least ") + t(c.long_idle_ns) + " (" +
                   pct(c.long_idle_ns / c.window_ns) + ")";
  if (!largest.empty()) {
    std::vector<std::string> top;
    for (size_t i = 0; i < std::min<size_t>(3, largest.size()); ++i) top.push_back(t(largest[i]));
    ev += "; largest: " + join(top, ", ");
  }
  ev += "; idle in gaps under 1 ms (launch-sized): " + std::string(c.idle_split_exact ? "" : "up to ") +
        t(c.short_idle_ns);
  if (c.one_time_gap.end_ns > c.one_time_gap.start_ns)
    ev += "; a one-time phase of " + t(static_cast<double>(c.one_time_gap.end_ns - c.one_time_gap.start_ns)) +
          " is left out: the steady state's " + t(c.steady_window_ns) + " has " + t(c.steady_long_idle_ns) +
          " idle in gaps of 1 ms or more";
  return c.make(rule, ev,
                "find what the CPU does in the gaps (data loading, Python, logging, .item()/.cpu() syncs, "
                "checkpointing): mark phases with NVTX ranges; overlap input loading with compute (DataLoader "
                "workers, prefetching); keep the GPU fed by queueing work ahead (avoid host syncs inside the loop)",
                c.steady_long_idle_ns);
}

}  // namespace roofline::prof::diag

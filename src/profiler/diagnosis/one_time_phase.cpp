// one-time-phase: a single long stretch without GPU work near the start of the
// GPU activity (compiling, loading, warming up), told apart from starvation:
// it is paid once, and the steady state after it is what the other timeline
// rules judge.
#include <fmt/format.h>

#include "roofline/core/strings.hpp"
#include "src/profiler/diagnosis/facts.hpp"

namespace roofline::prof::diag {

std::optional<Diagnosis> one_time_phase(const Facts& c, const Rule& rule) {
  const auto& g = c.one_time_gap;
  if (g.end_ns <= g.start_ns) return std::nullopt;
  const std::uint64_t origin = c.p.timeline.process_start_ns ? c.p.timeline.process_start_ns : c.p.timeline.first_gpu_ns;
  auto at = [&](std::uint64_t ns) { return fmt::format("{:.2f} s", static_cast<double>(ns - origin) * 1e-9); };
  const double len = static_cast<double>(g.end_ns - g.start_ns);
  std::string ev = "one gap of " + t(len) + " with no GPU work, " + at(g.start_ns) + " to " + at(g.end_ns) +
                   " from the start, at least 5 times longer than any other and in the first quarter of the GPU "
                   "activity; the steady state after it: " + t(c.steady_window_ns) + " with " +
                   pct(c.steady_window_ns > 0 ? c.steady_long_idle_ns / c.steady_window_ns : 0) +
                   " idle in gaps of 1 ms or more";
  return c.make(rule, ev,
                "paid once (torch.compile or CUDA-graph capture, model or data loading, cuDNN autotuning): left out "
                "of the starvation figures; mark the phases with NVTX ranges to see which it was, and judge the "
                "steady state",
                0.0);
}

}  // namespace roofline::prof::diag

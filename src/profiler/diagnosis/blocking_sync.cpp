// blocking-sync: cudaDeviceSynchronize / cudaStreamSynchronize /
// cudaEventSynchronize stop the host from queueing work ahead, so the GPU
// idles while the host catches up (nsys "blocking synchronisation APIs").
#include <algorithm>

#include "src/profiler/diagnosis/facts.hpp"
#include "roofline/core/strings.hpp"

namespace roofline::prof::diag {

namespace {

bool sync_api(const std::string& n) {
  return starts_with(n, "cudaDeviceSynchronize") || starts_with(n, "cudaStreamSynchronize") ||
         starts_with(n, "cudaEventSynchronize") || starts_with(n, "cuCtxSynchronize") ||
         starts_with(n, "cuStreamSynchronize") || starts_with(n, "cuEventSynchronize") ||
         starts_with(n, "cudaThreadSynchronize");
}

}  // namespace

std::optional<Diagnosis> blocking_sync(const Facts& c, const Rule& rule) {
  auto s = c.apis(sync_api);
  if (s.calls == 0) return std::nullopt;
  double share = c.base_ns > 0 ? s.ns / c.base_ns : 0;
  double per_launch = c.launches ? static_cast<double>(s.calls) / static_cast<double>(c.launches) : 0;
  // A loop pattern: a handful of calls (a final synchronise) is correct practice.
  if (s.calls < c.o.min_steps) return std::nullopt;
  bool frequent = per_launch >= c.o.sync_per_launch;
  if (share < c.o.sync_share && !frequent) return std::nullopt;
  // What the waits cost is the GPU idle they leave behind, not the wait itself
  // (a final synchronise while the GPU is busy costs nothing).
  double impact = std::min(s.ns, c.idle_ns);
  if (impact < c.o.low_share * c.base_ns) return std::nullopt;
  std::string ev =
      join(s.names, ", ") + ": " + count(s.calls) + " calls taking " + t(s.ns) + " (" + pct(share) + " of the run)";
  if (c.launches)
    ev += ", " + format_sig(per_launch, 2) + " per kernel launch" +
          (per_launch >= 0.9 ? " (a synchronisation after about every kernel)" : "");
  ev += "; the GPU was idle " + t(c.idle_ns) + " (" + (c.window_ns > 0 ? pct(c.idle_ns / c.window_ns) : "-") +
        " of its active window)";
  return c.make(rule, ev,
                "synchronise once per step, or only where a result is read on the host; order work with streams and "
                "events (cudaStreamWaitEvent) instead; in PyTorch remove torch.cuda.synchronize() and .item()/.cpu() "
                "from the loop, and unset CUDA_LAUNCH_BLOCKING",
                impact);
}

}  // namespace roofline::prof::diag

// launch-bound: kernels shorter than the host call that launches them, so the
// GPU idles in short gaps between them (HTA's "kernel wait" and launch
// statistics; nsys cuda_kern_exec_sum).
#include "roofline/core/strings.hpp"
#include "roofline/profiler/aggregator.hpp"
#include "src/profiler/diagnosis/facts.hpp"

namespace roofline::prof::diag {

std::optional<Diagnosis> launch_bound(const Facts& c, const Rule& rule) {
  if (c.launches == 0 || c.window_ns <= 0 || c.busy >= c.o.busy_low) return std::nullopt;

  // Launches of kernels shorter than their launch call: per kernel from the
  // launch records, else against the mean launch-API time.
  std::uint64_t short_launches = 0, counted = 0;
  double api_mean = 0;
  if (!c.p.launches.empty()) {
    double api_total = 0;
    std::uint64_t api_n = 0;
    for (const auto& [name, l] : c.p.launches) {
      counted += l.kernel_ns.count();
      if (l.kernel_ns.mean() < l.api_ns.mean()) short_launches += l.kernel_ns.count();
      api_total += l.api_ns.total();
      api_n += l.api_ns.count();
    }
    api_mean = api_n ? api_total / static_cast<double>(api_n) : 0;
  } else {
    auto api = c.apis(Aggregator::is_launch_api);
    api_mean = api.calls ? api.ns / static_cast<double>(api.calls) : 0;
    if (api_mean > 0)
      for (const auto& k : c.kernels) {
        counted += k.count;
        if (k.mean_ns < api_mean) short_launches += k.count;
      }
  }
  double short_share = counted ? static_cast<double>(short_launches) / static_cast<double>(counted) : 0;
  double mean_kernel = c.kernel_total_ns / static_cast<double>(c.launches);
  bool short_kernels = short_share >= c.o.short_launch_share || mean_kernel < c.o.small_kernel_ns;
  if (!short_kernels || c.short_idle_ns < c.o.low_share * c.base_ns) return std::nullopt;

  std::string ev = "GPU busy " + pct(c.busy) + " of its " + t(c.window_ns) + " active window; " + count(c.launches) +
                   " kernel launches, mean kernel " + t(mean_kernel);
  if (api_mean > 0) ev += " against a mean launch call of " + t(api_mean);
  if (counted)
    ev += "; " + count(short_launches) + " of " + count(counted) + " launches (" + pct(short_share) +
          ") are of kernels shorter than their launch call";
  ev += "; idle in gaps under 1 ms: " + std::string(c.idle_split_exact ? "" : "up to ") + t(c.short_idle_ns) + " (" +
        pct(c.short_idle_ns / c.window_ns) + " of the window)";
  return c.make(rule, ev,
                "do more work per launch: larger batches; fuse small ops (torch.compile, fused optimizers with "
                "foreach/fused=True); capture the step in a CUDA graph (torch.cuda.graphs or torch.compile "
                "mode=\"reduce-overhead\") so one launch replays all kernels",
                c.short_idle_ns);
}

}  // namespace roofline::prof::diag

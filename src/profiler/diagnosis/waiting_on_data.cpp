// waiting-on-data: host-to-device copies that recur once per step alongside
// long GPU gaps, the signature of a training loop that waits for its next
// batch (TensorBoard plugin: DataLoader time > 5% of the step).
#include "src/profiler/diagnosis/facts.hpp"
#include "roofline/core/strings.hpp"

namespace roofline::prof::diag {

std::optional<Diagnosis> waiting_on_data(const Facts& c, const Rule& rule) {
  auto it = c.p.memcpys.find("HtoD");
  if (it == c.p.memcpys.end()) return std::nullopt;
  const MemcpySummary& h = it->second;
  std::uint64_t copies = h.duration.count();
  if (copies < c.o.min_steps || c.long_gaps < c.o.min_steps) return std::nullopt;
  double per_gap = static_cast<double>(copies) / static_cast<double>(c.long_gaps);
  if (per_gap < 0.5 || per_gap > 8) return std::nullopt;  // not one batch (a few tensors) per gap
  if (c.long_idle_ns < c.o.low_share * c.base_ns) return std::nullopt;

  double per_step_idle = c.long_idle_ns / static_cast<double>(c.long_gaps);
  double per_step_bytes = static_cast<double>(h.total_bytes) / static_cast<double>(c.long_gaps);
  std::string ev = count(copies) + " host-to-device copies (" + format_bytes(static_cast<double>(h.total_bytes)) +
                   ", " + t(h.duration.total()) + ") and " + count(c.long_gaps) + " GPU gaps of 1 ms or more: about " +
                   format_sig(per_gap, 2) + " copies of " + format_bytes(per_step_bytes) + " per gap, and " +
                   (c.idle_split_exact ? "" : "at least ") + t(per_step_idle) + " of GPU idle per gap (" +
                   pct(c.long_idle_ns / c.window_ns) + " of the GPU-active window)";
  if (h.pageable) ev += "; " + count(h.pageable) + " of the copies came from pageable memory";
  std::string s =
      "load and copy the next batch while the GPU computes: DataLoader(num_workers=4 or more, pin_memory=True, "
      "persistent_workers=True) and .to(device, non_blocking=True)";
  if (h.total_bytes < (4ull << 30))
    s += "; the whole run copied only " + format_bytes(static_cast<double>(h.total_bytes)) +
         " to the GPU, so the dataset may fit there: load it once and index batches on the GPU";
  return c.make(rule, ev, s, c.long_idle_ns);
}

}  // namespace roofline::prof::diag

// sync-memcpy: copies and memsets issued by synchronous APIs (cudaMemcpy,
// cudaMemset) block the host until the GPU has drained its queue (nsys
// "synchronous memcpy/memset").
#include "src/profiler/diagnosis/facts.hpp"
#include "roofline/core/strings.hpp"

namespace roofline::prof::diag {

namespace {

bool sync_copy_api(const std::string& n) {
  if (contains(n, "Async") || contains(n, "Peer")) return false;
  return starts_with(n, "cudaMemcpy") || starts_with(n, "cudaMemset") || starts_with(n, "cuMemcpy") ||
         starts_with(n, "cuMemset");
}

}  // namespace

std::optional<Diagnosis> sync_memcpy(const Facts& c, const Rule& rule) {
  std::vector<std::string> parts;
  std::uint64_t n = 0;
  double copy_time = 0;
  bool item_pattern = false;
  for (const auto& [kind, m] : c.p.memcpys) {
    if (m.synchronous == 0 || m.duration.count() == 0) continue;
    double share = static_cast<double>(m.synchronous) / static_cast<double>(m.duration.count());
    std::string what = kind == "memset" ? (m.synchronous == 1 ? "memset" : "memsets")
                                        : kind + (m.synchronous == 1 ? " copy" : " copies");
    parts.push_back(count(m.synchronous) + " " + what + " (" + pct(share) + " of " + kind + ")");
    copy_time += share * m.duration.total();
    n += m.synchronous;
    // Tiny synchronous device-to-host reads, once per step: .item(), .cpu(), print(tensor).
    if (kind == "DtoH" && m.max_bytes <= 8 && m.synchronous >= c.o.min_steps) item_pattern = true;
  }
  if (n == 0) return std::nullopt;
  auto api = c.apis(sync_copy_api);
  std::string ev = "synchronous: " + join(parts, ", ");
  if (api.calls) ev += "; " + join(api.names, ", ") + ": " + count(api.calls) + " calls, host blocked " + t(api.ns);
  if (item_pattern)
    ev += "; the device-to-host copies are at most 8 bytes each: a scalar read back every step, as loss.item() does";
  std::string s =
      "issue copies with cudaMemcpyAsync/cudaMemsetAsync on a stream, from pinned memory, and synchronise "
      "only where the result is needed";
  if (item_pattern) s = "read scalars back rarely: accumulate the loss on the GPU and call .item() every N steps; " + s;
  return c.make(rule, ev, s, api.calls ? api.ns : copy_time);
}

}  // namespace roofline::prof::diag

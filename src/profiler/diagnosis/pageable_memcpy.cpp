// pageable-memcpy: copies from pageable host memory are staged through a
// driver buffer, run at a fraction of pinned bandwidth and cannot overlap
// compute even when issued as async (nsys "pageable async memcpy").
#include "src/profiler/diagnosis/facts.hpp"
#include "roofline/core/strings.hpp"

namespace roofline::prof::diag {

std::optional<Diagnosis> pageable_memcpy(const Facts& c, const Rule& rule) {
  std::vector<std::string> parts;
  double time = 0, bytes = 0;
  std::uint64_t n = 0;
  for (const auto& [kind, m] : c.p.memcpys) {
    if (m.pageable == 0 || m.duration.count() == 0) continue;
    double share = static_cast<double>(m.pageable) / static_cast<double>(m.duration.count());
    // Only counts are kept per kind: bytes and time of the pageable copies are pro rata.
    double tb = share * static_cast<double>(m.total_bytes), tt = share * m.duration.total();
    parts.push_back(count(m.pageable) + " of " + count(m.duration.count()) + " " + kind + " copies (" + pct(share) +
                    "), about " + format_bytes(tb) + " in " + t(tt) +
                    (tt > 0 ? " (" + format_si(tb / (tt * 1e-9), "B/s") + ")" : ""));
    time += tt;
    bytes += tb;
    n += m.pageable;
  }
  if (n == 0) return std::nullopt;
  return c.make(rule, "pageable host memory: " + join(parts, "; "),
                "pin the host buffers so copies run at full PCIe/NVLink bandwidth and can overlap compute: "
                "DataLoader(pin_memory=True) or tensor.pin_memory(), then .to(device, non_blocking=True); in C++ "
                "cudaMallocHost/cudaHostRegister",
                time);
}

}  // namespace roofline::prof::diag

// The range profiler's plain options (both builds).
#include "roofline/profiler/range_profiler.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "roofline/profiler/metrics.hpp"

namespace roofline::prof {

const char* to_string(L2Clean c) noexcept {
  switch (c) {
    case L2Clean::None:
      return "none";
    case L2Clean::Memset:
      return "memset";
    case L2Clean::Evict:
      return "evict";
  }
  return "none";
}

std::optional<L2Clean> parse_l2_clean(std::string_view s) {
  for (L2Clean c : {L2Clean::None, L2Clean::Memset, L2Clean::Evict})
    if (s == to_string(c)) return c;
  return std::nullopt;
}

std::string replay_dram_write_warning(const RangeProfilerStats& stats, const std::vector<std::string>& metrics) {
  if (stats.passes <= 1 || stats.profiled == 0 || stats.dram_replayed == 0) return {};
  if (std::find(metrics.begin(), metrics.end(), metric::kDramWrite) == metrics.end()) return {};
  return fmt::format(
      "per-kernel counters: on {} of {} profiled kernel launches the DRAM write bytes were read under kernel replay "
      "({} passes per kernel) and include lines that replay's save and restore of device memory left dirty in L2 "
      "(16-19 MB more per kernel than ncu on an H100): those kernels did not launch again for the one-pass DRAM "
      "read; for exact DRAM traffic profile with --metrics {},{},{} (one pass, no replay), or let the kernel run "
      "at least twice",
      stats.dram_replayed, stats.profiled, stats.passes, metric::kDuration, metric::kDramRead, metric::kDramWrite);
}

}  // namespace roofline::prof

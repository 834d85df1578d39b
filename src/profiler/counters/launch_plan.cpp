#include "src/profiler/counters/launch_plan.hpp"

namespace roofline::prof::detail {

LaunchPlanner::Plan LaunchPlanner::next(const std::string& kernel) {
  PerName& n = names_[kernel];
  Plan p;
  p.instance = n.launches++;
  if (auto it = pending_.find(kernel); it != pending_.end()) {
    p.kind = Kind::Dram;
    p.record = it->second;
    pending_.erase(it);  // one try: if this launch yields nothing, the record keeps its replayed counts
    return p;
  }
  if (max_ > 0 && n.full >= max_) return p;  // Skip
  ++n.full;
  p.kind = Kind::Full;
  return p;
}

void merge_dram_pass(RangeRecord& into, const std::map<std::string, double>& dram_values,
                     std::uint64_t dram_instance) {
  for (const auto& [metric, value] : dram_values) {
    if (auto it = into.values.find(metric); it != into.values.end()) into.replayed_dram[metric] = it->second;
    into.values[metric] = value;
  }
  into.dram_instance = dram_instance;
  into.dram_replayed = false;
}

}  // namespace roofline::prof::detail

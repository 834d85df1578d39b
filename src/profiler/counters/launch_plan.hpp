// Which configuration the range profiler gives each kernel launch (plain C++,
// tested on the CPU): the full metric set, the one-pass DRAM set on the launch
// after a full one (RangeProfilerOptions::dram_pass), or none (beyond the
// instance limit). Not thread-safe: the range profiler calls it under its lock.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "roofline/profiler/range_profiler.hpp"

namespace roofline::prof::detail {

class LaunchPlanner {
 public:
  enum class Kind { Skip, Full, Dram };
  struct Plan {
    Kind kind = Kind::Skip;
    std::uint64_t instance = 0;  // 0-based launch number among launches of this kernel name
    std::size_t record = 0;      // Dram: the record whose DRAM counts this launch replaces
  };

  // max_instances: full-set launches per kernel name (0: no limit).
  explicit LaunchPlanner(std::uint32_t max_instances = 0) : max_(max_instances) {}

  // The plan for the next launch of `kernel`.
  Plan next(const std::string& kernel);
  // A full-set launch of `kernel` produced record `index`, whose DRAM counts a
  // one-pass launch should replace: the kernel's next launch gets the DRAM set.
  void await_dram(const std::string& kernel, std::size_t index) { pending_[kernel] = index; }

 private:
  struct PerName {
    std::uint64_t launches = 0;
    std::uint64_t full = 0;
  };
  std::uint32_t max_;
  std::map<std::string, PerName> names_;
  std::map<std::string, std::size_t> pending_;
};

// Puts the DRAM byte counts of a one-pass launch (`dram_values`, launch
// `dram_instance` of the same kernel) into `into`, keeping the replayed ones in
// into.replayed_dram. Only the metrics in dram_values are touched.
void merge_dram_pass(RangeRecord& into, const std::map<std::string, double>& dram_values,
                     std::uint64_t dram_instance);

}  // namespace roofline::prof::detail

// Cache plateaus in a working-set sweep: bandwidth stays flat while the
// working set fits a cache level and drops when it spills to the next one.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace roofline::ceilings::cpu {

struct SweepSample {
  double bytes_per_thread = 0;  // working set of one thread
  double bandwidth = 0;         // all threads together, B/s
};

struct Plateau {
  size_t first = 0, last = 0;  // sample indices, inclusive
  double bandwidth = 0;        // median over its samples
  std::string level;           // "l1", "l2", "l3", "mem", or "" when unlabelled
};

struct PlateauResult {
  std::vector<Plateau> plateaus;
  std::string method;              // how they were found and labelled, for people
  std::vector<std::string> notes;  // anything missing or merged
  const Plateau* find(const std::string& level) const;
};

// Per-thread capacity of each cache level, bytes (0 when unknown).
struct CacheSizes {
  double l1 = 0, l2 = 0, l3 = 0;
  bool known() const { return l1 > 0 && l2 > 0; }
};

// Samples must be ordered by size. A plateau is a run of at least two
// consecutive sizes whose bandwidths stay within `tolerance` (relative) of the
// run's median; single sizes between plateaus are transitions. Labels come from
// the cache sizes when known (the level whose capacity holds the plateau's
// largest working set), else from the order: the last plateau is memory when
// its working sets exceed `mem_min_total_bytes` in total over all threads, and
// the ones before it are L1, L2, L3 from the smallest.
PlateauResult find_plateaus(const std::vector<SweepSample>& samples, const CacheSizes& caches, int threads,
                            double mem_min_total_bytes, double tolerance = 0.15);

}  // namespace roofline::ceilings::cpu

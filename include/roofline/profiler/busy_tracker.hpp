// GPU busy time as the union of activity intervals, and the idle gaps between
// them, computed on the fly from records that arrive out of order (CUPTI hands
// over one buffer per context or stream, each in its own time).
//
// Open intervals are kept merged in an ordered map; when there are more than
// `max_open` of them the oldest half is closed: their length is added to the
// busy total and their gaps to the gap statistics. A record that starts before
// the closed frontier is clipped to it and counted as late (its clipped part
// may have overlapped closed work, or filled a closed gap: the busy time can
// be under-counted by at most that part). Memory is O(max_open).
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include "roofline/profiler/profile_data.hpp"

namespace roofline::prof {

class BusyTracker {
 public:
  static constexpr size_t kLargestGaps = 10;

  explicit BusyTracker(size_t max_open = 4096, bool track_gaps = true);

  void add(std::uint64_t start_ns, std::uint64_t end_ns);

  // Totals over everything added so far (closed and open intervals).
  std::uint64_t busy_ns() const;
  std::uint64_t first_ns() const { return first_; }
  std::uint64_t last_ns() const { return last_; }
  std::uint64_t late_records() const { return late_; }
  std::uint64_t late_ns() const { return late_ns_; }
  std::uint64_t intervals() const { return count_; }

  // Gap statistics over everything added so far.
  std::map<std::string, std::uint64_t> gap_histogram() const;
  // Idle ns in the gaps of each bucket (same keys).
  std::map<std::string, std::uint64_t> gap_ns_histogram() const;
  std::vector<Interval> largest_gaps() const;

  // The histogram bucket of a gap: "<10us", "10-100us", "0.1-1ms", "1-10ms", ">10ms".
  static const char* gap_bucket(std::uint64_t gap_ns);

 private:
  void close_oldest(size_t n);
  static void note_gap(std::uint64_t start, std::uint64_t end, std::map<std::string, std::uint64_t>& hist,
                       std::map<std::string, std::uint64_t>& hist_ns, std::vector<Interval>& largest);
  template <class F>
  void each_open_gap(F f) const;

  size_t max_open_;
  bool track_gaps_;
  std::map<std::uint64_t, std::uint64_t> open_;  // start -> end, disjoint and not touching
  std::uint64_t frontier_ = 0;                   // everything before this is closed
  std::uint64_t closed_busy_ = 0;
  std::uint64_t closed_last_end_ = 0;  // end of the last closed interval (0: none)
  std::map<std::string, std::uint64_t> closed_hist_, closed_hist_ns_;
  std::vector<Interval> closed_largest_;  // longest first, at most kLargestGaps
  std::uint64_t first_ = 0, last_ = 0;
  std::uint64_t late_ = 0, late_ns_ = 0, count_ = 0;
};

}  // namespace roofline::prof

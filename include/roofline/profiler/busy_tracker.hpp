// GPU busy time as the union of activity intervals, and the idle gaps between
// them, computed on the fly from records that arrive late and out of order
// (CUPTI hands over one buffer per context or stream, each in its own time:
// records seconds older than the newest are common on a busy multi-stream run).
//
// The union is exact whatever the arrival order while the run has at most
// `max_open` disjoint busy intervals: records are collected in a pending batch
// (up to kPendingBatch, or max_open if smaller), sorted, and merged into a sorted vector of disjoint
// intervals (16 bytes each); nothing is closed early. Only past `max_open`
// intervals is the oldest half closed (its length and gaps summed, its end the
// frontier); a later record that starts before the frontier is clipped to it
// and counted as late, its clipped part possibly under- or double-counted.
// Memory: at most 16 B x (max_open + kPendingBatch) = 64 MiB + 1 MiB with the
// default max_open of 4,194,304.
//
// With a capture range (capture_gate.hpp) the caller adds only captured
// intervals, clipped to their stretch, and set_windows() makes the gaps leave
// out the time the gate was closed: a gap across a closed stretch counts as
// its parts inside open stretches.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "roofline/profiler/profile_data.hpp"

namespace roofline::prof {

class CaptureWindows;

class BusyTracker {
 public:
  static constexpr size_t kLargestGaps = 10;
  static constexpr size_t kDefaultMaxOpen = size_t(1) << 22;
  static constexpr size_t kPendingBatch = size_t(1) << 16;

  explicit BusyTracker(size_t max_open = kDefaultMaxOpen, bool track_gaps = true);

  void add(std::uint64_t start_ns, std::uint64_t end_ns);
  // The capture's open stretches (nullptr: everything is captured); must
  // outlive the tracker's queries and be kept current by the caller.
  void set_windows(const CaptureWindows* w) { windows_ = w; }

  // Totals over everything added so far (closed and open intervals).
  std::uint64_t busy_ns() const;
  std::uint64_t first_ns() const { return first_; }
  std::uint64_t last_ns() const { return last_; }
  std::uint64_t late_records() const { return late_; }
  std::uint64_t late_ns() const { return late_ns_; }
  std::uint64_t intervals() const { return count_; }
  // Disjoint busy intervals held now (after merging what is pending).
  size_t open_intervals() const;

  // Gap statistics over everything added so far.
  std::map<std::string, std::uint64_t> gap_histogram() const;
  // Idle ns in the gaps of each bucket (same keys).
  std::map<std::string, std::uint64_t> gap_ns_histogram() const;
  std::vector<Interval> largest_gaps() const;

  // The histogram bucket of a gap: "<10us", "10-100us", "0.1-1ms", "1-10ms", ">10ms".
  static const char* gap_bucket(std::uint64_t gap_ns);

 private:
  using Span = std::pair<std::uint64_t, std::uint64_t>;  // [start, end)
  void merge_pending() const;
  void close_oldest(size_t n) const;
  static void note_gap(std::uint64_t start, std::uint64_t end, std::map<std::string, std::uint64_t>& hist,
                       std::map<std::string, std::uint64_t>& hist_ns, std::vector<Interval>& largest);
  // note_gap for the captured parts of [start, end).
  void note_captured_gap(std::uint64_t start, std::uint64_t end, std::map<std::string, std::uint64_t>& hist,
                         std::map<std::string, std::uint64_t>& hist_ns, std::vector<Interval>& largest) const;
  template <class F>
  void each_open_gap(F f) const;

  size_t max_open_;
  bool track_gaps_;
  const CaptureWindows* windows_ = nullptr;
  // Merging is deferred to the next query or full batch, so the state below
  // changes in const queries too (they see the same union either way).
  mutable std::vector<Span> pending_;  // not yet merged, in arrival order
  mutable std::vector<Span> open_;     // sorted, disjoint and not touching
  mutable std::uint64_t frontier_ = 0;  // everything before this is closed
  mutable std::uint64_t closed_busy_ = 0;
  mutable std::uint64_t closed_last_end_ = 0;  // end of the last closed interval (0: none)
  mutable std::map<std::string, std::uint64_t> closed_hist_, closed_hist_ns_;
  mutable std::vector<Interval> closed_largest_;  // longest first, at most kLargestGaps
  std::uint64_t first_ = 0, last_ = 0;
  mutable std::uint64_t late_ = 0, late_ns_ = 0;
  std::uint64_t count_ = 0;
};

}  // namespace roofline::prof

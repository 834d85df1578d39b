#include "roofline/profiler/busy_tracker.hpp"

#include <algorithm>
#include <iterator>

namespace roofline::prof {

BusyTracker::BusyTracker(size_t max_open, bool track_gaps)
    : max_open_(std::max<size_t>(max_open, 2)), track_gaps_(track_gaps) {}

const char* BusyTracker::gap_bucket(std::uint64_t gap_ns) {
  if (gap_ns < 10'000) return "<10us";
  if (gap_ns < 100'000) return "10-100us";
  if (gap_ns < 1'000'000) return "0.1-1ms";
  if (gap_ns < 10'000'000) return "1-10ms";
  return ">10ms";
}

void BusyTracker::note_gap(std::uint64_t start, std::uint64_t end, std::map<std::string, std::uint64_t>& hist,
                           std::map<std::string, std::uint64_t>& hist_ns, std::vector<Interval>& largest) {
  if (end <= start) return;
  std::uint64_t len = end - start;
  ++hist[gap_bucket(len)];
  hist_ns[gap_bucket(len)] += len;
  if (largest.size() < kLargestGaps || len > largest.back().end_ns - largest.back().start_ns) {
    Interval g{start, end};
    auto pos = std::upper_bound(largest.begin(), largest.end(), g, [](const Interval& a, const Interval& b) {
      return a.end_ns - a.start_ns > b.end_ns - b.start_ns;
    });
    largest.insert(pos, g);
    if (largest.size() > kLargestGaps) largest.pop_back();
  }
}

void BusyTracker::add(std::uint64_t start, std::uint64_t end) {
  if (end < start) std::swap(start, end);  // never seen from CUPTI, but keeps the sums sane
  ++count_;
  if (first_ == 0 || start < first_) first_ = start;
  last_ = std::max(last_, end);
  if (start < frontier_) {
    ++late_;
    late_ns_ += std::min(end, frontier_) - start;
    if (end <= frontier_) return;
    start = frontier_;
  }
  if (end == start) return;
  // Merge with every open interval that overlaps or touches [start, end].
  auto it = open_.upper_bound(start);
  if (it != open_.begin()) {
    auto prev = std::prev(it);
    if (prev->second >= start) {
      if (prev->second >= end) return;  // already covered
      start = prev->first;
      it = open_.erase(prev);
    }
  }
  while (it != open_.end() && it->first <= end) {
    end = std::max(end, it->second);
    it = open_.erase(it);
  }
  open_.emplace(start, end);
  if (open_.size() > max_open_) close_oldest(open_.size() / 2);
}

void BusyTracker::close_oldest(size_t n) {
  for (size_t i = 0; i < n && !open_.empty(); ++i) {
    auto it = open_.begin();
    if (track_gaps_ && closed_last_end_ > 0)
      note_gap(closed_last_end_, it->first, closed_hist_, closed_hist_ns_, closed_largest_);
    closed_busy_ += it->second - it->first;
    closed_last_end_ = it->second;
    frontier_ = it->second;
    open_.erase(it);
  }
}

std::uint64_t BusyTracker::busy_ns() const {
  std::uint64_t b = closed_busy_;
  for (const auto& [s, e] : open_) b += e - s;
  return b;
}

template <class F>
void BusyTracker::each_open_gap(F f) const {
  if (!track_gaps_) return;
  std::uint64_t prev_end = closed_last_end_;
  for (const auto& [s, e] : open_) {
    if (prev_end > 0) f(prev_end, s);
    prev_end = e;
  }
}

std::map<std::string, std::uint64_t> BusyTracker::gap_histogram() const {
  std::map<std::string, std::uint64_t> hist = closed_hist_, ns;
  std::vector<Interval> ignored;
  each_open_gap([&](std::uint64_t a, std::uint64_t b) { note_gap(a, b, hist, ns, ignored); });
  return hist;
}

std::map<std::string, std::uint64_t> BusyTracker::gap_ns_histogram() const {
  std::map<std::string, std::uint64_t> hist, ns = closed_hist_ns_;
  std::vector<Interval> ignored;
  each_open_gap([&](std::uint64_t a, std::uint64_t b) { note_gap(a, b, hist, ns, ignored); });
  return ns;
}

std::vector<Interval> BusyTracker::largest_gaps() const {
  std::map<std::string, std::uint64_t> hist, ns;
  std::vector<Interval> largest = closed_largest_;
  each_open_gap([&](std::uint64_t a, std::uint64_t b) { note_gap(a, b, hist, ns, largest); });
  return largest;
}

}  // namespace roofline::prof

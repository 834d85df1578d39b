#include "roofline/profiler/busy_tracker.hpp"

#include <algorithm>
#include <iterator>

#include "roofline/profiler/capture_gate.hpp"

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

void BusyTracker::note_captured_gap(std::uint64_t start, std::uint64_t end, std::map<std::string, std::uint64_t>& hist,
                                    std::map<std::string, std::uint64_t>& hist_ns,
                                    std::vector<Interval>& largest) const {
  if (!windows_) return note_gap(start, end, hist, hist_ns, largest);
  windows_->each_part(start, end, [&](std::uint64_t a, std::uint64_t b) { note_gap(a, b, hist, hist_ns, largest); });
}

void BusyTracker::add(std::uint64_t start, std::uint64_t end) {
  if (end < start) std::swap(start, end);  // never seen from CUPTI, but keeps the sums sane
  ++count_;
  if (first_ == 0 || start < first_) first_ = start;
  last_ = std::max(last_, end);
  pending_.emplace_back(start, end);
  if (pending_.size() >= std::min(kPendingBatch, max_open_)) merge_pending();
}

void BusyTracker::merge_pending() const {
  if (pending_.empty()) return;
  // Clip what starts before the closed frontier (only after more than max_open
  // disjoint intervals, see the header).
  std::vector<Span> p;
  p.reserve(pending_.size());
  for (auto [start, end] : pending_) {
    if (start < frontier_) {
      ++late_;
      late_ns_ += std::min(end, frontier_) - start;
      if (end <= frontier_) continue;
      start = frontier_;
    }
    if (end > start) p.emplace_back(start, end);
  }
  pending_.clear();
  if (p.empty()) return;
  std::sort(p.begin(), p.end());
  // Records arrive mostly near the newest time: only the suffix of open_ that
  // the batch can touch is rebuilt. k: the first open interval that ends at or
  // after the batch's first start (touching intervals merge).
  auto k = static_cast<size_t>(
      std::lower_bound(open_.begin(), open_.end(), p.front().first,
                       [](const Span& a, std::uint64_t start) { return a.second < start; }) -
      open_.begin());
  std::vector<Span> tail;
  tail.reserve(open_.size() - k + p.size());
  size_t i = k, j = 0;
  while (i < open_.size() || j < p.size()) {
    const Span next = (j == p.size() || (i < open_.size() && open_[i].first <= p[j].first)) ? open_[i++] : p[j++];
    if (!tail.empty() && next.first <= tail.back().second) tail.back().second = std::max(tail.back().second, next.second);
    else tail.push_back(next);
  }
  open_.resize(k);
  open_.insert(open_.end(), tail.begin(), tail.end());
  if (open_.size() > max_open_) close_oldest(open_.size() / 2);
}

void BusyTracker::close_oldest(size_t n) const {
  n = std::min(n, open_.size());
  for (size_t i = 0; i < n; ++i) {
    const auto [start, end] = open_[i];
    if (track_gaps_ && closed_last_end_ > 0)
      note_captured_gap(closed_last_end_, start, closed_hist_, closed_hist_ns_, closed_largest_);
    closed_busy_ += end - start;
    closed_last_end_ = end;
    frontier_ = end;
  }
  open_.erase(open_.begin(), open_.begin() + static_cast<std::ptrdiff_t>(n));
}

size_t BusyTracker::open_intervals() const {
  merge_pending();
  return open_.size();
}

std::uint64_t BusyTracker::busy_ns() const {
  merge_pending();
  std::uint64_t b = closed_busy_;
  for (const auto& [s, e] : open_) b += e - s;
  return b;
}

template <class F>
void BusyTracker::each_open_gap(F f) const {
  if (!track_gaps_) return;
  merge_pending();
  std::uint64_t prev_end = closed_last_end_;
  for (const auto& [s, e] : open_) {
    if (prev_end > 0) f(prev_end, s);
    prev_end = e;
  }
}

std::map<std::string, std::uint64_t> BusyTracker::gap_histogram() const {
  std::map<std::string, std::uint64_t> hist = closed_hist_, ns;
  std::vector<Interval> ignored;
  each_open_gap([&](std::uint64_t a, std::uint64_t b) { note_captured_gap(a, b, hist, ns, ignored); });
  return hist;
}

std::map<std::string, std::uint64_t> BusyTracker::gap_ns_histogram() const {
  std::map<std::string, std::uint64_t> hist, ns = closed_hist_ns_;
  std::vector<Interval> ignored;
  each_open_gap([&](std::uint64_t a, std::uint64_t b) { note_captured_gap(a, b, hist, ns, ignored); });
  return ns;
}

std::vector<Interval> BusyTracker::largest_gaps() const {
  std::map<std::string, std::uint64_t> hist, ns;
  std::vector<Interval> largest = closed_largest_;
  each_open_gap([&](std::uint64_t a, std::uint64_t b) { note_captured_gap(a, b, hist, ns, largest); });
  return largest;
}

}  // namespace roofline::prof

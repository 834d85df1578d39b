// The capture range of `roofline profile` (--delay, --duration,
// --capture-range cuda-profiler-api | nvtx:NAME): which stretches of the run
// the profile describes, as Nsight Systems' capture ranges.
//
// What is inside (docs/profiler.md, "Capture ranges"): the gate is open over
// a list of stretches [start, end) on the CUPTI clock. A kernel, memcpy or
// memset counts when its GPU start lies in an open stretch, an API call when
// its start does, an NVTX range when its push (or start) does, a PM sample
// when its time does. The timeline (busy time, gaps, the GPU-active window)
// is clipped to the open stretches: a kernel that starts inside and ends
// after the gate closed is busy only up to the close, and the time the gate
// was closed is neither idle time nor part of the window.
//
// The stretches are the intersection of two things:
//   - the event ranges: with cuda-profiler-api, from each cudaProfilerStart
//     (or cuProfilerStart) to the next cudaProfilerStop; with nvtx:NAME, while
//     at least one NVTX range named NAME is open on any thread (push/pop and
//     start/end ranges); without --capture-range, the whole run;
//   - the time window [origin + delay, origin + delay + duration), origin
//     being the program's start (duration 0: to the end).
//
// CUPTI stays on all along; records outside are dropped when they are folded
// in (Aggregator), so none inside is lost to a late enable, and records that
// arrive late or out of order are judged by their own timestamps against the
// whole list. A boundary's timestamp is read under the gate's lock, so a
// record that starts after a boundary cannot be judged before the boundary is
// known (it reaches the aggregator only after its buffer completes).
//
// Plain C++, no CUDA: CPU tests drive it with a fake clock.
#pragma once
#include <algorithm>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "roofline/profiler/profile_data.hpp"

namespace roofline::prof {

// The longest --delay and --duration, 10^6 s (11.6 days): far past any run,
// and far from overflowing the clock's nanoseconds.
inline constexpr std::uint64_t kMaxCaptureNs = std::uint64_t{1'000'000} * 1'000'000'000;

// What the user asked for, as the injection library receives it.
struct CaptureSpec {
  enum class Range : std::uint8_t { None, ProfilerApi, Nvtx };
  Range range = Range::None;
  std::string nvtx_name;          // Range::Nvtx
  std::uint64_t delay_ns = 0;     // from the program's start
  std::uint64_t duration_ns = 0;  // 0: to the end

  bool active() const { return range != Range::None || delay_ns > 0 || duration_ns > 0; }
  // The --capture-range text: "", "cuda-profiler-api" or "nvtx:NAME".
  std::string range_text() const;
  // From that text; nullopt when it is none of those forms (problem() says why).
  static std::optional<CaptureSpec> parse_range(const std::string& text);
  // What is wrong with a --capture-range text, "" when nothing.
  static std::string problem(const std::string& text);
};

// The open stretches as one reader sees them: sorted and disjoint (closed
// stretches that touch are joined); the last may still be open (end == kOpen). A value, refreshed from the gate
// with CaptureGate::sync(), so that a batch of records is judged without
// taking the gate's lock for each.
class CaptureWindows {
 public:
  static constexpr std::uint64_t kOpen = ~std::uint64_t{0};

  bool contains(std::uint64_t t) const;
  // The end of the stretch that contains t (kOpen when it is still open); t
  // itself when no stretch contains it.
  std::uint64_t end_of(std::uint64_t t) const;
  // How much of [a, b) lies in open stretches.
  std::uint64_t covered_ns(std::uint64_t a, std::uint64_t b) const;
  // f(start, end) for each part of [a, b) inside an open stretch, in order.
  template <class F>
  void each_part(std::uint64_t a, std::uint64_t b, F f) const {
    for (size_t i = first_ending_after(a); i < size() && a < b; ++i) {
      const Interval s = at(i);
      if (s.start_ns >= b) break;
      const std::uint64_t lo = std::max(a, s.start_ns), hi = std::min(b, s.end_ns);
      if (hi > lo) f(lo, hi);
    }
  }
  // Every stretch, an open one ending at `now`, parts before `from` cut off.
  std::vector<Interval> clipped(std::uint64_t from, std::uint64_t now) const;

 private:
  friend class CaptureGate;
  size_t size() const { return closed_.size() + (tail_ ? 1 : 0); }
  Interval at(size_t i) const { return i < closed_.size() ? closed_[i] : *tail_; }
  size_t first_ending_after(std::uint64_t t) const;  // the first stretch with end > t

  std::vector<Interval> closed_;  // ended stretches, in time order
  std::optional<Interval> tail_;  // the stretch still open (end kOpen), or the time window's own end
  size_t synced_events_ = 0;      // CaptureGate::events_ copied so far
};

class CaptureGate {
 public:
  using Clock = std::uint64_t (*)();

  // Starts the gate: `origin_ns` is the program's start and `clock` reads the
  // time boundaries are stamped with (both on the CUPTI clock). Only the
  // first call counts (the CUDA and the NVTX entry points both call it).
  void configure(const CaptureSpec& spec, std::uint64_t origin_ns, Clock clock);
  bool active() const;
  CaptureSpec spec() const;

  // Events from the program; each returns the time it stamped (the clock's,
  // read under the lock, so the caller can stamp its own record with it).
  std::uint64_t profiler_start();
  std::uint64_t profiler_stop();
  // NVTX: `name` is the range's own name (not its path). For pop, the name of
  // the range being popped ("" when unknown); for end, whether the id's start
  // was seen is tracked here.
  std::uint64_t nvtx_push(std::string_view name);
  std::uint64_t nvtx_pop(std::string_view name);
  std::uint64_t nvtx_start(std::uint64_t id, std::string_view name);
  std::uint64_t nvtx_end(std::uint64_t id);

  // Whether time t lies in an open stretch (as known now). One lock, no copy:
  // for events judged one at a time (NVTX ranges as they close).
  bool captures(std::uint64_t t) const;
  // Brings `w` up to date (copies only what changed since its last sync).
  void sync(CaptureWindows& w) const;
  CaptureWindows windows() const;
  // Event ranges the program opened (cudaProfilerStart calls that opened the
  // gate, NAME ranges opened while none was), before the time window.
  std::uint64_t opens() const;

  // fork() safety, as the other parts of the collector.
  void lock_for_fork() { mu_.lock(); }
  void unlock_after_fork() { mu_.unlock(); }

 private:
  std::uint64_t now_locked() const { return clock_ ? clock_() : 0; }
  void open_locked(std::uint64_t t);
  void close_locked(std::uint64_t t);

  mutable std::mutex mu_;
  bool configured_ = false;
  CaptureSpec spec_;
  Clock clock_ = nullptr;
  std::uint64_t window_start_ = 0, window_end_ = CaptureWindows::kOpen;  // the time window
  std::vector<Interval> events_;                                         // closed event ranges, in time order
  std::optional<std::uint64_t> open_since_;                              // the event range open now
  std::uint64_t opens_ = 0;
  std::uint64_t nvtx_depth_ = 0;                // NAME ranges open now (all threads)
  std::unordered_set<std::uint64_t> nvtx_ids_;  // start/end ranges named NAME, open now
};

}  // namespace roofline::prof

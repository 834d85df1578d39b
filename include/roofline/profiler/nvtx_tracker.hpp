// The NVTX range path of every thread ("model/layer/pass"), so that each
// kernel launch can be attributed to the ranges open on the launching thread.
//
// push()/pop() run on the application's threads (from CUPTI's NVTX callbacks)
// and keep a per-thread stack; note_launch() runs in the launch API callback
// and records the launching thread's path under the launch's correlation id in
// a lock-free ring, which the activity side reads with path_of_launch() when
// the kernel's record arrives. Paths are interned (id 0 is "no range").
// Nothing here depends on CUPTI, so it is tested on the CPU.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "roofline/profiler/profile_data.hpp"

namespace roofline::prof {

class CaptureGate;

class NvtxTracker {
 public:
  // Called when a range closes (for trace output): path id, start, end, thread.
  using Sink = std::function<void(std::uint32_t, std::uint64_t, std::uint64_t, std::uint64_t)>;

  explicit NvtxTracker(size_t ring_size = size_t{1} << 20);
  ~NvtxTracker();
  NvtxTracker(const NvtxTracker&) = delete;
  NvtxTracker& operator=(const NvtxTracker&) = delete;

  // Nested ranges of the calling thread (nvtxRangePush / nvtxRangePop).
  void push(std::string_view name, std::uint64_t now_ns);
  void pop(std::uint64_t now_ns);
  // Start/end ranges (nvtxRangeStart / nvtxRangeEnd), which may end on
  // another thread: they are timed under their own name, outside the stacks.
  void start_range(std::uint64_t id, std::string_view name, std::uint64_t now_ns);
  void end_range(std::uint64_t id, std::uint64_t now_ns);

  // The calling thread's innermost path (0 when no range is open).
  std::uint32_t current_path() const;
  // The own name of the calling thread's innermost range ("" when none): the
  // range a pop() would close.
  std::string current_name() const;
  // With a capture range: a range counts (statistics, trace) only when it
  // started while the gate was open. nullptr: every range counts.
  void set_gate(const CaptureGate* gate);
  // Whether any range was ever pushed (launch callbacks are only needed then).
  bool active() const { return ring_.load(std::memory_order_acquire) != nullptr; }

  void note_launch(std::uint32_t correlation);
  std::uint32_t path_of_launch(std::uint32_t correlation) const;

  std::string path_name(std::uint32_t id) const;
  // The path and its enclosing paths, innermost first (empty for 0).
  std::vector<std::uint32_t> lineage(std::uint32_t id) const;

  // CPU time of every closed range, by path (kernel columns left at zero).
  void snapshot(std::map<std::string, NvtxRangeSummary>& out) const;
  std::uint64_t unmatched_pops() const { return unmatched_pops_.load(std::memory_order_relaxed); }

  void set_sink(Sink sink);
  // Forgets every statistic (the child side of fork()); call between
  // lock_for_fork() and unlock_after_fork().
  void reset_locked();
  // fork() safety: the prepare handler takes the lock so that no other thread
  // holds it at the fork; both sides release it afterwards.
  void lock_for_fork() { mu_.lock(); }
  void unlock_after_fork() { mu_.unlock(); }

 private:
  struct Path {
    std::uint32_t parent;
    std::string name;  // the full path, "a/b/c"
    std::string leaf;  // the range's own name, "c"
  };
  std::uint32_t child_path(std::uint32_t parent, std::string_view name);
  void close(std::uint32_t path, std::uint64_t start, std::uint64_t end);
  void ensure_ring();

  std::uint64_t instance_;  // tells this tracker's thread-local stacks from stale ones
  size_t ring_size_;
  std::atomic<std::atomic<std::uint64_t>*> ring_{nullptr};
  std::unique_ptr<std::atomic<std::uint64_t>[]> ring_storage_;
  mutable std::mutex mu_;
  std::vector<Path> paths_;                                                             // by id; [0] is ""
  std::unordered_map<std::string, std::uint32_t> path_ids_;                             // full path -> id
  std::unordered_map<std::uint32_t, DurationStats> closed_;                             // path id -> CPU durations
  std::unordered_map<std::uint64_t, std::pair<std::uint32_t, std::uint64_t>> started_;  // range id -> path, start
  std::atomic<std::uint64_t> unmatched_pops_{0};
  Sink sink_;
  const CaptureGate* gate_ = nullptr;
};

// An NVTX wide-character message (nvtxRangePushW, ...) as a range name:
// printable ASCII kept, every other character '?'; "" for null.
std::string nvtx_narrow(const wchar_t* message);

}  // namespace roofline::prof

// On-the-fly aggregation of GPU and API activity into a ProfileData: per
// kernel, API and copy kind statistics, launch overheads (API, queue and
// kernel time of each launch, joined by correlation id), busy time and gaps,
// time per NVTX range, and frequent kernel sequences. Memory is bounded by the
// number of distinct names, never by the number of records, so a long run
// leaves kilobytes where a trace would leave gigabytes.
//
// The CUPTI collector (injection library and in-process tracer) converts each
// activity buffer into Activity records and hands the batch over at once; the
// batch is sorted by start time here (records of one buffer come per stream,
// not in time order). Plain C++, no CUPTI: tested on the CPU.
//
// With a capture range (set_gate), only the records that start in an open
// stretch are folded in; the rest are counted as left out (CaptureSummary).
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "roofline/profiler/busy_tracker.hpp"
#include "roofline/profiler/capture_gate.hpp"
#include "roofline/profiler/profile_data.hpp"
#include "roofline/profiler/sequence_counter.hpp"

namespace roofline::prof {

class NvtxTracker;

struct Activity {
  // UntimedKernel: a launch without timestamps (one --counters replayed): counted
  // by name, never placed in the timeline.
  enum class Type : std::uint8_t { Kernel, UntimedKernel, Memcpy, Memset, RuntimeApi, DriverApi };
  Type type = Type::Kernel;
  std::uint64_t start = 0, end = 0;  // ns
  std::uint32_t correlation = 0;
  // GPU work
  std::uint32_t device = 0, stream = 0;
  std::uint32_t nvtx_path = 0;  // the launching thread's NVTX path (NvtxTracker id)
  const char* name = nullptr;   // kernel or API name; must outlive the Aggregator's use (interned by content)
  std::uint32_t grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};
  int registers = 0;
  std::uint64_t static_smem = 0, dynamic_smem = 0;
  bool graph = false;  // launched as part of a CUDA graph
  std::uint64_t bytes = 0;
  const char* copy_kind = "";  // "HtoD", "DtoH", ... (memcpy)
  bool pageable = false;       // host side is pageable memory
  bool synchronous = false;    // issued by a blocking API
  // API calls
  std::uint64_t thread = 0;
  bool failed = false;  // returned an error (other than "not ready")
};

class Aggregator {
 public:
  struct Options {
    size_t max_open_intervals = BusyTracker::kDefaultMaxOpen;
    size_t sequence_capacity = 20000;
    size_t max_pending_launches = size_t{1} << 16;
    size_t top_sequences = 30;
  };
  Aggregator();
  explicit Aggregator(Options o);

  // Sorts the batch by start time and folds it in (one lock per batch). With
  // a capture gate, the records outside it are removed from `batch` first
  // (what is left is what was folded in).
  void add(std::vector<Activity>& batch);
  // The capture range (nullptr: everything is captured); must outlive the
  // aggregator. Set before the first add().
  void set_gate(const CaptureGate* gate);
  void add_device(std::uint32_t ordinal, std::string name, double dram_peak_bps);
  // Warnings are kept once each.
  void warn(const std::string& text);
  // For NVTX path names and the inclusive time of enclosing ranges.
  void set_nvtx(const NvtxTracker* nvtx) { nvtx_ = nvtx; }

  // Everything so far as a ProfileData (pid, command, timestamps are the caller's).
  ProfileData snapshot() const;
  // Changes whenever data is added: snapshot writers skip unchanged data.
  std::uint64_t generation() const;
  std::uint64_t records() const;

  // Whether an API name is a kernel launch ("cudaLaunchKernel", "cuLaunchKernelEx", ...).
  static bool is_launch_api(std::string_view name);
  // The name prefixes of NCCL's collective kernels (2.x), and whether a kernel
  // name has one: the communication the timeline splits from computation.
  static constexpr const char* kNcclKernelPrefixes[] = {"ncclDevKernel_", "ncclKernel_", "ncclSymDevKernel_",
                                                        "ncclSymkDevKernel_"};
  static bool is_nccl_kernel(std::string_view name);

  void lock_for_fork() { mu_.lock(); }
  void unlock_after_fork() { mu_.unlock(); }
  // Forgets all data (the child side of fork()); call with the lock held.
  void reset_locked();

 private:
  struct Name {
    std::string text;
    bool launch = false;
    bool nccl = false;  // an NCCL collective kernel
  };
  struct KernelAgg {
    std::uint32_t name = 0, path = 0;
    KernelSummary s;  // names filled at snapshot
  };
  struct ApiAgg {
    std::uint32_t name = 0;
    bool driver = false;
    DurationStats d;
    std::uint64_t errors = 0;
  };
  struct PendingLaunch {
    std::uint64_t api_start = 0, api_end = 0;
    std::uint64_t k_start = 0, k_end = 0;
    std::uint32_t kernel = 0;
    bool has_api = false, has_kernel = false;
  };
  struct LaunchAgg {
    DurationStats api, queue, kernel;
    std::uint64_t shorter = 0;
  };
  struct RangeGpu {
    std::uint64_t kernels = 0;
    double ns = 0;
  };

  std::uint32_t intern(const char* name);
  void add_one(const Activity& a);
  // The end of a's busy interval: clipped to its capture stretch.
  std::uint64_t busy_end(const Activity& a) const;
  void join_launch(std::uint32_t correlation, const PendingLaunch& part);

  Options opt_;
  mutable std::mutex mu_;
  std::unordered_map<const char*, std::uint32_t> by_pointer_;
  std::unordered_map<std::string, std::uint32_t> by_text_;
  std::vector<Name> names_;
  std::unordered_map<std::uint64_t, KernelAgg> kernels_;  // (name << 32 | path)
  std::unordered_map<std::uint32_t, ApiAgg> apis_;        // by name id
  std::map<std::string, MemcpySummary> memcpys_;
  std::map<std::string, std::uint64_t> untimed_;  // kernel name -> launches without timestamps
  std::unordered_map<std::uint32_t, PendingLaunch> pending_;  // by correlation id
  std::uint32_t max_correlation_ = 0;
  size_t sweep_at_ = 0;                                    // pending_ size that triggers the next sweep
  std::unordered_map<std::uint32_t, LaunchAgg> launches_;  // by kernel name id
  std::unordered_map<std::uint32_t, RangeGpu> range_gpu_;  // by NVTX path id (exact path)
  BusyTracker kernel_busy_, gpu_busy_;
  BusyTracker comm_busy_, compute_busy_;  // NCCL kernels, every other kernel
  std::vector<Interval> collectives_;     // NCCL kernels as they arrive (Timeline::collectives)
  SequenceCounter sequences_;
  std::map<std::uint32_t, std::pair<std::string, double>> devices_;
  std::vector<std::string> warnings_;
  const NvtxTracker* nvtx_ = nullptr;
  const CaptureGate* gate_ = nullptr;
  mutable CaptureWindows windows_;  // the gate's stretches, synced under mu_ (the busy trackers read them)
  std::uint64_t left_out_ = 0;      // records outside the capture
  std::uint64_t generation_ = 0, records_ = 0, unmatched_launches_ = 0;
};

}  // namespace roofline::prof

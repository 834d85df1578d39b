// The CUPTI side of the profiler, shared by the injection library
// (libroofline_inject.so, inside any profiled program) and the in-process
// tracer (roofline's own workloads): it subscribes to CUPTI, turns activity
// buffers into Activity records for the Aggregator as they complete, and
// tracks NVTX ranges. Never throws: a CUPTI failure becomes a warning in the
// profile (the injection library must not throw across the C boundary; the
// in-process tracer turns a failed start() into an Error).
//
// CUPTI's buffer callbacks carry no user pointer, so there is one collector
// per process (instance()).
//
// Why activity records for the CUDA API rather than our own callbacks: the
// records are written by CUPTI into its buffers and aggregated later on
// CUPTI's worker thread, while a callback would run our code (two timestamps,
// a shared table and its lock) twice per call on the application's thread.
// Callbacks are used only where activity records cannot do the job: NVTX
// ranges (to know the range path of each launching thread) and, once the
// program has pushed an NVTX range, the launch calls (to note that path under
// the launch's correlation id).
#pragma once
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "roofline/profiler/aggregator.hpp"
#include "roofline/profiler/capture_gate.hpp"
#include "roofline/profiler/nvtx_tracker.hpp"
#include "roofline/profiler/profile_data.hpp"
#include "roofline/profiler/trace_writer.hpp"

namespace roofline::prof {

struct CollectorOptions {
  bool api = true;        // runtime and driver API activity
  bool nvtx = true;       // NVTX range callbacks
  std::string trace_dir;  // per-event trace into <dir>/trace-<pid>.jsonl ("" = none)
  std::uint64_t trace_limit = 1'000'000;
  size_t buffer_bytes = size_t{16} << 20;  // per activity buffer (recycled and pre-zeroed, see buffer_requested)
  std::uint32_t flush_period_ms = 500;  // CUPTI's periodic flush of full, completed buffers (0 = none)
  std::string command;                  // for the trace file's header
};

class CuptiCollector {
 public:
  static CuptiCollector& instance();

  // The capture range (capture_gate.hpp), before start(): the injection
  // library's CUDA and NVTX entry points both call it, the first call counts.
  // `program_start_monotonic_ns` is when the program started (CLOCK_MONOTONIC;
  // 0: now), the origin of --delay. An inactive spec changes nothing.
  void configure_capture(const CaptureSpec& spec, std::uint64_t program_start_monotonic_ns);

  // Subscribes and enables activity. False when CUPTI cannot be used here
  // (another subscriber, no driver, ...): the reason is in warnings().
  bool start(const CollectorOptions& opt);
  bool running() const { return running_.load(); }
  // Delivers completed buffers (forced: also those with records in flight).
  void flush(bool forced);
  // Flushes, disables every activity kind and callback, and unsubscribes:
  // no CUPTI overhead remains afterwards.
  void stop();

  // Forgets the data collected so far (a new in-process trace starts empty).
  void clear();

  // Everything so far (timestamps on CUPTI's clock, warnings included).
  ProfileData snapshot();
  std::uint64_t generation() const { return aggregator_.generation(); }
  bool has_records() const { return aggregator_.records() > 0; }
  std::vector<std::string> warnings() const;
  TraceWriter& trace() { return trace_; }
  std::uint64_t now_ns() const;

  // For the RangeProfiler (counters/), which attaches to this
  // process's one CUPTI subscriber: every callback is handed to `fn` first.
  // Set before the callbacks it needs are enabled, never changed afterwards.
  using Forward = void (*)(void* user, int domain, std::uint32_t cbid, const void* data);
  void set_forward(Forward fn, void* user);
  void* subscriber() const { return subscriber_; }
  // Called (on the creating thread, inside CUPTI's callback: do little) when
  // a CUDA context is created; enables the resource callback it needs.
  void set_context_hook(void (*hook)());
  // Called (on the destroying thread, inside CUPTI's callback) when a CUDA
  // context is about to be destroyed, after the collector flushed its
  // buffers: whatever samples that context must stop first.
  void set_context_destroy_hook(void (*hook)()) { context_destroy_hook_ = hook; }
  // The calling thread's NVTX range path ("" outside ranges).
  std::string current_nvtx_path() const { return nvtx_.path_name(nvtx_.current_path()); }
  // A warning to show in the profile.
  void add_warning(const std::string& text) { warn(text); }

  // NVTX events, from CUPTI's NVTX callbacks (in-process) or from the
  // injection library's own NVTX hooks (nvtx_hooks.cpp). Safe before start():
  // ranges pushed before CUDA starts are kept, and launch callbacks are
  // enabled once the subscriber exists.
  void nvtx_push(std::string_view name);
  void nvtx_pop();
  void nvtx_start(std::uint64_t id, std::string_view name);
  void nvtx_end(std::uint64_t id);

  // pthread_atfork handlers (the injection library registers them).
  void prepare_fork();
  void parent_after_fork();
  void child_after_fork();

  // Used by the static CUPTI callbacks.
  void on_buffer(std::uint8_t* buffer, size_t valid, void* context, std::uint32_t stream);
  void on_callback(int domain, std::uint32_t cbid, const void* data);
  size_t buffer_bytes() const { return opt_.buffer_bytes; }

 private:
  CuptiCollector();
  void warn(const std::string& text);
  // Records a warning for a failed CUPTI call; returns whether it succeeded.
  bool check(int status, const char* call);
  void enable_launch_callbacks();
  void enable_profiler_api_callbacks();
  const char* api_name(bool driver, std::uint32_t cbid) const;

  CollectorOptions opt_;
  std::atomic<bool> running_{false};
  std::atomic<bool> launch_callbacks_{false};
  std::atomic<bool> nvtx_pushed_{false};  // a range was pushed (launch callbacks wanted)
  void* subscriber_ = nullptr;
  std::uint64_t start_ns_ = 0;
  Aggregator aggregator_;
  NvtxTracker nvtx_;
  CaptureGate gate_;
  std::atomic<bool> capture_{false};  // a capture range is configured (gate_ decides what counts)
  std::mutex capture_mu_;             // configure_capture() runs once
  TraceWriter trace_;
  std::vector<std::string> runtime_names_, driver_names_;  // by callback id, version suffix removed
  mutable std::mutex mu_;                                  // warnings_ and the registered-string table
  std::vector<std::string> warnings_;
  std::vector<std::pair<const void*, std::string>> registered_strings_;  // NVTX registered strings
  std::atomic<std::uint64_t> dropped_{0};
  // Kernel records left out of the timing tables because CUPTI gave them no
  // duration (start == end: the launches --counters replayed). The range
  // profiler's own L2 clean (roofline_l2_evict) is left out too, uncounted.
  std::atomic<std::uint64_t> untimed_kernels_{0};
  Forward forward_ = nullptr;
  void* forward_user_ = nullptr;
  void (*context_hook_)() = nullptr;
  void (*context_destroy_hook_)() = nullptr;
};

}  // namespace roofline::prof

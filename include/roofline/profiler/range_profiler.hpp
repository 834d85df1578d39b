// Counters per kernel: the CUPTI range profiler (CUDA 13, cupti_range_profiler.h)
// with one range per kernel launch (auto range) and kernel replay, which runs a
// kernel as many times as the metric set needs passes (saving and restoring
// device memory in between). Each profiled launch is serialized: the range
// profiler starts on the launch's API entry and stops, decodes and evaluates
// on its exit, so every range maps to exactly one kernel name, instance number
// and NVTX path. After `max_instances_per_kernel` instances of a name the
// profiler lets further launches of it run untouched.
//
// Two ways to drive it:
//   * in our own binaries: start() subscribes to CUPTI callbacks itself and sets
//     up the current device's context at once (so permission problems and
//     unknown metrics surface there, as a roofline::Error); stop() ends it.
//   * inside a host that already owns the process's one CUPTI subscriber (the
//     injection library): attach(subscriber) enables the callbacks it needs on
//     that subscriber, the host forwards every callback to handle_callback(),
//     and detach() ends it. Nothing throws on this path: problems are kept in
//     status() (and profiling stops) while the host carries on tracing.
// Kernels launched into a capturing stream (CUDA graph capture) are not
// profiled, nor are kernels inside launched graphs (counted in stats()).
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "roofline/profiler/counter_status.hpp"
#include "roofline/profiler/metrics.hpp"
#include "roofline/profiler/profile_data.hpp"

namespace roofline::prof {

// What the profiler does to the L2 cache before each profiled launch. L2 is
// write-back: lines that earlier work left dirty are written to DRAM whenever
// they are evicted, and when that happens inside a profiled kernel's range
// dram__bytes_write counts them as the kernel's own (16-18 MB too much per
// kernel on an H100 without a clean, docs/counters.md "DRAM writes").
enum class L2Clean {
  None,    // nothing: earlier work's dirty lines may be counted
  Memset,  // write a scratch buffer of 2 x L2 first (evicts them but leaves the scratch dirty; for comparison)
  Evict,   // read a scratch buffer of 4 x L2 first: dirty lines are written back before the range
           // starts and L2 holds only clean lines, as after ncu's default --cache-control all
};
const char* to_string(L2Clean c) noexcept;
// The Evict clean's kernel, as activity tracing of the profiled program sees it.
inline constexpr const char* kL2CleanKernel = "roofline_l2_evict";
std::optional<L2Clean> parse_l2_clean(std::string_view s);  // "none", "memset", "evict"

struct RangeProfilerOptions {
  int device = 0;  // the device start() prepares eagerly; attach() profiles any device lazily
  // Metrics that must exist (an unknown one is an error). Empty: default_range_metrics() for the chip,
  // with its optional (chip-dependent) metrics dropped where unavailable and listed by unavailable_metrics().
  std::vector<std::string> metrics;
  bool verification = false;  // add verification_metrics() (optional; more passes)
  // Before each profiled launch: synchronize the context, clean L2 this way, synchronize
  // again. Evict costs a read of 4 x L2 (about 70 us on an H100) and 4 x L2 of device
  // memory per context. Its kernel is "roofline_l2_evict" (see internal_call()).
  L2Clean l2_clean = L2Clean::Evict;
  std::uint32_t max_instances_per_kernel = 1;  // 0: profile every launch
  // When the metric set needs more than one replay pass and holds DRAM byte
  // counts: read those counts again, alone and in one pass (no replay, so no
  // save and restore of device memory before the range), on the kernel's next
  // launch, and put them in the record of the launch before it. Kernel replay
  // leaves L2 dirty before the pass that counts DRAM writes (+16-19 MB per
  // kernel on an H100, docs/counters.md); one pass does not. A kernel launched
  // only once keeps its replayed counts (RangeRecord::dram_replayed, and
  // replay_dram_write_warning() says so). Each measured instance then takes two
  // launches: launch 2k has the full set, launch 2k+1 the DRAM pass.
  bool dram_pass = true;
  // Called on the launching thread at each profiled launch: the NVTX range path
  // ("model/layer") to file the range under. Empty function: no path.
  std::function<std::string()> nvtx_path;
};

// One profiled kernel instance.
struct RangeRecord {
  std::string kernel;  // as CUPTI reports it (mangled for C++ kernels)
  std::string nvtx_path;
  std::uint64_t instance = 0;  // 0-based launch number among launches of this kernel name
  int device = 0;
  std::map<std::string, double> values;  // metric -> value (metrics the chip could not evaluate are absent)
  // Where the DRAM byte counts in `values` come from: launch `dram_instance` of
  // the same kernel in a one-pass DRAM configuration (RangeProfilerOptions::dram_pass),
  // or this launch's replayed passes (dram_replayed; then dram_instance == instance).
  std::uint64_t dram_instance = 0;
  bool dram_replayed = false;
  std::map<std::string, double> replayed_dram;  // the replayed DRAM counts the DRAM pass replaced
};

struct RangeProfilerStats {
  std::uint64_t launches = 0;         // kernel launches seen while active
  std::uint64_t profiled = 0;         // ranges recorded
  std::uint64_t skipped_limit = 0;    // beyond max_instances_per_kernel
  std::uint64_t skipped_capture = 0;  // launched into a capturing stream
  std::uint64_t skipped_graphs = 0;   // cuGraphLaunch calls (their kernels are not profiled)
  std::uint64_t failed_launches = 0;  // the launch itself returned an error
  std::uint64_t empty_ranges = 0;     // a profiled launch that produced no range
  int passes = 0;                     // replay passes per kernel for the metric set (max over contexts)
  std::uint64_t l2_cleans = 0;        // profiled launches preceded by an L2 clean
  double l2_clean_seconds = 0;        // host time spent cleaning (synchronizing included)
  // RangeProfilerOptions::dram_pass: one-pass DRAM launches merged into the record before
  // them, and records whose DRAM counts stayed replayed (no later launch of the kernel,
  // or the DRAM configuration could not be set).
  std::uint64_t dram_passes = 0;
  std::uint64_t dram_replayed = 0;
  std::uint64_t config_switches = 0;   // range profiler objects re-created to change the metric set
  double config_switch_seconds = 0;    // host time they took
};

// A warning for profiles with records whose DRAM writes were read under kernel
// replay (stats.dram_replayed > 0 with dram__bytes_write among the metrics and more
// than one pass): replay's save and restore of device memory leaves dirty lines in
// L2 that the kernel's range then writes back, so those counts run high (+16-19 MB
// per kernel against ncu on an H100, docs/counters.md). Empty when
// every record's DRAM counts came from a one-pass DRAM launch or a one-pass set.
std::string replay_dram_write_warning(const RangeProfilerStats& stats, const std::vector<std::string>& metrics);

class RangeProfiler {
 public:
  explicit RangeProfiler(RangeProfilerOptions opts = {});
  ~RangeProfiler();  // ends profiling; never throws
  RangeProfiler(const RangeProfiler&) = delete;
  RangeProfiler& operator=(const RangeProfiler&) = delete;

  // In-process use: throw roofline::Error on failure.
  void start();
  void stop();
  CounterStatus try_start() noexcept;
  CounterStatus try_stop() noexcept;

  // Host-owned subscriber: `subscriber` is the host's CUpti_SubscriberHandle.
  CounterStatus attach(void* subscriber) noexcept;
  // Forward every CUPTI callback here (the arguments of CUpti_CallbackFunc,
  // domain and callback id as integers). Ignores what it does not need.
  void handle_callback(int domain, std::uint32_t cbid, const void* cbdata) noexcept;
  CounterStatus detach() noexcept;

  bool active() const;
  CounterStatus status() const;  // the first problem met while profiling (ok while all is well)
  std::vector<RangeRecord> records() const;
  std::size_t record_count() const;
  // Derived counters: one per profiled instance, or summed per kernel name + NVTX path.
  std::vector<KernelCounters> instance_counters() const;
  std::vector<KernelCounters> kernel_counters() const;
  std::vector<std::string> metrics() const;              // collected (after dropping unavailable ones)
  std::vector<std::string> unavailable_metrics() const;  // optional metrics this chip lacks
  RangeProfilerStats stats() const;

  // True while this thread runs the profiler's own CUDA work (the L2 clean: a
  // memset, the roofline_l2_evict kernel, context synchronizations). A host that
  // traces the program (the injection library) skips the callbacks it gets then.
  static bool internal_call() noexcept;

  struct Impl;  // public so the CUPTI callback trampoline can reach it

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace roofline::prof

// What a profiled program leaves behind, aggregated on the fly (no trace is
// needed for the summaries): per-kernel, per-API and per-memcpy statistics,
// launch overheads, GPU busy time and gaps, PM-sampling time series, hardware
// counters per kernel, and the diagnoses drawn from them. The injection
// library fills it inside the profiled process and writes it as JSON; the
// `roofline profile` process reads it back, prints it and stores it.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace roofline::prof {

// Exact count, total, min, max, mean and standard deviation (Welford); the
// median from a bounded reservoir sample (exact while count <= capacity).
class DurationStats {
 public:
  static constexpr size_t kReservoir = 2048;
  void add(double ns);
  void merge(const DurationStats& o);
  std::uint64_t count() const { return count_; }
  double total() const { return total_; }
  double min() const { return count_ ? min_ : 0; }
  double max() const { return max_; }
  double mean() const { return mean_; }
  double stddev() const;  // sample standard deviation
  double median() const;
  bool median_exact() const { return count_ <= kReservoir; }
  nlohmann::json to_json() const;
  static DurationStats from_json(const nlohmann::json& j);

 private:
  std::uint64_t count_ = 0;
  double total_ = 0, min_ = 0, max_ = 0, mean_ = 0, m2_ = 0;
  std::vector<double> reservoir_;
  std::uint64_t rng_ = 0x9E3779B97F4A7C15ull;
};

struct KernelSummary {
  std::string name;        // as CUPTI reports it (mangled for C++ kernels)
  std::string demangled;   // full demangled name
  std::string nvtx_path;   // innermost NVTX ranges at launch, "model/layer/pass" ("" when none)
  DurationStats duration;  // ns
  std::uint32_t grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};  // of the first launch
  int registers = 0;
  std::uint64_t static_smem = 0, dynamic_smem = 0;
  int device = 0;
};

struct ApiSummary {
  std::string name;        // "cudaLaunchKernel", "cuMemcpyHtoDAsync_v2", ...
  std::string domain;      // "runtime" or "driver"
  DurationStats duration;  // ns
  std::uint64_t errors = 0;
};

struct MemcpySummary {
  std::string kind;        // "HtoD", "DtoH", "DtoD", "HtoH", "PtoP", "memset"
  DurationStats duration;  // ns
  std::uint64_t total_bytes = 0, min_bytes = 0, max_bytes = 0;
  DurationStats sizes;     // bytes per operation (median and spread for the size table)
  std::uint64_t pageable = 0;     // copies that touched pageable host memory
  std::uint64_t synchronous = 0;  // issued by a synchronous API (cudaMemcpy, not ...Async)
};

// nsys cuda_kern_exec_sum: per launch, API time (host call), queue time (call
// return to kernel start) and kernel time.
struct LaunchSummary {
  std::string kernel;
  DurationStats api_ns, queue_ns, kernel_ns;
  std::uint64_t shorter_than_launch = 0;  // launches whose kernel ran shorter than the launch call
};

// Time spent inside one NVTX range path ("model/layer/pass") on the CPU
// (push to pop, per call) and the GPU work launched inside it, inclusive of
// nested ranges.
struct NvtxRangeSummary {
  std::string path;
  DurationStats cpu_ns;        // push..pop (or start..end) per call
  std::uint64_t kernels = 0;   // kernels launched inside (nested ranges included)
  double kernel_ns = 0;        // their GPU time
};

struct Interval {
  std::uint64_t start_ns = 0, end_ns = 0;
};

struct Timeline {
  std::uint64_t process_start_ns = 0, process_end_ns = 0;  // wall clock of the profiled process
  std::uint64_t first_gpu_ns = 0, last_gpu_ns = 0;         // first kernel/memcpy start, last end
  std::uint64_t kernel_busy_ns = 0;    // union of kernel intervals
  std::uint64_t gpu_busy_ns = 0;       // union of kernel, memcpy and memset intervals
  // Communication against computation (multi-GPU runs): the union of NCCL
  // collective kernels' intervals, of every other kernel's, and their
  // intersection (communication hidden under computation). 0 without NCCL.
  std::uint64_t comm_busy_ns = 0, compute_busy_ns = 0, overlap_ns = 0;
  // Each NCCL kernel's interval in start order (the first kMaxCollectives):
  // this process's collectives, which add_rank_row hands to its RankRow (the
  // straggler rule lines them up across ranks). Not merged, not stored.
  static constexpr size_t kMaxCollectives = 20000;
  std::vector<Interval> collectives;
  std::vector<Interval> largest_gaps;  // GPU idle gaps, longest first (bounded)
  std::map<std::string, std::uint64_t> gap_histogram;  // "<10us", "10-100us", "0.1-1ms", "1-10ms", ">10ms"
  // Idle time (ns) in the gaps of each gap_histogram bucket, same keys. Lets
  // the diagnosis split idle time into launch-sized and host-sized gaps
  // (HTA's kernel wait / host wait); empty in profiles written before it existed.
  std::map<std::string, std::uint64_t> gap_ns_histogram;
  std::uint64_t late_records = 0;      // activity records that arrived after their window was closed
  // Time between first_gpu_ns and last_gpu_ns that a capture range left out
  // (--capture-range, --delay, --duration: the gate was closed); 0 without one.
  std::uint64_t uncaptured_ns = 0;
  // The GPU-active window: first to last GPU activity, less uncaptured_ns.
  std::uint64_t window_ns() const;
  double busy_fraction() const;        // kernel_busy / window_ns()
};

// What a capture range (docs/profiler.md, "Capture ranges") kept of the run.
// Absent (active() false) when the whole run was profiled.
struct CaptureSummary {
  std::string range;              // "cuda-profiler-api", "nvtx:NAME" or "" (time window only, or none)
  std::uint64_t delay_ns = 0;     // --delay, from the program's start
  std::uint64_t duration_ns = 0;  // --duration (0: to the end)
  std::vector<Interval> ranges;   // the captured stretches (CUPTI clock), sorted, disjoint
  std::uint64_t opens = 0;        // event ranges the program opened (cudaProfilerStart, NAME ranges)
  std::uint64_t left_out = 0;     // activity records outside the captured stretches
  bool active() const { return !range.empty() || delay_ns > 0 || duration_ns > 0; }
  std::uint64_t captured_ns() const;
  // How much of [a, b) the ranges cover.
  std::uint64_t covered_ns(std::uint64_t a, std::uint64_t b) const;
  // What was asked, in words: "cudaProfilerStart/Stop", "NVTX ranges named step",
  // with ", from 0.70 s for 0.30 s" when --delay/--duration were given.
  std::string describe() const;
};

struct PmSample {
  std::uint64_t t_ns = 0;  // timestamp (same clock as the timeline)
  double gr_active = 0;    // fraction 0..1
  double sm_active = 0;
  double tensor_active = 0;
  double dram_read_bps = 0, dram_write_bps = 0;
};

// Derived from hardware counters for one kernel instance (or the sum over the
// profiled instances of one kernel name).
struct KernelCounters {
  std::string kernel;
  std::string nvtx_path;
  std::uint64_t instances = 0;
  double duration_ns = 0;
  std::map<std::string, double> flops;         // CUDA cores by precision: "fp64", "fp32", "fp16" (half+bf16)
  std::map<std::string, double> tensor_flops;  // tensor cores: "fp64","tf32","fp16","bf16","fp8","int8"
  double dram_read_bytes = 0, dram_write_bytes = 0;
  double l2_read_bytes = 0, l2_write_bytes = 0;
  double achieved_occupancy = 0;               // 0..1
  std::map<std::string, double> raw;           // metric name -> value, as read
  double total_flops() const;
  double dram_bytes() const { return dram_read_bytes + dram_write_bytes; }
};

// The same kernels counted twice (bench --counters): `all`'s counters, each
// kernel's DRAM bytes replaced by those of `dram`'s record with the same kernel
// name and NVTX path (a one-pass DRAM run: no replay, so no dirty lines written
// back inside the range). `unmatched`: kernels of `all` that `dram` lacks,
// whose DRAM bytes stay as they were.
std::vector<KernelCounters> replace_dram_bytes(std::vector<KernelCounters> all, const std::vector<KernelCounters>& dram,
                                               size_t* unmatched);

struct KernelSequence {
  std::vector<std::string> kernels;  // consecutive kernel names
  std::uint64_t count = 0;
  double total_ns = 0;
};

struct Diagnosis {
  std::string rule;        // stable id, e.g. "launch-bound"
  std::string severity;    // "high", "medium", "low", "info"
  std::string title;       // one line
  std::string evidence;    // the numbers that triggered it
  std::string suggestion;  // what to do
  double impact_ns = 0;    // estimated time at stake (0 when unknown)
};

// One process of a multi-process job (torchrun, mpirun, Slurm) as its own
// profile saw it: which rank, and its GPU time split into communication and
// computation (Timeline's fields, this process alone).
struct RankRow {
  int pid = 0, rank = -1, world = 0, local_rank = -1;
  std::string launcher;
  double kernel_ns = 0;  // sum of kernel durations
  std::uint64_t window_ns = 0, kernel_busy_ns = 0, comm_busy_ns = 0, compute_busy_ns = 0, overlap_ns = 0;
  // Its NCCL kernels in start order (CUPTI timestamps: one clock for every
  // process of a machine): the k-th of every rank is the same collective.
  std::vector<Interval> collectives;
};

struct ProfileData {
  int pid = 0;
  std::string command;          // the profiled command line
  std::string exit_status;      // "exited 0", "exited 3", "killed by signal 9", "still running"
  int exit_code = 0;
  bool complete = false;        // false when only a periodic snapshot survived (process killed)
  std::vector<std::string> devices;  // GPU names by ordinal
  std::vector<double> dram_peak_bps; // per device, as the driver reports it (0 when unknown)
  std::vector<int> processes;        // pids whose data is merged here (the program and its children)
  double wall_ns = 0;                // the program's wall time as the launcher measured it (0 when unknown)
  std::map<std::string, KernelSummary> kernels;  // key: name + '\x1f' + nvtx_path
  std::map<std::string, ApiSummary> apis;        // key: name
  std::map<std::string, MemcpySummary> memcpys;  // key: kind
  std::map<std::string, LaunchSummary> launches; // key: kernel name
  std::map<std::string, NvtxRangeSummary> nvtx_ranges;  // key: range path
  Timeline timeline;
  CaptureSummary capture;
  double pm_interval_ns = 0;
  std::vector<PmSample> pm_samples;
  std::vector<KernelCounters> counters;
  std::vector<KernelSequence> sequences;
  // Kernel launches that came without timestamps, by kernel name: the ones
  // --counters replayed. time_replayed_launches() gives them their measured
  // time in `kernels`; they have no place in the timeline.
  std::map<std::string, std::uint64_t> untimed_launches;
  std::vector<Diagnosis> diagnoses;
  std::vector<std::string> warnings;  // e.g. counters not permitted, CUPTI busy
  // A row per profiled process that a launcher gave a rank (merge() gathers them).
  std::vector<RankRow> ranks;

  // Adds this process's own row from its timeline (call before any merge).
  void add_rank_row(int rank, int world, int local_rank, const std::string& launcher);

  nlohmann::json to_json() const;
  static ProfileData from_json(const nlohmann::json& j);
  // Folds another process's data (a forked child) into this one.
  void merge(const ProfileData& other);
  // Sum of kernel durations (not their union: concurrent kernels add up).
  double kernel_time_ns() const;
  bool has_gpu_activity() const { return !kernels.empty() || !memcpys.empty(); }
  // Launches without timestamps (untimed_launches): the timeline misses them.
  std::uint64_t untimed_launch_count() const;
  // Adds each untimed launch to its kernel's row in `kernels` with the mean
  // duration the range profiler measured for that kernel (its replayed runs),
  // so a --counters run still lists and times every kernel. Launches of a
  // kernel without counters stay untimed. Returns the launches added.
  std::uint64_t time_replayed_launches();
  // With a capture range: drops the PM samples outside the captured stretches.
  void keep_captured_samples();

 private:
  void merge_capture(const CaptureSummary& other);
};

}  // namespace roofline::prof

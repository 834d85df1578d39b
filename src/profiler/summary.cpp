#include "roofline/profiler/summary.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <numeric>

#include "roofline/core/strings.hpp"
#include "roofline/hardware/datasheet.hpp"
#include "roofline/profiler/metrics.hpp"
#include "roofline/profiler/short_names.hpp"

namespace roofline::prof {

namespace {

using I64 = std::int64_t;

I64 ns(double v) { return static_cast<I64>(std::llround(v)); }

std::string display_name(const std::string& name, const std::string& demangled, const SummaryOptions& opt) {
  if (opt.full_names) return demangled.empty() ? demangle(name) : demangled;
  return short_kernel_name(demangled.empty() ? name : demangled, opt.name_width);
}

// nsys's statistics columns: Time (%) | Total Time | count | Avg | Med | Min | Max | StdDev.
Table& stats_columns(Table& t, const char* count_key, const char* count_title) {
  return t.col("time_pct", "Time", "%", 1)
      .col("total_ns", "Total Time", "ns")
      .col(count_key, count_title)
      .col("avg_ns", "Avg", "ns", 1)
      .col("med_ns", "Med", "ns", 1)
      .col("min_ns", "Min", "ns")
      .col("max_ns", "Max", "ns")
      .col("stddev_ns", "StdDev", "ns", 1);
}

std::vector<Cell> stats_cells(const DurationStats& d, double total_all) {
  return {total_all > 0 ? 100.0 * d.total() / total_all : 0.0,
          ns(d.total()),
          static_cast<I64>(d.count()),
          d.mean(),
          d.median(),
          ns(d.min()),
          ns(d.max()),
          d.stddev()};
}

// The summaries of `by_key` (API functions, memory operations), longest total
// time first, and the time of all of them.
template <class Summary>
std::pair<std::vector<const Summary*>, double> by_total_time(const std::map<std::string, Summary>& by_key) {
  std::vector<const Summary*> rows;
  double total = 0;
  for (const auto& [key, s] : by_key) {
    rows.push_back(&s);
    total += s.duration.total();
  }
  std::sort(rows.begin(), rows.end(),
            [](const Summary* a, const Summary* b) { return a->duration.total() > b->duration.total(); });
  return {std::move(rows), total};
}

void note_more(Table& t, size_t shown, size_t all, const char* what) {
  if (all > shown) t.note(fmt::format("{} more {} not shown (--top 0 shows all)", all - shown, what));
}

double seconds_from(std::uint64_t t_ns, std::uint64_t origin_ns) {
  return t_ns > origin_ns ? static_cast<double>(t_ns - origin_ns) * 1e-9 : 0.0;
}

// The run's length for "of N s run": the launcher's wall time, else the traced span.
double run_seconds(const ProfileData& p) {
  if (p.wall_ns > 0) return p.wall_ns * 1e-9;
  const Timeline& t = p.timeline;
  return t.process_end_ns > t.process_start_ns ? static_cast<double>(t.process_end_ns - t.process_start_ns) * 1e-9 : 0;
}

// "captured 2 ranges, 12.40 s of 31.2 s run (cudaProfilerStart/Stop)".
std::string captured_text(const ProfileData& p) {
  const CaptureSummary& c = p.capture;
  const size_t n = c.ranges.size();
  std::string s =
      n == 0 ? std::string("nothing: the capture range never opened")
             : fmt::format("{} range{}, {:.2f} s", n, n == 1 ? "" : "s", static_cast<double>(c.captured_ns()) * 1e-9);
  if (const double run = run_seconds(p); n > 0 && run > 0) s += fmt::format(" of {:.1f} s run", run);
  return s + " (" + c.describe() + ")";
}

// Why a capture range kept nothing, "" when it kept something.
std::string capture_warning(const ProfileData& p) {
  const CaptureSummary& c = p.capture;
  if (!c.active()) return {};
  if (!c.ranges.empty()) {
    if (p.has_gpu_activity()) return {};
    return fmt::format(
        "no kernels or memory copies ran inside the captured ranges ({} activity records fell outside "
        "them)",
        c.left_out);
  }
  const bool timed = c.delay_ns > 0 || c.duration_ns > 0;
  std::string window;
  if (timed) {
    CaptureSummary only_time = c;
    only_time.range.clear();
    window = only_time.describe();
  }
  if (c.range == "cuda-profiler-api" && c.opens == 0)
    return "the capture range never opened: the program called no cudaProfilerStart";
  if (c.range.rfind("nvtx:", 0) == 0 && c.opens == 0)
    return "the capture range never opened: no NVTX range named " + c.range.substr(5) +
           " (NVTX goes to roofline unless ROOFLINE_NVTX=0 or NVTX_INJECTION64_PATH names another tool)";
  if (!c.range.empty())
    return "the capture range never opened inside the time window (" + window + "): the program's " +
           (c.range == "cuda-profiler-api" ? std::string("cudaProfilerStart/Stop ranges")
                                           : "NVTX ranges named " + c.range.substr(5)) +
           " all fell outside it";
  return "the capture window (" + window +
         ") held none of the traced run: the program ended before it opened, or started CUDA after it closed";
}

void add_overview(Report& r, const ProfileData& p) {
  Table& t = r.add(Table("profile", "Profile"));
  t.prop("command", "Command", p.command);
  t.prop("exit_status", "Program", p.exit_status.empty() ? std::string("unknown") : p.exit_status);
  if (p.wall_ns > 0) t.prop("wall_s", "Wall time", p.wall_ns * 1e-9, "s");
  if (p.capture.active()) t.prop("captured", "Captured", captured_text(p));
  t.prop("processes", "Processes profiled", static_cast<I64>(p.processes.size()));
  std::vector<std::string> gpus;
  for (size_t i = 0; i < p.devices.size(); ++i)
    if (!p.devices[i].empty()) gpus.push_back(fmt::format("{}: {}", i, p.devices[i]));
  t.prop("gpus", "GPUs", gpus.empty() ? std::string("-") : join(gpus, ", "));
  std::uint64_t launches = 0;
  for (const auto& [k, s] : p.kernels) launches += s.duration.count();
  t.prop("kernel_instances", "Kernels run", static_cast<I64>(launches));
  t.prop("kernel_time_s", "Kernel time (sum)", p.kernel_time_ns() * 1e-9, "s");
  Utilization u = activity_utilization(p);
  if (u.window_s > 0) {
    t.prop("gpu_window_s", "GPU-active window", u.window_s, "s");
    t.prop("kernel_busy_pct", "GPU busy with kernels", 100.0 * u.kernel_busy, "% of the window");
  }
  const Timeline& tl = p.timeline;
  if (tl.comm_busy_ns > 0) {
    // Summed over the processes (each rank's own GPU): what DDP-style overlap hides and what it leaves exposed.
    t.prop("comm_busy_s", "Communication (NCCL kernels)", tl.comm_busy_ns * 1e-9, "s");
    t.prop("compute_busy_s", "Computation (other kernels)", tl.compute_busy_ns * 1e-9, "s");
    t.prop("overlap_pct", "Communication under computation", 100.0 * double(tl.overlap_ns) / double(tl.comm_busy_ns),
           "% of it");
    t.prop("exposed_comm_s", "Exposed communication", (tl.comm_busy_ns - std::min(tl.overlap_ns, tl.comm_busy_ns)) * 1e-9,
           "s");
  }
  t.prop("complete", "Complete", p.complete);
}

// One row per rank of a multi-process job: each process's own GPU time, its
// communication, how much of it computation hid, and what was left exposed.
void add_ranks(Report& r, const ProfileData& p) {
  if (p.ranks.empty()) return;
  std::vector<RankRow> rows = p.ranks;
  std::sort(rows.begin(), rows.end(), [](const RankRow& a, const RankRow& b) {
    return a.rank != b.rank ? a.rank < b.rank : a.pid < b.pid;
  });
  Table& t = r.add(Table("ranks", "Per rank (each process's own GPU; launcher's ranks)"));
  t.col("rank", "Rank").col("pid", "PID").col("kernel_s", "Kernel time", "s", 4).col("busy_pct", "GPU busy", "%", 1);
  t.col("comm_s", "NCCL", "s", 4).col("overlap_pct", "hidden", "%", 1).col("exposed_s", "exposed", "s", 4);
  for (const RankRow& x : rows) {
    const std::uint64_t hidden = std::min(x.overlap_ns, x.comm_busy_ns);
    t.row({static_cast<I64>(x.rank), static_cast<I64>(x.pid), x.kernel_ns * 1e-9,
           x.window_ns > 0 ? Cell(100.0 * double(x.kernel_busy_ns) / double(x.window_ns)) : Cell(),
           x.comm_busy_ns * 1e-9, x.comm_busy_ns > 0 ? Cell(100.0 * double(hidden) / double(x.comm_busy_ns)) : Cell(),
           (x.comm_busy_ns - hidden) * 1e-9});
  }
  t.note(fmt::format("{} process(es) of a job of {} ({}); the tables below merge them", rows.size(), rows.front().world,
                     rows.front().launcher));
}

void add_kernels(Report& r, const ProfileData& p, const SummaryOptions& opt) {
  // nsys groups by kernel name; the NVTX split is in the ranges table.
  std::map<std::string, std::pair<DurationStats, std::string>> by_name;
  for (const auto& [key, k] : p.kernels) {
    auto& e = by_name[k.name];
    e.first.merge(k.duration);
    if (e.second.empty()) e.second = k.demangled;
  }
  std::vector<std::pair<std::string, const std::pair<DurationStats, std::string>*>> rows;
  double total = 0;
  for (const auto& [name, e] : by_name) {
    rows.emplace_back(name, &e);
    total += e.first.total();
  }
  std::sort(rows.begin(), rows.end(),
            [](const auto& a, const auto& b) { return a.second->first.total() > b.second->first.total(); });
  Table& t = r.add(Table("kernels", "CUDA GPU kernel summary (cuda_gpu_kern_sum)"));
  stats_columns(t, "instances", "Instances").col("library", "Library").col("name", "Name");
  size_t n = opt.top ? std::min(opt.top, rows.size()) : rows.size();
  for (size_t i = 0; i < n; ++i) {
    std::vector<Cell> c = stats_cells(rows[i].second->first, total);
    std::string lib = kernel_library(rows[i].first);
    c.push_back(lib.empty() ? Cell() : Cell(lib));
    c.push_back(display_name(rows[i].first, rows[i].second->second, opt));
    t.row(std::move(c));
  }
  note_more(t, n, rows.size(), "kernels");
  if (const std::uint64_t untimed = p.untimed_launch_count(); untimed > 0)
    t.note(fmt::format("{} launches replayed by --counters came without timestamps: they count here with the mean "
                       "time of their kernel's measured (replayed) runs",
                       untimed));
}

void add_apis(Report& r, const ProfileData& p, const SummaryOptions& opt) {
  auto [rows, total] = by_total_time(p.apis);
  Table& t = r.add(Table("cuda_api", "CUDA API summary (cuda_api_sum)"));
  stats_columns(t, "calls", "Num Calls").col("errors", "Errors").col("name", "Name");
  size_t n = opt.top ? std::min(opt.top, rows.size()) : rows.size();
  std::uint64_t errors = 0;
  for (size_t i = 0; i < n; ++i) {
    std::vector<Cell> c = stats_cells(rows[i]->duration, total);
    c.push_back(static_cast<I64>(rows[i]->errors));
    c.push_back(rows[i]->name);
    t.row(std::move(c));
  }
  for (const auto* a : rows) errors += a->errors;
  note_more(t, n, rows.size(), "API functions");
  if (errors > 0)
    t.note(fmt::format("{} calls returned an error (\"not ready\" from query calls is not counted)", errors));
}

std::string operation_name(const std::string& kind) {
  if (kind == "memset") return "[CUDA memset]";
  return "[CUDA memcpy " + kind + "]";
}

void add_memory(Report& r, const ProfileData& p) {
  auto [rows, total] = by_total_time(p.memcpys);
  Table& t = r.add(Table("gpu_mem_time", "GPU memory operations by time (cuda_gpu_mem_time_sum)"));
  stats_columns(t, "count", "Count").col("operation", "Operation");
  for (const auto* m : rows) {
    std::vector<Cell> c = stats_cells(m->duration, total);
    c.push_back(operation_name(m->kind));
    t.row(std::move(c));
  }
  Table& s = r.add(Table("gpu_mem_size", "GPU memory operations by size (cuda_gpu_mem_size_sum)"));
  s.col("total_mb", "Total", "MB", 3)
      .col("count", "Count")
      .col("avg_mb", "Avg", "MB", 3)
      .col("med_mb", "Med", "MB", 3)
      .col("min_mb", "Min", "MB", 3)
      .col("max_mb", "Max", "MB", 3)
      .col("stddev_mb", "StdDev", "MB", 3)
      .col("pageable", "Pageable")
      .col("synchronous", "Synchronous")
      .col("operation", "Operation");
  std::sort(rows.begin(), rows.end(),
            [](const MemcpySummary* a, const MemcpySummary* b) { return a->total_bytes > b->total_bytes; });
  std::uint64_t pageable = 0;
  for (const auto* m : rows) {
    const double mb = 1e-6;  // nsys's MB are 10^6 bytes
    // Older profiles carry no per-operation sizes: the mean is still exact.
    bool sizes = m->sizes.count() > 0;
    double count = static_cast<double>(m->duration.count());
    s.row({static_cast<double>(m->total_bytes) * mb, static_cast<I64>(m->duration.count()),
           sizes ? m->sizes.mean() * mb : (count > 0 ? static_cast<double>(m->total_bytes) / count * mb : 0.0),
           sizes ? Cell(m->sizes.median() * mb) : Cell(), static_cast<double>(m->min_bytes) * mb,
           static_cast<double>(m->max_bytes) * mb, sizes ? Cell(m->sizes.stddev() * mb) : Cell(),
           static_cast<I64>(m->pageable), static_cast<I64>(m->synchronous), operation_name(m->kind)});
    if (m->kind != "memset") pageable += m->pageable;
  }
  if (pageable > 0)
    s.note(
        fmt::format("{} copies used pageable host memory: they are staged through a pinned buffer and cannot "
                    "overlap with kernels (pin the host buffers: cudaMallocHost, pin_memory=True)",
                    pageable));
}

void add_launches(Report& r, const ProfileData& p, const SummaryOptions& opt) {
  std::vector<const LaunchSummary*> rows;
  std::uint64_t count = 0, shorter = 0;
  for (const auto& [name, l] : p.launches) {
    rows.push_back(&l);
    count += l.kernel_ns.count();
    shorter += l.shorter_than_launch;
  }
  std::sort(rows.begin(), rows.end(), [](const LaunchSummary* a, const LaunchSummary* b) {
    double ta = a->api_ns.total() + a->queue_ns.total() + a->kernel_ns.total();
    double tb = b->api_ns.total() + b->queue_ns.total() + b->kernel_ns.total();
    return ta > tb;
  });
  std::map<std::string, std::string> demangled;
  for (const auto& [key, k] : p.kernels) demangled.emplace(k.name, k.demangled);
  Table& t = r.add(Table("launch", "Kernel launches: API, queue and kernel time per launch (cuda_kern_exec_sum)"));
  t.col("count", "Count")
      .col("api_avg_ns", "API Avg", "ns", 1)
      .col("api_med_ns", "API Med", "ns", 1)
      .col("queue_avg_ns", "Queue Avg", "ns", 1)
      .col("queue_med_ns", "Queue Med", "ns", 1)
      .col("kernel_avg_ns", "Kernel Avg", "ns", 1)
      .col("kernel_med_ns", "Kernel Med", "ns", 1)
      .col("shorter_pct", "Shorter than launch", "%", 1)
      .col("name", "Name");
  size_t n = opt.top ? std::min(opt.top, rows.size()) : rows.size();
  for (size_t i = 0; i < n; ++i) {
    const LaunchSummary& l = *rows[i];
    double c = static_cast<double>(l.kernel_ns.count());
    t.row({static_cast<I64>(l.kernel_ns.count()), l.api_ns.mean(), l.api_ns.median(), l.queue_ns.mean(),
           l.queue_ns.median(), l.kernel_ns.mean(), l.kernel_ns.median(),
           c > 0 ? 100.0 * static_cast<double>(l.shorter_than_launch) / c : 0.0,
           display_name(l.kernel, demangled[l.kernel], opt)});
  }
  note_more(t, n, rows.size(), "kernels");
  if (count > 0)
    t.note(
        fmt::format("{} of {} launches ({:.1f} %) ran shorter than their launch call: where these dominate, the "
                    "GPU waits for the CPU (launch-bound); CUDA graphs or fused kernels help",
                    shorter, count, 100.0 * static_cast<double>(shorter) / static_cast<double>(count)));
  t.note("Queue: from the launch call's return to the kernel's start (0 when it started before the call returned)");
}

double dram_peak(const ProfileData& p, size_t device) {
  if (device < p.dram_peak_bps.size() && p.dram_peak_bps[device] > 0) return p.dram_peak_bps[device];
  if (device < p.devices.size()) {
    if (const hw::Datasheet* d = hw::find_datasheet(p.devices[device]); d && d->bandwidth > 0) return d->bandwidth;
  }
  return 0;
}

// What part of the GPU-active window the PM samples leave out, said in words
// ("" when they cover it): a series that stops early (a sampler that fell
// behind, a hardware buffer that overflowed) must not pass for the whole run.
std::string pm_coverage_gap(const ProfileData& p) {
  const auto& t = p.timeline;
  if (p.pm_samples.size() < 2 || t.last_gpu_ns <= t.first_gpu_ns) return {};
  const std::uint64_t first = p.pm_samples.front().t_ns, last = p.pm_samples.back().t_ns;
  const double spacing = static_cast<double>(last - first) / static_cast<double>(p.pm_samples.size() - 1);
  const double slack = std::max({2.0 * spacing, 2.0 * p.pm_interval_ns, 1e6});  // ns
  const double late_start = static_cast<double>(first) - static_cast<double>(t.first_gpu_ns);
  const double early_end = static_cast<double>(t.last_gpu_ns) - static_cast<double>(last);
  if (late_start <= slack && early_end <= slack) return {};
  const std::uint64_t origin = t.process_start_ns ? t.process_start_ns : t.first_gpu_ns;
  return fmt::format("the PM samples cover {:.3f}-{:.3f} s, but GPU work ran {:.3f}-{:.3f} s: the PM rows describe "
                     "only part of the run (sampling stopped or started late; a longer --pm-interval keeps up)",
                     seconds_from(first, origin), seconds_from(last, origin), seconds_from(t.first_gpu_ns, origin),
                     seconds_from(t.last_gpu_ns, origin));
}

void add_utilization(Report& r, const ProfileData& p, const SummaryOptions& opt) {
  Utilization u = activity_utilization(p);
  if (u.window_s <= 0 && p.pm_samples.empty()) return;
  Table& t = r.add(Table("utilization", "Utilization over the GPU-active window"));
  t.col("metric", "Metric")
      .col("config", "Config")
      .col("value", "Utilization", "", 2)
      .col("unit", "Unit")
      .col("pct_of_peak", "% of peak", "%", 2)
      .col("start_s", "Start time", "s", 3)
      .col("end_s", "End time", "s", 3)
      .col("source", "Source");
  std::string config = opt.label.empty() ? "-" : opt.label;
  if (const std::uint64_t untimed = p.untimed_launch_count(); untimed > 0 && u.window_s > 0)
    t.note(fmt::format("the timeline leaves out {} launches replayed by --counters (no timestamps): the busy "
                       "fractions are of the other GPU work",
                       untimed));
  if (p.capture.active() && u.window_s > 0)
    t.note(p.timeline.uncaptured_ns > 0
               ? fmt::format("over the captured ranges only: the window leaves out the {:.3f} s between its start "
                             "and end when the capture was closed",
                             static_cast<double>(p.timeline.uncaptured_ns) * 1e-9)
               : std::string("over the captured ranges only"));
  if (u.window_s > 0) {
    t.row({std::string("GPU (kernels)"), config, 100.0 * u.kernel_busy, std::string("%"), Cell(), u.start_s, u.end_s,
           std::string("activity: union of kernel intervals / window")});
    t.row({std::string("GPU (kernels + copies)"), config, 100.0 * u.gpu_busy, std::string("%"), Cell(), u.start_s,
           u.end_s, std::string("activity: union of kernel, memcpy and memset intervals / window")});
  }
  if (!p.pm_samples.empty()) {
    std::uint64_t origin = p.timeline.process_start_ns ? p.timeline.process_start_ns : p.pm_samples.front().t_ns;
    double s0 = seconds_from(p.pm_samples.front().t_ns, origin), s1 = seconds_from(p.pm_samples.back().t_ns, origin);
    double n = static_cast<double>(p.pm_samples.size());
    auto mean = [&](double PmSample::*f) {
      double s = 0;
      for (const auto& x : p.pm_samples) s += x.*f;
      return s / n;
    };
    double peak = dram_peak(p, 0);
    t.row({std::string("GPU (GR active)"), config, 100.0 * mean(&PmSample::gr_active), std::string("%"), Cell(), s0, s1,
           std::string("PM sampling")});
    t.row({std::string("SM active"), config, 100.0 * mean(&PmSample::sm_active), std::string("%"), Cell(), s0, s1,
           std::string("PM sampling")});
    t.row({std::string("Tensor active"), config, 100.0 * mean(&PmSample::tensor_active), std::string("%"), Cell(), s0,
           s1, std::string("PM sampling")});
    double rd = mean(&PmSample::dram_read_bps), wr = mean(&PmSample::dram_write_bps);
    t.row({std::string("DRAM bandwidth - r"), config, rd * 1e-9, std::string("GB/s"),
           peak > 0 ? Cell(100.0 * rd / peak) : Cell(), s0, s1, std::string("PM sampling")});
    t.row({std::string("DRAM bandwidth - w"), config, wr * 1e-9, std::string("GB/s"),
           peak > 0 ? Cell(100.0 * wr / peak) : Cell(), s0, s1, std::string("PM sampling")});
    t.note(fmt::format("PM sampling: {} samples every {} us", p.pm_samples.size(), p.pm_interval_ns * 1e-3));
    if (const std::string gap = pm_coverage_gap(p); !gap.empty()) {
      t.note(gap);
      r.warn(gap);
    }
  } else {
    t.note("DRAM read/write bandwidth comes from PM sampling (--pm-sampling)");
  }
  t.note("Times in seconds from the start of tracing in the profiled process (CUDA initialisation)");
}

void add_gaps(Report& r, const ProfileData& p) {
  const auto& h = p.timeline.gap_histogram;
  if (h.empty()) return;
  Table& t = r.add(Table("gaps", "GPU idle gaps (nothing running on any GPU)"));
  const auto& hn = p.timeline.gap_ns_histogram;  // empty in older profiles
  t.col("bucket", "Gap length").col("count", "Count").col("idle_ns", "Idle time", "ns");
  for (const char* b : {"<10us", "10-100us", "0.1-1ms", "1-10ms", ">10ms"}) {
    auto it = h.find(b);
    auto jt = hn.find(b);
    t.row({std::string(b), static_cast<I64>(it == h.end() ? 0 : it->second),
           hn.empty() ? Cell() : Cell(static_cast<I64>(jt == hn.end() ? 0 : jt->second))});
  }
  std::uint64_t origin = p.timeline.process_start_ns ? p.timeline.process_start_ns : p.timeline.first_gpu_ns;
  std::vector<std::string> longest;
  for (size_t i = 0; i < std::min<size_t>(3, p.timeline.largest_gaps.size()); ++i) {
    const Interval& g = p.timeline.largest_gaps[i];
    longest.push_back(fmt::format("{} at {:.3f} s", format_seconds(static_cast<double>(g.end_ns - g.start_ns) * 1e-9),
                                  seconds_from(g.start_ns, origin)));
  }
  if (!longest.empty()) t.note("longest: " + join(longest, ", "));
}

void add_nvtx(Report& r, const ProfileData& p) {
  if (p.nvtx_ranges.empty()) return;
  double kernel_total = p.kernel_time_ns();
  Table& t = r.add(Table("nvtx", "NVTX ranges: CPU time per call and the GPU work launched inside (nested included)"));
  t.col("path", "Range")
      .col("calls", "Calls")
      .col("cpu_total_ns", "CPU Total", "ns")
      .col("cpu_avg_ns", "CPU Avg", "ns", 1)
      .col("kernels", "Kernels")
      .col("gpu_ns", "GPU Time", "ns")
      .col("gpu_pct", "GPU Time", "% of kernels", 1);
  // Map order is path order, so nested ranges follow their parent.
  for (const auto& [path, n] : p.nvtx_ranges)
    t.row({path, static_cast<I64>(n.cpu_ns.count()), ns(n.cpu_ns.total()), n.cpu_ns.mean(), static_cast<I64>(n.kernels),
           ns(n.kernel_ns), kernel_total > 0 ? 100.0 * n.kernel_ns / kernel_total : 0.0});
}

void add_sequences(Report& r, const ProfileData& p, const SummaryOptions& opt) {
  if (p.sequences.empty()) return;
  Table& t = r.add(Table("sequences", "Frequent kernel sequences (fusion candidates)"));
  t.col("count", "Count").col("length", "Kernels").col("total_ns", "GPU Time", "ns").col("sequence", "Sequence");
  size_t n = opt.top ? std::min<size_t>(opt.top, p.sequences.size()) : p.sequences.size();
  size_t width = opt.full_names ? 0 : 40;
  for (size_t i = 0; i < n; ++i) {
    const KernelSequence& s = p.sequences[i];
    std::vector<std::string> names;
    for (const auto& k : s.kernels) names.push_back(base_kernel_name(k, width));
    t.row(
        {static_cast<I64>(s.count), static_cast<I64>(s.kernels.size()), ns(s.total_ns), join(names, " \xE2\x86\x92 ")});
  }
  note_more(t, n, p.sequences.size(), "sequences");
}

void add_counters(Report& r, const ProfileData& p, const SummaryOptions& opt) {
  if (p.counters.empty()) return;
  std::vector<const KernelCounters*> rows;
  for (const auto& c : p.counters) rows.push_back(&c);
  std::sort(rows.begin(), rows.end(),
            [](const KernelCounters* a, const KernelCounters* b) { return a->duration_ns > b->duration_ns; });
  Table& t = r.add(Table("counters", "Hardware counters per kernel (range profiler, kernel replay)"));
  t.col("name", "Name")
      .col("nvtx_path", "Range")
      .col("instances", "Measured")
      .col("avg_ns", "Time Avg", "ns", 1)
      .col("gflop_cuda", "CUDA-core", "GFLOP", 3)
      .col("gflop_tensor", "Tensor", "GFLOP", 3)
      .col("dram_mb", "DRAM r+w", "MB", 3)
      .col("intensity", "Intensity", "FLOP/B", 2)
      .col("gflops", "Rate", "GFLOP/s", 1)
      .col("gbps", "DRAM", "GB/s", 1)
      .col("occupancy_pct", "Occupancy", "%", 1);
  size_t n = opt.top ? std::min(opt.top, rows.size()) : rows.size();
  size_t with_moves = 0;
  for (size_t i = 0; i < n; ++i) {
    const KernelCounters& c = *rows[i];
    double cuda = 0, tensor = 0;
    for (const auto& [k, v] : c.flops) cuda += v;
    for (const auto& [k, v] : c.tensor_flops) tensor += v;
    // Work FLOPs (docs/counters.md): compiler register moves counted as FP16 are left out.
    if (const double moves = fp16_register_move_flops(c); moves > 0) cuda -= moves, ++with_moves;
    double bytes = c.dram_bytes(), secs = c.duration_ns * 1e-9;
    t.row({display_name(c.kernel, {}, opt), c.nvtx_path.empty() ? Cell() : Cell(c.nvtx_path),
           static_cast<I64>(c.instances), c.instances ? c.duration_ns / static_cast<double>(c.instances) : 0.0,
           cuda * 1e-9, tensor * 1e-9, bytes * 1e-6, bytes > 0 ? Cell((cuda + tensor) / bytes) : Cell(),
           secs > 0 ? Cell((cuda + tensor) / secs * 1e-9) : Cell(), secs > 0 ? Cell(bytes / secs * 1e-9) : Cell(),
           100.0 * c.achieved_occupancy});
  }
  note_more(t, n, rows.size(), "kernels");
  if (with_moves > 0)
    t.note(fmt::format("CUDA-core GFLOP, intensity and rate are work FLOPs: the compiler register moves (HFMA2.MMA of "
                       "zeros, counted as FP16 by the hardware and by ncu) of {} kernel{} are left out",
                       with_moves, with_moves == 1 ? "" : "s"));
  t.note("kernel replay: each measured kernel ran once per counter pass, serialized; times are of the measured runs");
}

void add_diagnoses(Report& r, const ProfileData& p) {
  if (p.diagnoses.empty()) return;
  Table& t = r.add(Table("diagnoses", "Diagnoses"));
  t.col("severity", "Severity")
      .col("rule", "Rule")
      .col("title", "Finding")
      .col("evidence", "Evidence")
      .col("suggestion", "What to do");
  for (const auto& d : p.diagnoses) t.row({d.severity, d.rule, d.title, d.evidence, d.suggestion});
}

}  // namespace

Utilization activity_utilization(const ProfileData& p) {
  Utilization u;
  const Timeline& t = p.timeline;
  if (t.window_ns() == 0) return u;
  double window = static_cast<double>(t.window_ns());
  u.window_s = window * 1e-9;
  u.kernel_busy = static_cast<double>(t.kernel_busy_ns) / window;
  u.gpu_busy = static_cast<double>(t.gpu_busy_ns) / window;
  std::uint64_t origin = t.process_start_ns ? t.process_start_ns : t.first_gpu_ns;
  u.start_s = seconds_from(t.first_gpu_ns, origin);
  u.end_s = seconds_from(t.last_gpu_ns, origin);
  return u;
}

void fill_demangled(ProfileData& p) {
  for (auto& [key, k] : p.kernels)
    if (k.demangled.empty()) k.demangled = demangle(k.name);
}

void add_profile_tables(Report& r, const ProfileData& p, const SummaryOptions& opt) {
  add_overview(r, p);
  add_ranks(r, p);
  if (!p.kernels.empty()) add_kernels(r, p, opt);
  if (!p.apis.empty()) add_apis(r, p, opt);
  if (!p.memcpys.empty()) add_memory(r, p);
  if (!p.launches.empty()) add_launches(r, p, opt);
  add_utilization(r, p, opt);
  add_gaps(r, p);
  add_nvtx(r, p);
  add_sequences(r, p, opt);
  add_counters(r, p, opt);
  add_diagnoses(r, p);
  if (std::string w = capture_warning(p); !w.empty()) r.warn(w);
  for (const auto& w : p.warnings) r.warn(w);
}

}  // namespace roofline::prof

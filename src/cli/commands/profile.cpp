// roofline profile -- CMD ARGS...: runs any program under roofline's CUPTI
// injection library and, when it ends, prints nsys-style summaries (kernels,
// CUDA API, memory operations, launch overheads), utilization over the
// GPU-active window, GPU gaps, NVTX ranges and frequent kernel sequences, and
// stores the profile with the run. See docs/profiler.md.
#include <fmt/format.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "src/cli/command.hpp"
#include "roofline/core/error.hpp"
#include "roofline/core/strings.hpp"
#include "roofline/cuda/runtime.hpp"
#include "roofline/profiler/capture_gate.hpp"
#include "roofline/profiler/chrome_trace.hpp"
#include "roofline/profiler/diagnosis.hpp"
#include "roofline/profiler/launcher.hpp"
#include "roofline/profiler/pm_sampler.hpp"
#include "roofline/profiler/profile_store.hpp"
#include "roofline/profiler/summary.hpp"

namespace roofline::cli {

namespace fs = std::filesystem;

namespace {

// The folder the profiled processes write to: a fresh temporary one removed
// afterwards, or the user's --output-dir, kept.
class OutputDir {
 public:
  explicit OutputDir(const std::string& keep) {
    if (!keep.empty()) {
      std::error_code ec;
      fs::create_directories(keep, ec);
      if (ec || !fs::is_directory(keep))
        throw Error(ErrorKind::Input, fmt::format("cannot use '{}' as the output folder: {}", keep, ec.message()),
                    "give a folder you can write to");
      // Files of an earlier profile would be merged into this one.
      for (const auto& e : fs::directory_iterator(keep)) {
        std::string n = e.path().filename().string();
        if ((starts_with(n, "profile-") && (ends_with(n, ".json") || ends_with(n, ".tmp"))) ||
            (starts_with(n, "trace-") && ends_with(n, ".jsonl")))
          fs::remove(e.path(), ec);
      }
      path_ = fs::absolute(keep).string();
      return;
    }
    std::string tmpl = (fs::temp_directory_path() / "roofline-profile-XXXXXX").string();
    if (!mkdtemp(tmpl.data()))
      throw Error(ErrorKind::Input, "cannot create a temporary folder for the profile", "check $TMPDIR and free space");
    path_ = tmpl;
    remove_ = true;
  }
  ~OutputDir() {
    if (!remove_) return;
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  bool remove_ = false;
};

}  // namespace

class ProfileCommand : public Command {
 public:
  const char* name() const override { return "profile"; }
  const char* summary() const override {
    return "run a program under roofline's CUPTI profiler and print nsys-style summaries (roofline profile -- CMD "
           "ARGS)";
  }
  int exit_code() const override { return exit_code_; }
  // Printing a stored profile or a file measures nothing: no run is recorded.
  bool stores_results() const override { return show_ == 0 && load_.empty(); }

  void configure(CLI::App& sub) override {
    sub.add_option("--trace", trace_, "also write every event as a Chrome-trace/Perfetto JSON to FILE");
    sub.add_option("--trace-limit", trace_limit_, "most events per process in the --trace file (default 1000000)")
        ->check(whole_number(1));
    sub.add_flag("--full-names", opt_.full_names,
                 "show whole demangled kernel names (default: short names, 80 columns)");
    sub.add_option("--top", opt_.top, "rows of the kernel, API, launch and sequence tables (0: all; default 30)")
        ->check(whole_number(0));
    sub.add_option("--label", opt_.label, "the config column of the utilization table, e.g. \"1/train\"");
    sub.add_option("--output-dir", output_dir_,
                   "keep the per-process profile files in DIR (default: a temporary folder, removed)");
    sub.add_flag("--pm-sampling", pm_sampling_, "sample GPU utilization and DRAM bandwidth with CUPTI PM sampling");
    sub.add_option("--pm-interval", pm_interval_us_, "PM sampling interval in microseconds (default 100)")
        ->check(positive_number());
    sub.add_flag("--counters", counters_,
                 "hardware counters per kernel (FLOPs by precision, DRAM/L2 bytes; kernel replay)");
    sub.add_option("--counters-limit", counters_limit_,
                   "launches measured per kernel name with --counters (default 1; 0: every launch); "
                   "each takes the launch after it too, to read its DRAM bytes in one pass")
        ->check(whole_number(0, std::numeric_limits<std::uint32_t>::max()));
    sub.add_option("--metrics", metrics_, "counter metrics for --counters instead of the default set (comma-separated; e.g. "
                    "gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum: one pass, exact DRAM bytes)")->delimiter(',');
    sub.add_option("--device", device_,
                   "GPU whose counters --pm-sampling and --counters read (tracing covers every GPU)")
        ->check(whole_number(0, 1023));
    sub.add_option("--delay", delay_s_,
                   "capture from SECONDS after the program starts (with --capture-range: the ranges after it)")
        ->check(non_negative_number());
    sub.add_option("--duration", duration_s_,
                   "capture for SECONDS, then stop (from the program's start, or from --delay)")
        ->check(positive_number());
    capture_opt_ = sub.add_option("--capture-range", capture_range_,
                                  "capture only between cudaProfilerStart and cudaProfilerStop (cuda-profiler-api) or "
                                  "inside NVTX ranges named NAME (nvtx:NAME)");
    auto* show = sub.add_option("--show", show_, "print a stored profile (its id) instead of running a program")
                     ->check(whole_number(1));
    sub.add_option("--load", load_, "print a profile file (a profile-<pid>.json that --output-dir kept) instead")
        ->check(CLI::ExistingFile)
        ->excludes(show);
    sub.add_option("command", command_, "the program to profile and its arguments (after --)")->expected(1, -1);
    // Everything from the program's name on belongs to the program.
    sub.positionals_at_end();
  }

  Report run(Invocation& ctx) override {
    Report r("profile");
    const prof::CaptureSpec capture = check_capture();
    if (show_ > 0) {
      prof::ProfileData p = prof::load_profile(ctx.db(), show_);
      prof::add_profile_tables(r, p, opt_);
      return r;
    }
    if (!load_.empty()) {
      prof::ProfileData p;
      try {
        std::ifstream f(load_);
        p = prof::ProfileData::from_json(nlohmann::json::parse(f));
      } catch (const std::exception& e) {
        throw Error(ErrorKind::Input, fmt::format("'{}' is not a roofline profile: {}", load_, e.what()),
                    "give a profile-<pid>.json written by roofline's injection library");
      }
      prof::fill_demangled(p);
      prof::add_profile_tables(r, p, opt_);
      return r;
    }
    if (command_.empty())
      throw_usage("no program to profile", "give it after --, e.g. roofline profile -- python3 train.py");
    if (pm_interval_us_ > 0 && !pm_sampling_) throw_usage("--pm-interval needs --pm-sampling");
    if (pm_interval_us_ > 0 && pm_interval_us_ * 1e3 < static_cast<double>(prof::kMinPmIntervalNs))
      throw_usage(fmt::format("--pm-interval {} us is shorter than PM sampling keeps up with: at 10-50 us the "
                              "hardware buffer overflowed after 1,000-5,000 samples, leaving most of the run unsampled",
                              pm_interval_us_),
                  fmt::format("use --pm-interval {} or more", prof::kMinPmIntervalNs / 1000));
    if ((counters_limit_ >= 0 || !metrics_.empty()) && !counters_)
      throw_usage("--counters-limit and --metrics need --counters");
    if (pm_sampling_ && counters_)
      throw_usage("--counters and --pm-sampling read the same counter hardware and cannot run together",
                  "profile once with --pm-sampling and once with --counters");
    if (counters_ && capture.active())
      throw_usage("--counters cannot be combined with a capture range (--delay, --duration, --capture-range): it "
                  "measures the first launches of each kernel wherever they fall",
                  "profile the range without --counters, and measure counters in a run of their own");
    if (!trace_.empty()) prof::check_trace_path(trace_);  // before the program runs, not after it
    std::string lib = prof::find_inject_library();
    prof::find_program(command_[0]);  // a clear error before anything starts
    OutputDir dir(output_dir_);

    prof::LaunchOptions lo;
    lo.argv = command_;
    lo.inject_library = lib;
    lo.stdout_to_stderr = !ctx.interactive() && (ctx.options().json || ctx.options().csv);
    prof::InjectionConfig& cfg = lo.config;
    cfg.out_dir = dir.path();
    cfg.trace = !trace_.empty();
    cfg.trace_limit = trace_limit_;
    cfg.device = device_;
    cfg.pm_sampling = pm_sampling_;
    if (pm_interval_us_ > 0) cfg.pm_interval_ns = static_cast<std::uint64_t>(pm_interval_us_ * 1e3);
    cfg.counters = counters_;
    if (counters_limit_ >= 0)
      cfg.counters_limit = static_cast<std::uint32_t>(
          std::min<std::int64_t>(counters_limit_, std::numeric_limits<std::uint32_t>::max()));
    cfg.metrics = metrics_;
    cfg.capture_range = capture.range_text();
    cfg.delay_ns = capture.delay_ns;
    cfg.duration_ns = capture.duration_ns;
    ctx.status(fmt::format("roofline: profiling {}", join(command_, " ")));
    prof::LaunchResult lr = prof::run_profiled(lo);
    exit_code_ = lr.exit_code;
    std::string ended =
        (starts_with(lr.status, "killed") ? "was " : "") + lr.status;  // "the program was killed by ..."
    ctx.status(fmt::format("roofline: the program {} after {:.2f} s", ended, lr.wall_s));

    prof::CollectedProfiles c = prof::collect_profiles(dir.path(), lr.pid);
    prof::ProfileData& p = c.merged;
    p.command = join(command_, " ");
    p.exit_status = lr.status;
    p.exit_code = lr.exit_code;
    p.wall_ns = lr.wall_s * 1e9;
    p.pid = lr.pid;
    if (c.files == 0) p.complete = true;  // nothing was lost: nothing was there
    prof::fill_demangled(p);
    if (p.has_gpu_activity() && p.diagnoses.empty()) p.diagnoses = prof::diagnose(p);
    // The tables first: the profile's own warnings (from CUPTI) lead the list.
    prof::add_profile_tables(r, p, opt_);

    for (const auto& n : lr.notes) r.info(n);
    for (const auto& w : c.warnings) r.warn(w);
    if (c.files == 0) {
      std::string why = "the program never initialised CUDA (the profiler attaches when CUDA starts, in cuInit)";
      if (cuda::gpu_count() == 0) why += "; this machine has no usable GPU: " + cuda::gpu_unavailable_reason();
      r.warn("no GPU activity was seen: " + why);
    } else if (!p.has_gpu_activity() && !p.capture.active()) {  // with a capture range, the summary says why
      bool cupti_failed = false;
      for (const auto& w : p.warnings) cupti_failed |= contains(w, "CUPTI") || contains(w, "another profiler");
      if (cupti_failed)
        r.warn(
            "no GPU activity could be recorded: the profiler could not use CUPTI in the program (see the warning "
            "above)");
      else
        r.warn("no kernels or memory copies were seen: the program initialised CUDA but ran no GPU work" +
               std::string(cuda::gpu_count() == 0
                               ? " (this machine has no usable GPU: " + cuda::gpu_unavailable_reason() + ")"
                               : ""));
    }
    if (lr.signal != 0) r.warn(fmt::format("the program {}: the profile holds what was collected up to then", ended));

    if (!trace_.empty()) {
      prof::ChromeTraceResult t = prof::write_chrome_trace(
          c.trace_files, trace_, trace_limit_ * std::max<size_t>(1, c.trace_files.size()), p.devices);
      r.info(fmt::format("trace: {} events in {} ({}{}; open it in https://ui.perfetto.dev or chrome://tracing)",
                         t.events, trace_, format_bytes(double(t.bytes)), t.compressed ? ", gzip" : ""));
      if (!t.compressed && t.bytes > (std::uint64_t{64} << 20))
        r.warn(fmt::format("the trace is {} of JSON: name it {}.gz to write it gzip-compressed (about a tenth of "
                           "the size; Perfetto opens it as it is)",
                           format_bytes(double(t.bytes)), trace_));
      if (t.truncated) r.warn(fmt::format("the trace stopped at {} events (--trace-limit)", t.events));
      if (t.bad_lines)
        r.warn(fmt::format("{} trace lines were cut short (a killed process) and left out", t.bad_lines));
    }

    if (ctx.stores()) {
      std::int64_t id = prof::store_profile(ctx.db(), ctx.run_id(), p, opt_.label);
      // The GPUs the program used, with their sheets, when this machine can describe them.
      if (cuda::gpu_count() > 0)
        for (size_t i = 0; i < p.devices.size() && static_cast<int>(i) < cuda::gpu_count(); ++i)
          if (!p.devices[i].empty()) ctx.gpu_device_id(static_cast<int>(i));
      r.info(fmt::format("stored as profile {} (roofline profile --show {})", id, id));
    }
    if (lr.exit_code != 0) r.info(fmt::format("the program {}: roofline exits with code {} too", ended, lr.exit_code));
    return r;
  }

 private:
  // The capture range the options ask for; a usage error for values out of
  // range and for combinations that mean nothing.
  prof::CaptureSpec check_capture() const {
    const bool given = delay_s_ >= 0 || duration_s_ > 0 || capture_opt_->count() > 0;
    if (given && (show_ > 0 || !load_.empty()))
      throw_usage("--delay, --duration and --capture-range choose what to capture of a program roofline runs, not of "
                  "a profile it prints (--show, --load)",
                  "drop them: a stored profile keeps the capture range it was taken with");
    prof::CaptureSpec spec;
    if (capture_opt_->count() > 0) {
      if (std::string why = prof::CaptureSpec::problem(capture_range_); !why.empty())
        throw_usage("--capture-range: " + why,
                    "--capture-range cuda-profiler-api (between cudaProfilerStart and cudaProfilerStop) or "
                    "--capture-range nvtx:NAME (inside NVTX ranges named NAME)");
      spec = *prof::CaptureSpec::parse_range(capture_range_);
    }
    const double max_s = static_cast<double>(prof::kMaxCaptureNs) * 1e-9;
    for (auto [name, v] : {std::pair{"--delay", delay_s_}, std::pair{"--duration", duration_s_}})
      if (v > max_s)
        throw_usage(fmt::format("{} {} s is longer than roofline accepts ({:.0f} s, 11.6 days)", name, v, max_s),
                    fmt::format("give {} in seconds, at most {:.0f}", name, max_s));
    if (delay_s_ > 0) spec.delay_ns = static_cast<std::uint64_t>(std::llround(delay_s_ * 1e9));
    if (duration_s_ > 0)
      spec.duration_ns = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::llround(duration_s_ * 1e9)));
    return spec;
  }

  std::vector<std::string> command_;
  prof::SummaryOptions opt_;
  std::string trace_, output_dir_, load_;
  std::uint64_t trace_limit_ = 1'000'000;
  bool pm_sampling_ = false, counters_ = false;
  double pm_interval_us_ = 0;
  std::int64_t counters_limit_ = -1;  // -1: not given
  std::vector<std::string> metrics_;
  int device_ = 0;
  std::int64_t show_ = 0;
  double delay_s_ = -1, duration_s_ = 0;  // -1, 0: not given
  std::string capture_range_;
  CLI::Option* capture_opt_ = nullptr;
  int exit_code_ = 0;
};

ROOFLINE_COMMAND(ProfileCommand)

}  // namespace roofline::cli

// roofline sweep: seed 004's arithmetic-intensity sweep on the CPU and GPUs,
// with the seed's kernel and an overlapped one, each point held against this
// device's measured roofline for its mix.
#include <cctype>
#include <charconv>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "src/cli/command.hpp"
#include "roofline/ceilings/cpu_ceilings.hpp"
#include "roofline/measure/figure.hpp"
#include "roofline/ceilings/gpu_ceilings.hpp"
#include "roofline/sweep/sweep.hpp"
#include "roofline/sweep/roof.hpp"
#include "roofline/sweep/sass.hpp"
#include "roofline/core/error.hpp"
#include "roofline/core/stats.hpp"
#include "roofline/core/strings.hpp"
#include "roofline/cuda/runtime.hpp"
#include "roofline/hardware/cpu_info.hpp"
#include "roofline/hardware/datasheet.hpp"
#include "roofline/hardware/gpu_info.hpp"
#include "roofline/store/results.hpp"

namespace roofline::cli {

namespace sw = sweep;

namespace {

std::vector<std::int64_t> parse_k(const std::string& s) {
  std::vector<std::int64_t> out;
  for (const auto& part : split(s, ',')) {
    std::string t = trim(part);
    std::int64_t v = 0;
    auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (t.empty() || ec != std::errc() || p != t.data() + t.size())
      throw_usage(fmt::format("k must be a positive integer (the number of polynomial terms), got '{}'", t),
                  "use --k with comma-separated whole numbers, e.g. --k 1,2,5,10,20,50");
    out.push_back(v);
  }
  if (out.empty()) throw_usage("--k is empty", "use --k with comma-separated whole numbers, e.g. --k 1,10,100");
  return out;
}

std::int64_t parse_n(const std::string& s) {
  std::string t = trim(s);
  if (!t.empty() && t[0] == '-')
    throw_usage(fmt::format("n must be a positive number of elements, got '{}'", s),
                "use --n with a positive count, e.g. --n 67108864 or --n 64M (2^26, the lecture's size)");
  std::uint64_t v = 0;
  try {
    v = parse_size(t, "n");
  } catch (const Error&) {
    throw_usage(fmt::format("n must be a whole number of elements (K, M, G suffixes allowed), got '{}'", s),
                "use e.g. --n 67108864 or --n 64M (2^26, the lecture's size)");
  }
  if (v > static_cast<std::uint64_t>(INT64_MAX / 64))
    throw_usage(fmt::format("n = {} elements would need more memory than any machine has", s),
                "use a smaller --n, e.g. --n 64M (the lecture's 2^26)");
  return static_cast<std::int64_t>(v);
}

std::string slug(std::string s) {
  for (auto& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '-';
  return s;
}

struct GpuFacts {
  int sms = 0;
  double bytes_in_flight = 0;  // dram.bytes_in_flight (B), 0 when not stored
  double latency_s = 0;        // dram.latency
};

struct Series {
  std::string device;  // "cpu", "gpu:0"
  sw::Variant variant;
  sw::Kernel kernel;
  std::vector<sw::Point> points;
};

// Ceilings from the store that only explain (Little's law), 0 when absent.
double stored_value(store::Db& db, const std::string& device_name, const std::string& name) {
  auto v = store::latest_measurement(db, device_name, name);
  return v ? v->value : 0.0;
}

}  // namespace

class SweepCommand : public Command {
 public:
  const char* name() const override { return "sweep"; }
  const char* summary() const override {
    return "arithmetic-intensity sweep (a polynomial of k terms per element) held against this device's roofline";
  }
  void configure(CLI::App& sub) override {
    sub.add_option("--device", device_, "cpu, gpu, gpu:N, all, or a comma-separated list")->default_val(device_);
    sub.add_option("--k", k_, "polynomial terms per element (comma-separated)")->default_val(k_);
    sub.add_option("--n", n_, "elements (K/M/G suffixes: 64M = 2^26, the lecture's size)")->default_val(n_);
    sub.add_option("--block", block_, "GPU threads per block (a multiple of 32, at most 1024)")->default_val(block_);
    sub.add_option("--variants", variants_, "fp32 (the lecture's loop), fma, fp64, fp16, bf16")->default_val(variants_);
    sub.add_option("--kernel", kernels_,
                   "GPU kernels, comma-separated: seed (the lecture's kernel as written, one element per thread), overlap (memory and "
                   "arithmetic at once), ws (warp-specialized: a producer warp bulk-copies, the others compute; "
                   "sm_90 and newer)")
        ->default_val(kernels_);
    sub.add_option("--runs", runs_, "timed runs per k")->check(whole_number(1, 1 << 20))->default_val(runs_);
    sub.add_option("--warmup", warmup_, "untimed runs per k")->check(whole_number(0, 1 << 20))->default_val(warmup_);
    sub.add_option("--csv-out", csv_out_,
                   "write the lecture's CSV (k,ai,gflops,bandwidth,percent_peak); with several devices, variants or "
                   "kernels, one file each, named FILE-<device>-<variant>-<kernel>.csv");
  }

  Report run(Invocation& ctx) override {
    sw::Options o;
    o.k = parse_k(k_);
    o.n = parse_n(n_);
    o.block = block_;
    o.runs = runs_;
    o.warmup = warmup_;
    sw::validate(o);
    auto vs = sw::parse_variants(variants_);
    auto ks = sw::parse_kernels(kernels_);
    DeviceChoice dc = parse_devices(device_);
    std::vector<int> gpus = resolve_gpus(dc);

    Report r("sweep");
    if (dc.all_gpus && gpus.empty() && dc.gpus.empty()) {
      if (!dc.cpu)
        throw Error(ErrorKind::Device, "no GPU to sweep: " + cuda::gpu_unavailable_reason(),
                    "run on a machine with an NVIDIA GPU, or use --device cpu");
      r.info("GPU sweep skipped: " + cuda::gpu_unavailable_reason());
    }
    std::vector<Series> all;
    if (dc.cpu) run_cpu(ctx, r, o, vs, all);
    for (int g : gpus) run_gpu(ctx, r, o, vs, ks, g, all);
    write_csv(r, all);
    fail_on_bad_outputs(all);
    return r;
  }

 private:
  void run_cpu(Invocation& ctx, Report& r, const sw::Options& o, const std::vector<sw::Variant>& vs,
               std::vector<Series>& all) {
    for (sw::Variant v : vs)
      if (v != sw::Variant::Fp16 && v != sw::Variant::Bf16) sw::check_cpu_memory(v, o);  // before measuring anything
    hw::CpuInfo cpu = hw::query_cpu();
    auto& db = ctx.db();
    model::Roofline measured = measure::load_measured_roofline(db, cpu.model_name);
    std::vector<std::string> missing;
    for (const auto& id : sw::cpu_ceilings_needed(vs))
      if (!measured.find(id, model::Source::Measured)) missing.push_back(id);
    if (!missing.empty()) {
      // The sweep needs these to say how close it comes; a quick measurement
      // now is better than none (and is stored like any other ceiling).
      r.info(fmt::format("no {} stored for this CPU: measured now (quick); `roofline ceilings --device cpu` measures "
                         "the full set",
                         join(missing, ", ")));
      ceilings::CeilingOptions co;
      co.quick = true;
      co.measure = measure::MeasureOptions::quick();
      co.only = missing;
      (void)ceilings::measure_cpu_ceilings(
          co, [&](const std::string& s) { ctx.status(s); },
          [&](const measure::Figure& f) { measure::store_figure(db, ctx.run_id(), ctx.cpu_device_id(), "ceiling", f); });
      measured = measure::load_measured_roofline(db, cpu.model_name);
    }
    for (sw::Variant v : vs) {
      const auto& vi = sw::info(v);
      if (v == sw::Variant::Fp16 || v == sw::Variant::Bf16) {
        r.warn(fmt::format("CPU: no {} variant (the CPU path does no half-precision arithmetic); skipped", vi.name));
        continue;
      }
      ctx.status(fmt::format("CPU sweep {} over n = {}, k = {}", vi.name, o.n, join_k(o.k)));
      auto pts = sw::run_cpu(v, o, [&](const std::string& s) { ctx.status("  " + s); });
      sw::Roof roof = sw::cpu_roof(v, measured);
      sw::MixVerdict mix;
      mix.text = fmt::format("CPU: {} per term, compiled with the widest SIMD present; held against {}", vi.mix,
                             roof.peak_source);
      finish_series(ctx, r, o, "cpu", cpu.model_name, ctx.cpu_device_id(), v, sw::Kernel::Cpu, pts, roof, mix, {},
                    all);
    }
  }

  // The GPU ceilings the predictions need, measured now (quick) when the store
  // lacks them: the mix's own rate is not something to guess from the FMA rate.
  void ensure_gpu_ceilings(Invocation& ctx, Report& r, int g, const hw::GpuInfo& gpu,
                           const std::vector<sw::Variant>& vs) {
    model::Roofline measured = measure::load_measured_roofline(ctx.db(), gpu.name);
    std::vector<std::string> missing, only;
    for (const auto& id : sw::gpu_ceilings_needed(vs))
      if (!measured.find(id, model::Source::Measured)) missing.push_back(id);
    for (const char* id : {"dram.bytes_in_flight", "dram.latency"})  // for the Little's law notes
      if (stored_value(ctx.db(), gpu.name, id) <= 0) missing.push_back(id);
    if (missing.empty()) return;
    bool dram = false;
    for (const auto& id : missing) {
      if (starts_with(id, "dram.")) dram = true;
      else only.push_back(id);
    }
    if (dram) only.push_back("dram.");  // bytes in flight come from the bandwidths and the latency of one pass
    r.info(fmt::format("GPU {}: no {} stored: measured now (quick); `roofline ceilings --device gpu` measures the full "
                       "set",
                       g, join(missing, ", ")));
    ceilings::CeilingOptions co;
    co.quick = true;
    co.measure = measure::MeasureOptions::quick();
    co.only = only;
    auto sink = [&ctx, g](const measure::Figure& f) {
      measure::store_figure(ctx.db(), ctx.run_id(), ctx.gpu_device_id(g), "ceiling", f);
    };
    ceilings::GpuCeilingsResult res = ceilings::run_gpu_ceilings(g, co, [&](const std::string& s) { ctx.status(s); }, sink);
    for (const auto& f : res.failures)
      r.warn(fmt::format("GPU {}: {} could not be measured ({}): the predictions that need it say so", g, f.name,
                         f.what));
  }

  void run_gpu(Invocation& ctx, Report& r, const sw::Options& o, const std::vector<sw::Variant>& vs,
               const std::vector<sw::Kernel>& ks, int g, std::vector<Series>& all) {
    // Before any CUDA work: the run-time SASS check may start cuobjdump.
    const sw::SassCheck& sass = sw::sweep_sass();
    hw::GpuInfo gpu = hw::query_gpu(g);
    std::string arch = sw::sm_arch(gpu.cc_major, gpu.cc_minor);
    for (sw::Variant v : vs)  // bad sizes are usage errors before anything is measured
      for (sw::Kernel k : ks) sw::check_gpu_fit(g, v, k, o);
    ensure_gpu_ceilings(ctx, r, g, gpu, vs);
    model::Roofline measured = measure::load_measured_roofline(ctx.db(), gpu.name);
    model::Roofline reference = hw::reference_roofline(gpu);
    GpuFacts facts;
    facts.sms = gpu.sms;
    facts.bytes_in_flight = stored_value(ctx.db(), gpu.name, "dram.bytes_in_flight");
    facts.latency_s = stored_value(ctx.db(), gpu.name, "dram.latency");
    std::int64_t dev_id = ctx.gpu_device_id(g);
    for (sw::Variant v : vs)
      for (sw::Kernel k : ks) {
        const auto& vi = sw::info(v);
        const char* kn = sw::info(k).name;
        ctx.status(fmt::format("GPU {} sweep {} ({} kernel) over n = {}, k = {}{}", g, vi.name, kn, o.n, join_k(o.k),
                               k == sw::Kernel::Seed ? fmt::format(", block {}", o.block) : std::string()));
        auto pts = sw::run_gpu(g, v, k, o, [&](const std::string& s) { ctx.status("  " + s); });
        std::vector<double> clocks;
        for (const auto& p : pts)
          if (p.clock_mhz > 0) clocks.push_back(p.clock_mhz);
        double clock = clocks.empty() ? 0 : summarize(clocks).median;
        sw::MixVerdict mix = sw::mix_verdict(v, k, sass, arch);
        sw::Roof roof = sw::gpu_roof(v, measured, reference, mix, gpu, clock);
        finish_series(ctx, r, o, fmt::format("gpu:{}", g), gpu.name, dev_id, v, k, pts, roof, mix, facts, all);
      }
    if (!sass.done) r.warn("SASS check not done: " + sass.why_not);
    else r.info("SASS read " + sass.source);
  }

  static std::string join_k(const std::vector<std::int64_t>& k) {
    std::vector<std::string> s;
    for (auto v : k) s.push_back(std::to_string(v));
    return join(s, ",");
  }

  void finish_series(Invocation& ctx, Report& r, const sw::Options& o, const std::string& device,
                     const std::string& device_name, std::int64_t dev_id, sw::Variant v, sw::Kernel kernel,
                     std::vector<sw::Point>& pts, const sw::Roof& roof, const sw::MixVerdict& mix,
                     const GpuFacts& facts, std::vector<Series>& all) {
    const auto& vi = sw::info(v);
    const auto& ki = sw::info(kernel);
    const bool overlap = kernel == sw::Kernel::Overlap || kernel == sw::Kernel::Ws;
    Table& t = r.add(Table(fmt::format("sweep.{}.{}.{}", device, vi.name, ki.name),
                           fmt::format("{} sweep, {} kernel, on {} ({}), n = {}", vi.name, ki.name, device_name, device,
                                       o.n)));
    t.col("k", "k")
        .col("ai", "AI", "FLOP/B", 3)
        .col("gflops", "GFLOP/s", "", 2)
        .col("bandwidth", "Bandwidth", "GB/s", 2)
        .col("percent_peak", "% peak", "", 2)
        .col("predicted", "Predicted", "GFLOP/s", 2)
        .col("ratio", "Ratio", "", 3)
        .col("t_mem_us", "t_mem", "us", 1)
        .col("t_comp_us", "t_comp", "us", 1)
        .col("no_overlap", "No overlap", "GFLOP/s", 2)
        .col("mean_ms", "Mean", "ms", 4)
        .col("median_ms", "Median", "ms", 4)
        .col("rms_pct", "RMS", "%", 2)
        .col("clock", "SM clock", "MHz", 0)
        .col("check", "Check")
        .col("flag", "Flag");
    std::vector<std::string> low;
    for (auto& p : pts) {
      sw::finish_point(p, roof);
      std::string check = p.check.ok() ? fmt::format("ok ({} outputs)", p.check.checked)
                                       : fmt::format("FAILED: {} mismatches, {} non-finite", p.check.mismatches,
                                                     p.check.nonfinite);
      std::vector<std::string> flags;
      if (p.low()) flags.push_back("< 0.9 of predicted");
      else if (p.ratio > 1.1) flags.push_back("> 1.1 of predicted");
      if (!p.on_target()) low.push_back(fmt::format("{} ({:.2f})", p.k, p.ratio));
      if (p.rms_warning(o.rms_warn_pct)) {
        flags.push_back(fmt::format("RMS > {:.0f}%", o.rms_warn_pct));
        r.warn(fmt::format("{} {} ({} kernel) k={}: RMS={:.2f}% > {:.1f}% (timing noise: other work on the device, "
                           "clocks changing)",
                           device, vi.name, ki.name, p.k, p.timing.rms_pct, o.rms_warn_pct));
      }
      t.row({p.k, p.ai, p.gflops, p.bandwidth, p.percent_peak, p.predicted_gflops, p.ratio, p.t_mem_s * 1e6,
             p.t_comp_s * 1e6, p.no_overlap_gflops, p.timing.mean_s * 1e3, p.timing.median_s * 1e3, p.timing.rms_pct,
             p.clock_mhz, check, join(flags, "; ")});
      measure::store_figure(ctx.db(), ctx.run_id(), dev_id, "sweep", sw::to_figure(p, roof));
    }
    t.note(vi.formula);
    t.note(std::string(ki.name) + " kernel: " + ki.description);
    t.note(fmt::format("FLOPs = 2k per element; bytes = {} per element (one {}-byte read, one write): AI = {}",
                       vi.bytes_per_element(), vi.element_bytes,
                       vi.element_bytes == 8 ? "k/8" : vi.element_bytes == 4 ? "k/4" : "k/2"));
    t.note(mix.text);
    t.note("peak for this mix: " + roof.peak_source);
    t.note("bandwidth: " + roof.bandwidth_source);
    t.note("predicted = min(peak for this mix, AI x bandwidth) = the time max(t_mem, t_comp); ratio = achieved / "
           "predicted (target: 0.9 to 1.1); no overlap = FLOPs / (t_mem + t_comp), what a kernel reaches when its "
           "memory and arithmetic take turns");
    if (kernel == sw::Kernel::Seed) {
      // Why the seed's kernel falls short: the two times add up, and too few
      // loads are in flight for DRAM.
      if (auto note = sw::no_overlap_note(pts); !note.empty()) t.note("no overlap (seed): " + note);
      if (!pts.empty() && facts.sms > 0) {
        const sw::Point& lo = pts.front();
        const double reads = lo.timing.mean_s > 0 ? lo.n * vi.element_bytes / lo.timing.mean_s : 0;
        t.note(sw::in_flight("seed kernel", lo.bytes_in_flight_per_sm, lo.resident_threads_per_sm, facts.sms,
                             facts.bytes_in_flight, facts.latency_s, reads, lo.k)
                   .text);
      }
    } else if (overlap && !pts.empty() && facts.sms > 0) {
      const sw::Point& lo = pts.front();
      const double reads = lo.timing.mean_s > 0 ? lo.n * vi.element_bytes / lo.timing.mean_s : 0;
      t.note(sw::in_flight(fmt::format("{} kernel", ki.name), lo.bytes_in_flight_per_sm, lo.resident_threads_per_sm, facts.sms,
                           facts.bytes_in_flight, facts.latency_s, reads, lo.k)
                 .text);
    }
    if (!roof.peak_measured || !roof.bandwidth_measured)
      r.warn(fmt::format("{} {}: percent of peak and predictions do not use this device's measured ceiling for the "
                         "mix ({}) or dram.copy (see the table's notes); run `roofline ceilings --device {}` first",
                         device, vi.name, roof.peak_id.empty() ? vi.mix_ceiling : roof.peak_id,
                         device == "cpu" ? "cpu" : "gpu"));
    if (!low.empty()) {
      std::string line = fmt::format("{} {} ({} kernel): outside 0.9-1.1 of predicted at k = {}", device, vi.name,
                                     ki.name, join(low, ", "));
      // The seed's kernel is the reference the course measured: its shortfall
      // is the finding (explained in the notes), not a defect of this tool.
      if (kernel == sw::Kernel::Seed) r.info(line + " (the lecture's kernel: see the table's notes for why)");
      else r.warn(line);
    }
    all.push_back({device, v, kernel, pts});
  }

  void write_csv(Report& r, const std::vector<Series>& all) {
    if (csv_out_.empty() || all.empty()) return;
    std::filesystem::path base(csv_out_);
    for (const auto& s : all) {
      std::filesystem::path p = base;
      if (all.size() > 1)
        p = base.parent_path() / (base.stem().string() + "-" + slug(s.device) + "-" + sw::info(s.variant).name + "-" +
                                  sw::info(s.kernel).name + base.extension().string());
      std::ofstream f(p);
      f << sw::to_csv(s.points);
      if (!f)
        throw Error(ErrorKind::Input, fmt::format("could not write {}", p.string()),
                    "check that the folder exists and is writable, or use another --csv-out");
      r.info("wrote " + p.string());
    }
  }

  static void fail_on_bad_outputs(const std::vector<Series>& all) {
    std::vector<std::string> bad;
    for (const auto& s : all)
      for (const auto& p : s.points)
        if (!p.check.ok())
          bad.push_back(fmt::format("{} {} ({} kernel) k={}: {} of {} sampled outputs differ from the host ({}), {} "
                                    "non-finite outputs",
                                    s.device, sw::info(s.variant).name, sw::info(s.kernel).name, p.k,
                                    p.check.mismatches, p.check.checked,
                                    p.check.first_mismatch.empty() ? "-" : p.check.first_mismatch, p.check.nonfinite));
    if (!bad.empty())
      throw Error(ErrorKind::Numeric, "sweep outputs are wrong: " + join(bad, "; "),
                  "this is a bug in the sweep kernels or the build: please report it with this output "
                  "(the timings were stored, marked with the failed check)");
  }

  std::string device_ = "all";
  std::string k_ = "1,2,5,10,20,50,100,200,500,1000";
  std::string n_ = "67108864";
  int block_ = 256;
  std::string variants_ = "fp32";
  std::string kernels_ = "seed,overlap";
  int runs_ = 10;
  int warmup_ = 3;
  std::string csv_out_;
};

ROOFLINE_COMMAND(SweepCommand)

}  // namespace roofline::cli

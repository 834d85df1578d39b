// roofline ceilings: measure what each device allows (bandwidths, FLOP rates,
// latencies), compare each figure with the datasheet (or a figure derived from
// the device at the measured clock), and store every figure as it is measured.
#include <fmt/format.h>

#include <cmath>
#include <optional>

#include "src/cli/command.hpp"
#include "roofline/ceilings/cpu_ceilings.hpp"
#include "roofline/measure/figure.hpp"
#include "roofline/ceilings/gpu_ceilings.hpp"
#include "roofline/core/strings.hpp"
#include "roofline/cuda/runtime.hpp"

namespace roofline::cli {

namespace {

using measure::Figure;
using ceilings::FigureFailure;

// A rate in the units people read it in: TB/s, TFLOP/s (GB/s, GFLOP/s below 0.1 T).
struct Scaled {
  double factor;
  std::string unit;
};
Scaled scale_of(const Figure& f) {
  const bool big = f.value >= 1e11;
  if (f.unit == "B/s") return big ? Scaled{1e-12, "TB/s"} : Scaled{1e-9, "GB/s"};
  if (f.unit == "FLOP/s") return big ? Scaled{1e-12, "TFLOP/s"} : Scaled{1e-9, "GFLOP/s"};
  if (f.unit == "OP/s") return big ? Scaled{1e-12, "TOP/s"} : Scaled{1e-9, "GOP/s"};
  if (f.unit == "s") {
    if (f.value < 1e-6) return {1e9, "ns"};
    if (f.value < 1e-3) return {1e6, "\xC2\xB5s"};
    return {1e3, "ms"};
  }
  if (f.unit == "B") return f.value >= (1 << 20) ? Scaled{1.0 / (1 << 20), "MiB"} : Scaled{1.0 / 1024, "KiB"};
  return {1.0, f.unit};
}

Cell opt(std::optional<double> v) { return v ? Cell(*v) : Cell(std::monostate{}); }

std::optional<double> param(const Figure& f, const char* key) {
  if (f.params.is_object() && f.params.contains(key) && f.params[key].is_number()) return f.params[key].get<double>();
  return std::nullopt;
}

std::string short_source(const std::string& label) {
  if (label.empty()) return "";
  if (starts_with(label, "datasheet")) return "datasheet";
  if (starts_with(label, "derived")) return "derived";
  return label;
}

Cell throttled_cell(const measure::Measurement& m) {
  if (m.samples.empty()) return std::monostate{};
  return fmt::format("{}/{}", m.throttled_count, m.samples.size());
}

Cell clock_cell(const measure::Measurement& m) {
  return m.clock_median_mhz > 0 ? Cell(m.clock_median_mhz) : Cell(std::monostate{});
}

bool is_rate(const Figure& f) { return f.unit == "B/s" || f.unit == "FLOP/s" || f.unit == "OP/s"; }

// Ceilings (rates) of one device, one row per figure, failures included.
Table rate_table(const std::string& id, const std::string& title, const std::vector<Figure>& figures,
                 const std::vector<FigureFailure>& failures) {
  Table t(id, title);
  t.col("ceiling", "Ceiling")
      .col("measured", "Measured")
      .col("unit", "Unit")
      .col("reference", "Theoretical")
      .col("reference_source", "Source")
      .col("pct_reference", "% of it", "", 1)
      .col("pct_peak_at_clock", "% of peak @clock", "", 1)
      .col("median_ms", "Median", "ms")
      .col("spread_pct", "IQR/median", "%", 2)
      .col("samples", "n")
      .col("clock_mhz", "Clock", "MHz", 0)
      .col("throttled", "Throttled")
      .col("method", "Method", "", -1, 60);
  for (const Figure& f : figures) {
    if (!is_rate(f)) continue;
    const Scaled sc = scale_of(f);
    std::optional<double> ref, pct_ref, pct_clock;
    if (f.reference && *f.reference > 0) {
      ref = *f.reference * sc.factor;
      pct_ref = 100.0 * f.value / *f.reference;
    }
    if (auto p = param(f, "peak_at_clock"); p && *p > 0) pct_clock = 100.0 * f.value / *p;
    const auto& m = f.measurement;
    const bool timed = !m.samples.empty();
    t.row({f.name, f.value * sc.factor, sc.unit, opt(ref), short_source(f.reference_label), opt(pct_ref),
           opt(pct_clock), timed ? Cell(m.time.median * 1e3) : Cell(std::monostate{}),
           timed ? Cell(100.0 * m.time.rel_iqr()) : Cell(std::monostate{}),
           timed ? Cell(static_cast<std::int64_t>(m.samples.size())) : Cell(std::monostate{}), clock_cell(m),
           throttled_cell(m), f.method});
  }
  for (const FigureFailure& f : failures)
    t.row({f.name, std::monostate{}, std::monostate{}, std::monostate{}, std::monostate{}, std::monostate{},
           std::monostate{}, std::monostate{}, std::monostate{}, std::monostate{}, std::monostate{}, std::monostate{},
           "FAILED: " + f.what});
  return t;
}

// Latencies (s) and Little's law (B) of one device.
Table latency_table(const std::string& id, const std::string& title, const std::vector<Figure>& figures) {
  Table t(id, title);
  t.col("figure", "Figure")
      .col("value", "Value")
      .col("unit", "Unit")
      .col("cycles", "SM cycles", "", 0)
      .col("per_sm", "Per SM", "KiB", 1)
      .col("spread_pct", "IQR/median", "%", 2)
      .col("samples", "n")
      .col("clock_mhz", "Clock", "MHz", 0)
      .col("method", "Method", "", -1, 80);
  for (const Figure& f : figures) {
    if (is_rate(f)) continue;
    const Scaled sc = scale_of(f);
    const auto& m = f.measurement;
    const bool timed = !m.samples.empty();
    std::optional<double> cycles = param(f, "cycles_per_hop");
    if (!cycles && f.unit == "s" && m.clock_median_mhz > 0) cycles = f.value * m.clock_median_mhz * 1e6;
    std::optional<double> per_sm = param(f, "per_sm");
    if (per_sm) *per_sm /= 1024.0;
    t.row({f.name, f.value * sc.factor, sc.unit, opt(cycles), opt(per_sm),
           timed ? Cell(100.0 * m.time.rel_iqr()) : Cell(std::monostate{}),
           timed ? Cell(static_cast<std::int64_t>(m.samples.size())) : Cell(std::monostate{}), clock_cell(m),
           f.method});
    for (const auto& n : f.notes) t.note(n);
  }
  return t;
}

bool has_latencies(const std::vector<Figure>& figures) {
  for (const auto& f : figures)
    if (!is_rate(f)) return true;
  return false;
}

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  for (const auto& p : split(s, ','))
    if (!trim(p).empty()) out.push_back(trim(p));
  return out;
}

}  // namespace

class CeilingsCommand : public Command {
 public:
  const char* name() const override { return "ceilings"; }
  const char* summary() const override {
    return "measure what the hardware allows: memory bandwidths, FLOP rates per precision, latencies";
  }
  void configure(CLI::App& sub) override {
    sub.add_option("--device", device_, "devices to measure: cpu, gpu (every GPU), gpu:N, all (comma-separated)")
        ->capture_default_str();
    sub.add_flag("--quick", quick_, "a short pass: smaller sizes, fewer samples (under a minute on an H100)");
    sub.add_option("--only", only_,
                   "measure only figures whose name starts with one of these prefixes, comma-separated "
                   "(e.g. dram,bf16.tensor,launch)");
  }

  Report run(Invocation& ctx) override {
    const DeviceChoice choice = parse_devices(device_);
    ceilings::CeilingOptions opts;
    opts.quick = quick_;
    opts.measure = quick_ ? measure::MeasureOptions::quick() : measure::MeasureOptions{};
    opts.only = split_list(only_);
    const std::vector<int> gpus = resolve_gpus(choice);  // throws for a named GPU that is absent
    const bool gpu_asked = choice.all_gpus || !choice.gpus.empty();
    if (gpu_asked && gpus.empty() && !choice.cpu)
      throw Error(ErrorKind::Device, "no GPU to measure: " + cuda::gpu_unavailable_reason(),
                  "run on a machine with an NVIDIA GPU and driver, or use --device cpu for the CPU ceilings");

    Report report("ceilings");
    auto progress = [&ctx](const std::string& line) { ctx.status(line); };
    int measured_parts = 0;
    std::vector<std::string> part_errors;
    std::optional<ErrorKind> first_kind;
    std::string first_hint;
    auto part_failed = [&](const std::string& part, const Error& e) {
      part_errors.push_back(fmt::format("{}: {}", part, e.what()));
      if (!first_kind) first_kind = e.kind(), first_hint = e.hint();
      report.warn(fmt::format("{} not measured: {}{}", part, e.what(), e.hint().empty() ? "" : " (" + e.hint() + ")"));
    };

    for (int g : gpus) {
      const std::string part = fmt::format("GPU {}", g);
      try {
        auto sink = [&ctx, g](const Figure& f) {
          measure::store_figure(ctx.db(), ctx.run_id(), ctx.gpu_device_id(g), "ceiling", f);
        };
        ceilings::GpuCeilingsResult r = ceilings::run_gpu_ceilings(g, opts, progress, sink);
        const std::string title = fmt::format("GPU {}: {}", g, r.device_name);
        Table& rates = report.add(rate_table(fmt::format("gpu{}.ceilings", g), title + ": ceilings", r.figures,
                                             r.failures));
        for (const auto& n : r.notes) rates.note(n);
        if (has_latencies(r.figures))
          report.add(latency_table(fmt::format("gpu{}.latency", g), title + ": latency and Little's law", r.figures));
        for (const auto& w : r.warnings) report.warn(fmt::format("{}: {}", part, w));
        for (const auto& f : r.failures)
          report.warn(fmt::format("{}: {} failed: {}{}", part, f.name, f.what, f.hint.empty() ? "" : " (" + f.hint + ")"));
        if (!r.figures.empty()) ++measured_parts;
        else if (!r.failures.empty()) {
          part_errors.push_back(fmt::format("{}: every figure failed, first {}: {}", part, r.failures[0].name,
                                            r.failures[0].what));
          if (!first_kind) first_kind = r.failures[0].kind;
        }
      } catch (const Error& e) {
        part_failed(part, e);
      }
    }
    if (gpu_asked && gpus.empty())
      report.info("GPU ceilings not measured: " + cuda::gpu_unavailable_reason());

    if (choice.cpu) {
      try {
        // Each figure is stored as it is measured: an interrupted run keeps them.
        auto sink = [&ctx](const Figure& f) {
          measure::store_figure(ctx.db(), ctx.run_id(), ctx.cpu_device_id(), "ceiling", f);
        };
        std::vector<Figure> figures = ceilings::measure_cpu_ceilings(opts, progress, sink);
        report.add(rate_table("cpu.ceilings", "CPU: ceilings", figures, {}));
        if (has_latencies(figures)) report.add(latency_table("cpu.latency", "CPU: latency", figures));
        if (!figures.empty()) ++measured_parts;
      } catch (const Error& e) {
        part_failed("CPU ceilings", e);
      }
    }

    if (measured_parts == 0 && part_errors.empty() && !opts.only.empty())
      throw_usage(fmt::format("--only {}: no figure of {} has a name that starts with it", only_,
                              choice.cpu && gpus.empty() ? "the CPU" : "these devices"),
                  "figure names are listed in docs/ceilings.md, e.g. dram, l2, fp32, bf16.tensor, launch (GPU) or "
                  "mem, cache, fp32.simd (CPU)");
    if (measured_parts == 0) {
      std::string what = "nothing was measured: " + join(part_errors, "; ");
      if (gpu_asked && gpus.empty()) what += "; GPU: " + cuda::gpu_unavailable_reason();
      throw Error(first_kind.value_or(ErrorKind::Device), what,
                  first_hint.empty() ? "`roofline ceilings --device cpu` or `--device gpu` measures one side" : first_hint);
    }
    return report;
  }

 private:
  std::string device_ = "all";
  bool quick_ = false;
  std::string only_;
};

ROOFLINE_COMMAND(CeilingsCommand)

}  // namespace roofline::cli

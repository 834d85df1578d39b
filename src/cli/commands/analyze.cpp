// roofline analyze: the main job. Describes this machine, measures its
// ceilings, runs the arithmetic-intensity sweep, draws the roofline charts,
// (and, as the engine lands, times the seed models) — all as one run in the
// store — and opens with a summary of what the hardware allows.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <optional>

#include "src/cli/command.hpp"
#include "roofline/measure/figure.hpp"
#include "roofline/core/error.hpp"
#include "roofline/core/strings.hpp"
#include "roofline/cuda/runtime.hpp"
#include "roofline/hardware/cpu_info.hpp"
#include "roofline/hardware/datasheet.hpp"
#include "roofline/hardware/gpu_info.hpp"
#include "roofline/model/roofline.hpp"
#include "roofline/report/run_page.hpp"
#include "roofline/store/results.hpp"

namespace roofline::cli {

namespace {

struct Step {
  std::string command;
  std::vector<std::string> args;
};

// One summary row per device and headline figure: the measured ceiling (by
// its exact name: the FMA rate, not an add+multiply mix) against the
// theoretical one.
void summarise(Table& t, const std::string& device, bool cpu, const model::Roofline& measured,
               const model::Roofline& reference) {
  struct Pick {
    const char* label;
    std::vector<std::string> ids;  // measured figures, the best of which is shown
    const char* precision;         // theoretical: compute(precision, unit), or memory(unit) when empty
    const char* unit;
  };
  const char* simd = cpu ? "simd" : "cuda";
  const std::vector<Pick> picks = {
      {"FP64 FMA", {cpu ? "fp64.simd" : "fp64.cuda"}, "fp64", simd},
      {"FP32 FMA", {cpu ? "fp32.simd" : "fp32.cuda"}, "fp32", simd},
      {"BF16 tensor cores (dense)", {"bf16.tensor"}, "bf16", "tensor"},
      {"DRAM bandwidth (best of read, copy)", {cpu ? "mem.read" : "dram.read", cpu ? "mem.copy" : "dram.copy"}, "",
       "dram"},
  };
  for (const auto& p : picks) {
    const model::Ceiling* m = nullptr;
    for (const auto& id : p.ids)
      if (const model::Ceiling* c = measured.find(id); c && (!m || c->value > m->value)) m = c;
    const model::Ceiling* r = *p.precision ? reference.compute(p.precision, p.unit) : reference.memory(p.unit);
    if (!m && !r) continue;
    bool bw = !*p.precision;
    double scale = bw ? 1e9 : 1e12;
    Cell mv = m ? Cell(m->value / scale) : Cell();
    Cell rv = r ? Cell(r->value / scale) : Cell();
    Cell pct = (m && r && r->value > 0) ? Cell(100.0 * m->value / r->value) : Cell();
    t.row({device, std::string(p.label), mv, rv, std::string(bw ? "GB/s" : "TFLOP/s"), pct,
           r ? std::string(model::to_string(r->source)) : std::string("-"), m ? m->note : std::string()});
  }
  const model::Ceiling* fp32 = measured.find(cpu ? "fp32.simd" : "fp32.cuda");
  const model::Ceiling* dram = measured.memory("dram");
  if (fp32 && dram && dram->value > 0)
    t.note(fmt::format("{}: ridge point (FP32 FMA over DRAM) at {:.1f} FLOP/byte: kernels below it are memory-bound",
                       device, model::ridge_point(fp32->value, dram->value)));
}

}  // namespace

class AnalyzeCommand : public Command {
 public:
  const char* name() const override { return "analyze"; }
  const char* summary() const override {
    return "the main job: spec sheet, measured ceilings, AI sweep, roofline charts and a quick benchmark of the small models";
  }
  void configure(CLI::App& sub) override {
    sub.add_option("--device", device_, "cpu, gpu, gpu:N or all")->default_val(device_);
    sub.add_option("--out", out_, "folder for the charts and index.html (the run as one page)")->default_val(out_);
    sub.add_flag("--full", full_, "full ceilings (minutes) instead of --quick");
    sub.add_flag("--all-tables", all_tables_,
                 "print every table (default: one screen: what this machine allows, where the small models sit, "
                 "and where the rest is: OUT/index.html, which has all of it, as have --json and the store)");
  }

  Report run(Invocation& ctx) override {
    DeviceChoice choice = parse_devices(device_);
    std::vector<int> gpus = resolve_gpus(choice);
    if (!choice.cpu && gpus.empty())
      throw Error(ErrorKind::Device, "no GPU to analyze: " + cuda::gpu_unavailable_reason(),
                  "run on a machine with an NVIDIA GPU and driver, or use --device cpu");
    std::vector<Step> steps = {{"device", {"--device", device_}}};
    std::vector<std::string> ceil = {"--device", device_};
    if (!full_) ceil.push_back("--quick");
    steps.push_back({"ceilings", ceil});
    steps.push_back({"sweep", {"--device", device_}});
    steps.push_back({"chart", {"--device", device_, "--out", out_}});
    // A quick version of the small models' benchmark (one short epoch each) on the
    // devices actually present, so a machine without a GPU still runs it.
    std::vector<std::string> bench_devices;
    if (choice.cpu) bench_devices.push_back("cpu");
    for (int g : gpus) bench_devices.push_back(fmt::format("gpu:{}", g));
    if (!bench_devices.empty())
      steps.push_back({"bench",
                       {"simple-mlp,simple-cnn", "--device", join(bench_devices, ","), "--batch", "64,128", "--epochs",
                        "1", "--max-steps", full_ ? "0" : "200", "--infer-reps", "50"}});

    Report out("analyze");
    Table sum("summary", "What this machine allows (measured against theoretical)");
    sum.col("device", "Device", "", -1, 28)
        .col("figure", "Figure")
        .col("measured", "Measured", "", 2)
        .col("theoretical", "Theoretical", "", 2)
        .col("unit", "Unit")
        .col("percent", "%", "", 1)
        .col("source", "Theoretical from")
        .col("method", "Measured by", "", -1, 60);
    std::vector<std::string> failed;
    std::optional<Error> first_failure;
    for (const auto& step : steps) {
      ctx.status(fmt::format("== roofline {} {}", step.command, join(step.args, " ")));
      try {
        out.append(run_subcommand(ctx, step.command, step.args));
      } catch (const Error& e) {
        // A failed step is reported and the rest still runs: the store keeps
        // what the earlier steps measured.
        if (e.kind() == ErrorKind::Internal || e.kind() == ErrorKind::Store) throw;
        out.warn(fmt::format("roofline {} failed: {}{}", step.command, e.what(),
                             e.hint().empty() ? "" : " (" + e.hint() + ")"));
        failed.push_back(fmt::format("{}: {}", step.command, e.what()));
        if (!first_failure) first_failure = e;
      }
    }
    // Nothing done is a failure, not a run that ends "ok" with warnings.
    if (failed.size() == steps.size())
      throw Error(first_failure->kind(), "every step of analyze failed: " + join(failed, "; "), first_failure->hint());
    if (choice.cpu) {
      hw::CpuInfo cpu = hw::query_cpu();
      summarise(sum, "CPU " + cpu.model_name, true, measure::load_measured_roofline(ctx.db(), cpu.model_name),
                hw::reference_roofline(cpu));
    }
    for (int g : gpus) {
      hw::GpuInfo gpu = hw::query_gpu(g);
      summarise(sum, fmt::format("GPU {} {}", g, gpu.name), false, measure::load_measured_roofline(ctx.db(), gpu.name),
                hw::reference_roofline(gpu));
    }
    if (gpus.empty() && (choice.all_gpus || !choice.gpus.empty()))
      sum.note("no GPU: " + cuda::gpu_unavailable_reason());
    // The summary first, then each step's tables in order.
    out.tables().insert(out.tables().begin(), std::move(sum));
    const std::string page = write_index(ctx, out);
    // One screen by default: what the hardware allows, where the charts are,
    // the small models on CPU and GPU; the rest is on the page.
    if (!all_tables_)
      out.set_brief({"summary", "charts", "table4.roofline"},
                    fmt::format("in {} (every table, linked to the charts) or with --all-tables", page));
    return out;
  }

 private:
  // OUT/index.html: this run's tables as one page, linked to the charts the
  // chart step wrote beside it (roofline report RUN_ID renders any run later).
  // Returns the page's path.
  std::string write_index(Invocation& ctx, Report& out) const {
    const std::string page = (std::filesystem::path(out_) / "index.html").string();
    std::optional<store::RunRow> run = store::find_run(ctx.db(), ctx.run_id());
    if (!run) return page;
    run->status.clear(), run->finished_at.clear();  // still running while the page is written
    std::vector<std::pair<std::string, std::string>> links;
    std::error_code ec;
    std::filesystem::create_directories(out_, ec);  // the chart step may have failed before making it
    for (const auto& e : std::filesystem::directory_iterator(out_, ec)) {
      const std::string f = e.path().filename().string();
      if (f.rfind("roofline-", 0) == 0 && e.path().extension() == ".html") links.push_back({f.substr(9, f.size() - 14), f});
    }
    std::sort(links.begin(), links.end());
    write_output_file(page, report::render_run_page(*run, to_json(out), links));
    out.info("the run as one page: " + page);
    return page;
  }

  std::string device_ = "all";
  std::string out_ = "roofline-report";
  bool full_ = false, all_tables_ = false;
};

ROOFLINE_COMMAND(AnalyzeCommand)

}  // namespace roofline::cli

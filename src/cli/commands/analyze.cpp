// roofline analyze: the main job. Describes this machine, measures its
// ceilings, runs the arithmetic-intensity sweep, draws the roofline charts,
// (and, as the engine lands, times the seed models) — all as one run in the
// store — and opens with a summary of what the hardware allows.
#include <fmt/format.h>

#include "command.hpp"
#include "roofline/bench/figure.hpp"
#include "roofline/core/error.hpp"
#include "roofline/core/strings.hpp"
#include "roofline/cuda/runtime.hpp"
#include "roofline/hardware/cpu_info.hpp"
#include "roofline/hardware/datasheet.hpp"
#include "roofline/hardware/gpu_info.hpp"
#include "roofline/model/roofline.hpp"

namespace roofline::cli {

namespace {

struct Step {
  std::string command;
  std::vector<std::string> args;
};

// One summary row per device: the measured roof against the theoretical one.
void summarise(Table& t, const std::string& device, const model::Roofline& measured,
               const model::Roofline& reference) {
  struct Pick {
    const char* label;
    const char* precision;  // empty for memory
    const char* unit;       // compute unit or memory level
  };
  static const Pick picks[] = {
      {"FP64 (CUDA cores / SIMD)", "fp64", ""},  {"FP32 (CUDA cores / SIMD)", "fp32", ""},
      {"BF16 tensor cores (dense)", "bf16", "tensor"}, {"DRAM bandwidth", "", "dram"},
  };
  for (const auto& p : picks) {
    const model::Ceiling* m = nullptr;
    const model::Ceiling* r = nullptr;
    if (*p.precision) {
      // Prefer the CUDA-core (or SIMD) figure for the plain precisions.
      std::string unit = *p.unit ? p.unit : (contains(device, "CPU") || contains(device, "cpu") ? "simd" : "cuda");
      m = measured.compute(p.precision, unit);
      r = reference.compute(p.precision, unit);
    } else {
      m = measured.memory(p.unit);
      r = reference.memory(p.unit);
    }
    if (!m && !r) continue;
    bool bw = !*p.precision;
    double scale = bw ? 1e9 : 1e12;
    Cell mv = m ? Cell(m->value / scale) : Cell();
    Cell rv = r ? Cell(r->value / scale) : Cell();
    Cell pct = (m && r && r->value > 0) ? Cell(100.0 * m->value / r->value) : Cell();
    t.row({device, std::string(p.label), mv, rv, std::string(bw ? "GB/s" : "TFLOP/s"), pct,
           r ? std::string(model::to_string(r->source)) : std::string("-"), m ? m->note : std::string()});
  }
  const model::Ceiling* fp32 = measured.compute("fp32");
  const model::Ceiling* dram = measured.memory("dram");
  if (fp32 && dram && dram->value > 0)
    t.note(fmt::format("{}: ridge point (FP32 over DRAM) at {:.1f} FLOP/byte: kernels below it are memory-bound",
                       device, model::ridge_point(fp32->value, dram->value)));
}

}  // namespace

class AnalyzeCommand : public Command {
 public:
  const char* name() const override { return "analyze"; }
  const char* summary() const override {
    return "the main job: spec sheet, measured ceilings, AI sweep and roofline charts of this machine";
  }
  void configure(CLI::App& sub) override {
    sub.add_option("--device", device_, "cpu, gpu, gpu:N or all")->default_val(device_);
    sub.add_option("--out", out_, "folder for the charts")->default_val(out_);
    sub.add_flag("--full", full_, "full ceilings (minutes) instead of --quick");
  }

  Report run(Context& ctx) override {
    DeviceChoice choice = parse_devices(device_);
    std::vector<int> gpus = resolve_gpus(choice);
    std::vector<Step> steps = {{"device", {"--device", device_}}};
    std::vector<std::string> ceil = {"--device", device_};
    if (!full_) ceil.push_back("--quick");
    steps.push_back({"ceilings", ceil});
    steps.push_back({"sweep", {"--device", device_}});
    steps.push_back({"chart", {"--device", device_, "--out", out_}});

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
    for (const auto& step : steps) {
      if (!Registry::create(step.command)) {
        out.warn(fmt::format("`roofline {}` is not part of this build: step skipped", step.command));
        continue;
      }
      ctx.status(fmt::format("== roofline {} {}", step.command, join(step.args, " ")));
      try {
        out.append(run_subcommand(ctx, step.command, step.args));
      } catch (const Error& e) {
        // A failed step is reported and the rest still runs: the store keeps
        // what the earlier steps measured.
        if (e.kind() == ErrorKind::Internal || e.kind() == ErrorKind::Store) throw;
        out.warn(fmt::format("roofline {} failed: {}{}", step.command, e.what(),
                             e.hint().empty() ? "" : " (" + e.hint() + ")"));
      }
    }
    if (choice.cpu) {
      hw::CpuInfo cpu = hw::query_cpu();
      summarise(sum, "CPU " + cpu.model_name, bench::load_measured_roofline(ctx.db(), cpu.model_name),
                hw::reference_roofline(cpu));
    }
    for (int g : gpus) {
      hw::GpuInfo gpu = hw::query_gpu(g);
      summarise(sum, fmt::format("GPU {} {}", g, gpu.name), bench::load_measured_roofline(ctx.db(), gpu.name),
                hw::reference_roofline(gpu));
    }
    if (gpus.empty() && (choice.all_gpus || !choice.gpus.empty()))
      sum.note("no GPU: " + cuda::gpu_unavailable_reason());
    // The summary first, then each step's tables in order.
    out.tables().insert(out.tables().begin(), std::move(sum));
    return out;
  }

 private:
  std::string device_ = "all";
  std::string out_ = "roofline-report";
  bool full_ = false;
};

ROOFLINE_COMMAND(AnalyzeCommand)

}  // namespace roofline::cli

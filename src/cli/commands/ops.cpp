// roofline ops: the op test harness (every op on every backend against the
// float64 reference), finite-difference gradient checks, and perf mode.
#include <fmt/format.h>

#include <iostream>

#include "src/cli/command.hpp"
#include "roofline/core/json_text.hpp"
#include "roofline/measure/figure.hpp"
#include "roofline/core/error.hpp"
#include "roofline/core/strings.hpp"
#include "roofline/cuda/runtime.hpp"
#include "roofline/engine/op_harness.hpp"
#include "roofline/hardware/cpu_info.hpp"
#include "roofline/hardware/gpu_info.hpp"
#include "roofline/model/roofline.hpp"
#include "roofline/store/results.hpp"

namespace roofline::cli {

using namespace roofline::engine;

class OpsCommand : public Command {
 public:
  const char* name() const override { return "ops"; }
  const char* summary() const override {
    return "check the engine's ops on every backend against a float64 reference, check gradients, or time them";
  }
  void configure(CLI::App& sub) override {
    sub.add_flag("--list", list_, "list the ops and their passes");
    sub.add_flag("--check", check_, "check every op on every backend (the default)");
    sub.add_flag("--grad", grad_, "finite-difference checks of the backward passes");
    sub.add_flag("--perf", perf_, "time every pass; GFLOP/s and GB/s from the op's own cost");
    sub.add_option("--device", device_, "cpu, gpu or cpu,gpu (cpu also runs the plain reference backend in --check)")
        ->capture_default_str();
    sub.add_option("--op", op_, "only this op (see --list)");
    sub.add_option("--cases", cases_, "random shapes per op in --check and --grad")
        ->check(whole_number(1))
        ->capture_default_str();
    sub.add_option("--batch", batch_, "--perf: the batch size of the model shapes")
        ->check(whole_number(1))
        ->capture_default_str();
    sub.add_option("--seed", seed_, "seed of the random shapes and values")->check(whole_number(0))->capture_default_str();
  }

  Report run(Invocation& ctx) override {
    Report r("ops");
    std::vector<std::string> ops = harness::op_names();
    if (!op_.empty()) {
      bool known = false;
      for (const auto& o : ops) known |= o == op_;
      if (!known) throw_usage(fmt::format("unknown op '{}'", op_), "known ops: " + join(ops, ", "));
      ops = {op_};
    }
    if (list_) {
      Table& t = r.add(Table("ops.list", "Ops"));
      t.col("op", "Op");
      for (const auto& o : ops) t.row({o});
      return r;
    }
    DeviceChoice dc = parse_devices(device_);
    std::vector<Backend> backends;
    if (dc.cpu) {
      if (!perf_) backends.push_back(Backend::CpuRef);
      backends.push_back(Backend::Cpu);
    }
    std::vector<int> gpus = resolve_gpus(dc);
    if ((dc.all_gpus || !dc.gpus.empty()) && gpus.empty()) {
      if (device_opt_given()) throw_device("no GPU available: " + cuda::gpu_unavailable_reason(), "use --device cpu");
      r.warn("no GPU here (" + cuda::gpu_unavailable_reason() + "): only the CPU backends were run");
    } else if (!gpus.empty()) {
      backends.push_back(Backend::Cuda);
    }
    if (!check_ && !grad_ && !perf_) check_ = true;
    std::vector<std::string> failures;
    if (check_) run_checks(r, ops, backends, gpus, failures);
    if (grad_) run_grads(r, ops, failures);
    if (perf_) run_perf(ctx, r, ops, backends, gpus);
    if (!failures.empty()) {
      render(r, ctx.options().format(), std::cout, ctx.options().text_width());
      throw Error(ErrorKind::Numeric,
                  fmt::format("{} check(s) failed; the first: {}", failures.size(), failures.front()),
                  "a failing op is a bug in the engine: report it with the seed (--seed) to reproduce");
    }
    return r;
  }

 private:
  bool device_opt_given() const { return device_ != "cpu,gpu"; }

  void run_checks(Report& r, const std::vector<std::string>& ops, const std::vector<Backend>& backends,
                  const std::vector<int>& gpus, std::vector<std::string>& failures) {
    Table& t = r.add(Table("ops.check", fmt::format("Ops vs the float64 reference ({} random shapes each)", cases_)));
    t.col("op", "Op")
        .col("backend", "Backend")
        .col("pass", "Pass")
        .col("output", "Output")
        .col("checks", "Checks")
        .col("max_err", "Max rel. error")
        .col("bound", "Bound")
        .col("status", "Status");
    std::vector<std::string> skipped_ops;
    std::string skip_reasons;
    for (Backend b : backends) {
      engine::Context ectx(b, b == Backend::Cuda ? gpus.front() : 0);
      for (const auto& op : ops) {
        if (const std::string why = harness::skip_reason(op, b); !why.empty()) {
          skipped_ops.push_back(fmt::format("{} on {}: {}", op, to_string(b), why));
          continue;
        }
        Rng rng(seed_);  // the same shapes and values on every backend
        auto results = harness::check_op(op, ectx, rng, cases_);
        // One row per pass and output: the worst case.
        std::vector<std::pair<std::string, std::string>> keys;
        for (const auto& c : results) {
          bool seen = false;
          for (const auto& k : keys) seen |= k.first == c.pass && k.second == c.output;
          if (!seen) keys.emplace_back(c.pass, c.output);
        }
        for (const auto& [pass, output] : keys) {
          double worst = 0, bound = 0;
          std::int64_t n = 0, skipped = 0;
          bool ok = true;
          for (const auto& c : results) {
            if (c.pass != pass || c.output != output) continue;
            if (c.skipped) {  // a dtype the backend refuses (bf16/fp16 on the CPU)
              ++skipped;
              if (skip_reasons.empty()) skip_reasons = c.skip_reason;
              continue;
            }
            ++n;
            worst = std::max(worst, c.rel_error);
            bound = std::max(bound, c.bound);
            if (!c.passed()) {
              ok = false;
              failures.push_back(c.describe());
            }
          }
          std::string status = ok ? "ok" : "FAIL";
          if (skipped > 0) status = n == 0 ? "skipped" : fmt::format("{} ({} skipped)", status, skipped);
          if (n == 0)
            t.row({op, std::string(to_string(b)), pass, output, n, Cell(), Cell(), status});
          else
            t.row({op, std::string(to_string(b)), pass, output, n, worst, bound, status});
        }
      }
    }
    t.note(
        "Each output is compared with the float64 reference by ‖out − ref‖₂ / ‖ref‖₂; outputs are poisoned (NaN) "
        "before the run, guard regions around every buffer catch writes out of bounds, inputs must stay unchanged. "
        "The bound is the output's dtype's (bf16 and fp16 cases: twice the unit roundoff).");
    for (const auto& why : skipped_ops) t.note("Not run: " + why + ".");
    if (!skip_reasons.empty()) t.note("skipped: cases in a dtype the backend refuses (" + skip_reasons + ")");
  }

  void run_grads(Report& r, const std::vector<std::string>& ops, std::vector<std::string>& failures) {
    Table& t = r.add(Table("ops.grad", "Backward passes vs central finite differences (float64 reference)"));
    t.col("op", "Op")
        .col("wrt", "d/d")
        .col("checks", "Checks")
        .col("max_err", "Max rel. error")
        .col("status", "Status");
    for (const auto& op : ops) {
      Rng rng(seed_ + 1);
      auto results = harness::gradient_check(op, rng, cases_);
      std::vector<std::string> wrts;
      for (const auto& g : results)
        if (std::find(wrts.begin(), wrts.end(), g.wrt) == wrts.end()) wrts.push_back(g.wrt);
      for (const auto& w : wrts) {
        double worst = 0;
        std::int64_t n = 0;
        bool ok = true;
        for (const auto& g : results) {
          if (g.wrt != w) continue;
          ++n;
          worst = std::max(worst, g.rel_error);
          if (!g.passed()) {
            ok = false;
            failures.push_back(g.describe());
          }
        }
        t.row({op, w, n, worst, std::string(ok ? "ok" : "FAIL")});
      }
    }
  }

  void run_perf(Invocation& ctx, Report& r, const std::vector<std::string>& ops, const std::vector<Backend>& backends,
                const std::vector<int>& gpus) {
    for (Backend b : backends) {
      const bool gpu = b == Backend::Cuda;
      engine::Context ectx(b, gpu ? gpus.front() : 0);
      const std::string dev_name = gpu ? hw::query_gpu(gpus.front()).name : hw::query_cpu().model_name;
      model::Roofline roof = measure::load_measured_roofline(ctx.db(), dev_name);
      const model::Ceiling* peak = roof.compute("fp32", gpu ? "cuda" : "");
      const model::Ceiling* bw = roof.memory("dram");
      if (!bw) bw = roof.memory("mem");
      Table& t = r.add(Table(fmt::format("ops.perf.{}", to_string(b)),
                             fmt::format("Op timings on {} ({}), batch {}", to_string(b), dev_name, batch_)));
      t.col("op", "Op")
          .col("pass", "Pass")
          .col("shape", "Shape", "", -1, 44)
          .col("time_us", "Time", "µs")
          .col("gflops", "GFLOP/s")
          .col("gbs", "GB/s")
          .col("ai", "AI", "FLOP/B")
          .col("roof_pct", "% of roofline", "%", 1);
      const std::int64_t dev_id = gpu ? ctx.gpu_device_id(gpus.front()) : ctx.cpu_device_id();
      std::vector<std::string> skipped;
      for (const auto& op : ops) {
        if (const std::string why = harness::skip_reason(op, b, true); !why.empty()) {
          skipped.push_back(fmt::format("{}: {}", op, why));
          continue;
        }
        for (const auto& p : harness::perf_op(op, ectx, batch_)) {
          Cell pct;
          if (peak && bw && p.seconds > 0) {
            const double attainable = model::attainable(p.cost.intensity(), peak->value, bw->value);
            if (attainable > 0) pct = 100.0 * (p.cost.flops / p.seconds) / attainable;
          }
          t.row({p.op, p.pass, p.shape, p.seconds * 1e6, p.gflops(), p.gbytes(), p.cost.intensity(), pct});
          store::MeasurementRecord m;
          m.run_id = ctx.run_id();
          m.device_id = dev_id;
          m.category = "op";
          m.name = fmt::format("op.{}.{}", p.op, p.pass);
          m.precision = "fp32";
          m.unit = "s";
          m.value = p.seconds;
          m.params_json = json_text(nlohmann::json{{"shape", p.shape},      {"backend", p.backend},
                                                   {"flops", p.cost.flops}, {"bytes", p.cost.bytes},
                                                   {"rel_iqr", p.rel_iqr},  {"batch", batch_}});
          store::add_measurement(ctx.db(), m);
        }
      }
      if (!peak || !bw)
        t.note(
            fmt::format("no measured roofline for {} in the store (run `roofline ceilings` first): % of roofline "
                        "is left empty",
                        dev_name));
      else
        t.note(fmt::format("% of roofline: achieved FLOP/s over min({}, AI × {}) from the store's measured ceilings",
                           format_si(peak->value, "FLOP/s"), format_si(bw->value, "B/s")));
      t.note("Median of repeated calls on the same buffers: inputs that fit in cache are timed from cache.");
      for (const auto& why : skipped) t.note("Not timed: " + why + ".");
    }
  }

  bool list_ = false, check_ = false, grad_ = false, perf_ = false;
  std::string device_ = "cpu,gpu", op_;
  int cases_ = 8;
  std::int64_t batch_ = 128;
  std::uint64_t seed_ = 42;
};

ROOFLINE_COMMAND(OpsCommand)

}  // namespace roofline::cli

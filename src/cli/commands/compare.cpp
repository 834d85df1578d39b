// roofline compare: two or more devices from the store side by side — their
// ceilings, each shared network cell's time per layer and where the
// difference comes from, and one chart with every device's roofline.
#include <filesystem>

#include <fmt/format.h>

#include "src/cli/command.hpp"
#include "roofline/core/error.hpp"
#include "roofline/core/strings.hpp"
#include "roofline/report/compare.hpp"

namespace roofline::cli {

namespace {

class CompareCommand : public Command {
 public:
  const char* name() const override { return "compare"; }
  const char* summary() const override {
    return "two or more devices side by side: ceilings, time per layer of the same network cell, where the "
           "difference comes from, and one chart with both rooflines";
  }
  bool stores_results() const override { return false; }
  void configure(CLI::App& sub) override {
    sub.add_option("devices", devices_, "two or more devices in the store, by any part of their name (e.g. H100 H200)");
    sub.add_option("--runs", runs_,
                   "instead of devices: two runs of one workload (ids from roofline runs, e.g. --runs 12,15: before "
                   "and after a change), their shared profiled cells layer by layer")
        ->delimiter(',');
    sub.add_option("--model", opt_.model, "only this network's cells (alexnet, resnet18)");
    sub.add_option("--precision", opt_.precision, "only this precision's cells (fp32, tf32, bf16, fp16)");
    sub.add_option("--mode", opt_.mode, "only train or infer cells");
    sub.add_option("--batch", opt_.batch, "only this batch size's cells");
    sub.add_option("--top", opt_.top_layers, "rows of the per-layer table")->capture_default_str();
    sub.add_option("--out", out_, "folder for the chart (compare-<devices>.html and .svg)")->capture_default_str();
  }

  Report run(Invocation& ctx) override {
    opt_.model = to_lower(trim(opt_.model));
    opt_.precision = to_lower(trim(opt_.precision));
    opt_.mode = to_lower(trim(opt_.mode));
    if (!opt_.mode.empty() && opt_.mode != "train" && opt_.mode != "infer")
      throw_usage(fmt::format("unknown mode '{}'", opt_.mode), "use --mode train or --mode infer");
    if (!runs_.empty()) {
      if (!devices_.empty())
        throw_usage("name devices or --runs, not both", "roofline compare H100 H200, or roofline compare --runs 12,15");
      if (runs_.size() != 2)
        throw_usage(fmt::format("--runs takes two run ids, got {}", runs_.size()), "e.g. --runs 12,15");
      const report::Comparison c = report::compare_runs(ctx.db(), runs_[0], runs_[1], opt_);
      Report r("compare");
      for (const auto& t : c.tables) r.add(t);
      return r;
    }
    if (devices_.size() < 2)
      throw_usage("compare needs two or more devices, or --runs A,B",
                  "name them by any part of their names: roofline compare H100 H200; or two runs: --runs 12,15");
    std::vector<report::StoredDevice> devs;
    for (const auto& d : devices_) {
      report::StoredDevice s = report::find_stored_device(ctx.db(), d);
      for (const auto& o : devs)
        if (o.name == s.name && o.kind == s.kind)
          throw_usage(fmt::format("'{}' names {} again", d, s.name), "name each device once");
      devs.push_back(std::move(s));
    }
    const report::Comparison c = report::compare_devices(ctx.db(), devs, opt_);
    Report r("compare");
    for (const auto& t : c.tables) r.add(t);
    for (const auto& n : c.notes) r.warn(n);
    std::error_code ec;
    std::filesystem::create_directories(out_, ec);
    if (ec)
      throw Error(ErrorKind::Input, fmt::format("could not create {}: {}", out_, ec.message()),
                  "use --out with a writable folder");
    std::string slug;
    for (const auto& d : devs) slug += (slug.empty() ? "" : "-vs-") + report::device_slug(d.name);
    const std::string base = (std::filesystem::path(out_) / ("compare-" + slug)).string();
    write_output_file(base + ".html", report::render_html(c.chart));
    write_output_file(base + ".svg", report::render_svg(c.chart));
    r.info(fmt::format("chart{}: {}.html and {}.svg", c.chart_cell.empty() ? " (ceilings only)" : " of " + c.chart_cell,
                       base, base));
    return r;
  }

 private:
  std::vector<std::string> devices_;
  std::vector<std::int64_t> runs_;
  report::CompareOptions opt_;
  std::string out_ = "roofline-report";
};

}  // namespace

ROOFLINE_COMMAND(CompareCommand)

}  // namespace roofline::cli

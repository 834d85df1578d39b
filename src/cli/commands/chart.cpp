// roofline chart: roofline charts (interactive HTML and static SVG) per
// device from what the store holds.
#include <filesystem>

#include <fmt/format.h>

#include "src/cli/command.hpp"
#include "roofline/core/error.hpp"
#include "roofline/core/strings.hpp"
#include "roofline/report/chart.hpp"
#include "roofline/report/store_chart.hpp"

namespace roofline::cli {

class ChartCommand : public Command {
 public:
  const char* name() const override { return "chart"; }
  const char* summary() const override {
    return "roofline charts (interactive HTML and SVG) of each device's ceilings, sweep points and profiled network "
           "layers in the store";
  }
  bool stores_results() const override { return false; }
  void configure(CLI::App& sub) override {
    sub.add_option("--device", device_, "cpu, gpu or all (the devices the store has results for)")
        ->default_val(device_);
    sub.add_option("--out", out_, "folder for the charts")->default_val(out_);
  }

  Report run(Invocation& ctx) override {
    std::string kind = to_lower(trim(device_));
    if (kind == "all") kind.clear();
    else if (kind != "cpu" && kind != "gpu")
      throw_usage(fmt::format("unknown device '{}' for charts", device_), "use --device cpu, gpu or all");
    auto devices = report::stored_devices(ctx.db(), kind);
    if (devices.empty())
      throw Error(ErrorKind::Input,
                  fmt::format("{} has no ceilings, sweep points or profiled network layers{}", ctx.db().path(),
                              kind.empty() ? "" : " for a " + kind),
                  fmt::format("run `roofline ceilings --device {0}` and `roofline sweep --device {0}` first (and "
                              "`roofline bench alexnet,resnet18 --device gpu --profile` for the layers)",
                              kind.empty() ? "all" : kind));
    std::error_code ec;
    std::filesystem::create_directories(out_, ec);
    if (ec)
      throw Error(ErrorKind::Input, fmt::format("could not create {}: {}", out_, ec.message()),
                  "use --out with a writable folder");
    Report r("chart");
    Table& t = r.add(Table("charts", "Roofline charts"));
    t.col("device", "Device")
        .col("kind", "Kind")
        .col("measured", "Measured ceilings")
        .col("theoretical", "Theoretical")
        .col("points", "Points")
        .col("html", "HTML")
        .col("svg", "SVG");
    for (const auto& d : devices) {
      auto dc = report::device_chart(ctx.db(), d);
      std::string base = (std::filesystem::path(out_) / ("roofline-" + report::device_slug(d.name))).string();
      write_output_file(base + ".html", report::render_html(dc.chart));
      write_output_file(base + ".svg", report::render_svg(dc.chart));
      t.row({d.name, d.kind, std::int64_t{dc.measured_ceilings}, std::int64_t{dc.theoretical_ceilings},
             static_cast<std::int64_t>(dc.chart.point_count()), base + ".html", base + ".svg"});
      for (const auto& n : dc.chart.notes) r.info(d.name + ": " + n);
    }
    return r;
  }

 private:
  std::string device_ = "all";
  std::string out_ = "roofline-report";
};

ROOFLINE_COMMAND(ChartCommand)

}  // namespace roofline::cli

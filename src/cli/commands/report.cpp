// roofline report RUN_ID: any stored run as one HTML page (its tables, notes
// and warnings, as the run printed them), with the roofline charts of its
// devices and a page per profile of the run beside it, linked both ways.
#include <filesystem>
#include <map>

#include <fmt/format.h>

#include "src/cli/command.hpp"
#include "roofline/core/error.hpp"
#include "roofline/core/strings.hpp"
#include "roofline/report/chart.hpp"
#include "roofline/report/layer_kernels.hpp"
#include "roofline/report/run_page.hpp"
#include "roofline/profiler/profile_store.hpp"
#include "roofline/profiler/summary.hpp"
#include "roofline/report/store_chart.hpp"
#include "roofline/store/results.hpp"

namespace roofline::cli {

namespace {

class ReportCommand : public Command {
 public:
  const char* name() const override { return "report"; }
  const char* summary() const override {
    return "a stored run as one HTML page (its tables, notes and warnings) with its devices' roofline charts";
  }
  bool stores_results() const override { return false; }
  void configure(CLI::App& sub) override {
    sub.add_option("run", run_id_, "the run's id (roofline runs lists them)")->required();
    sub.add_option("--out", out_, "folder for the page and the charts")->capture_default_str();
  }

  Report run(Invocation& ctx) override {
    const auto run = store::find_run(ctx.db(), run_id_);
    if (!run)
      throw Error(ErrorKind::Usage, fmt::format("{} has no run {}", ctx.db().path(), run_id_),
                  "roofline runs lists the stored runs and their ids");
    const auto json = store::run_report(ctx.db(), run_id_);
    if (!json)
      throw Error(ErrorKind::Input,
                  fmt::format("run {} ({}, {}) has no stored report", run_id_, run->command, run->status),
                  "runs that failed, and runs stored before roofline kept reports (store v6), have none: run the "
                  "command again");
    const auto rep = nlohmann::json::parse(*json, nullptr, false);
    if (!rep.is_object())
      throw Error(ErrorKind::Store, fmt::format("run {}'s stored report is not JSON", run_id_),
                  "run the command again; the run's measurements are still in the store");
    std::error_code ec;
    std::filesystem::create_directories(out_, ec);
    if (ec)
      throw Error(ErrorKind::Input, fmt::format("could not create {}: {}", out_, ec.message()),
                  "use --out with a writable folder");
    Report r("report");
    Table& t = r.add(Table("report.files", fmt::format("Run {} ({}) as pages", run_id_, run->command)));
    t.col("what", "Page").col("path", "File");
    std::vector<std::pair<std::string, std::string>> links;
    const std::vector<std::string> names = split(run->devices, ',');
    for (const auto& d : report::stored_devices(ctx.db())) {
      bool of_run = false;
      for (const auto& n : names) of_run |= trim(n) == d.name;
      if (!of_run) continue;
      const std::string file = "roofline-" + report::device_slug(d.name) + ".html";
      write_output_file((std::filesystem::path(out_) / file).string(),
                        report::render_html(report::device_chart(ctx.db(), d).chart));
      links.push_back({d.name, file});
      t.row({"roofline chart of " + d.name + " (the store's newest figures)", (std::filesystem::path(out_) / file).string()});
    }
    // Each profile of the run (bench --profile) as a page of its own: its kernel, API, copy, NVTX and
    // diagnosis tables, as `roofline profile --show ID` prints them; linked both ways with the run's page.
    // A bench profile's kernels are filed by layer and pass: the run's layer tables link each row to them.
    const std::string run_file = fmt::format("run-{}.html", run_id_);
    std::vector<std::pair<std::string, std::string>> profile_links;
    nlohmann::json run_json = rep;
    for (const auto& row : prof::list_profiles(ctx.db(), run_id_, 1000)) {
      const prof::ProfileData p = prof::load_profile(ctx.db(), row.id);
      Report pr("profile");
      prof::add_profile_tables(pr, p, {});
      const std::string file = fmt::format("profile-{}.html", row.id);
      nlohmann::json profile_json = to_json(pr);
      std::map<std::string, std::string> anchors;
      if (nlohmann::json by_layer = report::layer_kernel_table(p, &anchors); !by_layer["rows"].empty()) {
        profile_json["tables"].insert(profile_json["tables"].begin(), std::move(by_layer));
        report::link_layer_rows(run_json, row.label, file, anchors);
      }
      const std::string what = fmt::format("profile {}{}", row.id, row.label.empty() ? "" : ": " + row.label);
      auto back = links;
      back.insert(back.begin(), {fmt::format("run {}", run_id_), run_file});
      write_output_file((std::filesystem::path(out_) / file).string(),
                        report::render_run_page(*run, profile_json, back,
                                                fmt::format("roofline {} — of run {}", what, run_id_)));
      profile_links.push_back({what, file});
      t.row({what + " (kernels, API calls, diagnoses)", (std::filesystem::path(out_) / file).string()});
    }
    links.insert(links.end(), profile_links.begin(), profile_links.end());
    const std::string page = (std::filesystem::path(out_) / run_file).string();
    write_output_file(page, report::render_run_page(*run, run_json, links));
    t.row({"the run's tables, notes and warnings", page});
    return r;
  }

 private:
  std::int64_t run_id_ = 0;
  std::string out_ = "roofline-report";
};

}  // namespace

ROOFLINE_COMMAND(ReportCommand)

}  // namespace roofline::cli

// One self-contained HTML page for a stored run (`roofline report RUN_ID`,
// `roofline analyze --out DIR`): the run's header, every table of its printed
// report as an HTML table, its notes and warnings, and links to the chart
// pages beside it. No script, no network: it opens offline anywhere.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "roofline/store/results.hpp"

namespace roofline::report {

// report_json: core/report.hpp's to_json of the run's report. links: (text,
// relative href) of pages beside this one (the device charts, the run's
// profiles, the run's own page). title: the page's heading (default "roofline
// COMMAND — run ID"; a profile's page names the profile).
std::string render_run_page(const store::RunRow& run, const nlohmann::json& report_json,
                            const std::vector<std::pair<std::string, std::string>>& links,
                            const std::string& title = {});

}  // namespace roofline::report

// Links from a layer to the kernels that ran it, on the report's pages
// (`roofline report RUN_ID`). A bench profile files every kernel launch under
// the NVTX range of its layer and pass ("model/layer/pass"); the run's layer
// tables ("layer", "pass" columns) then link each row to that range's kernels
// on the profile's page.
#pragma once
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "roofline/profiler/profile_data.hpp"

namespace roofline::report {

// The profile's kernels grouped by NVTX range, as a table of the report JSON
// (core/report.hpp's to_json shape): range, kernel, launches, time, and the
// counted GFLOP and DRAM MB where the profile has counters. The first row of
// each range carries "_id", the anchor that `anchors` maps the range to.
// Empty (no rows) when no kernel ran under a range.
nlohmann::json layer_kernel_table(const prof::ProfileData& p, std::map<std::string, std::string>* anchors);

// For every table of `report_json` that has "layer" and "pass" columns and
// whose title starts with "LABEL:" (the profile's label: bench titles its
// per-layer tables by the cell they measured), gives each row whose range
// "…/layer/pass" is in `anchors` a link {"_links": {"layer": "FILE#ANCHOR"}}.
// Returns how many rows were linked.
int link_layer_rows(nlohmann::json& report_json, const std::string& label, const std::string& file,
                    const std::map<std::string, std::string>& anchors);

}  // namespace roofline::report

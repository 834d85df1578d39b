// Layer rows linked to their kernels: see layer_kernels.hpp.
#include "roofline/report/layer_kernels.hpp"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "roofline/profiler/short_names.hpp"

namespace roofline::report {

namespace {

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

nlohmann::json column(const char* key, const char* title, const char* unit = "") {
  return {{"key", key}, {"title", title}, {"unit", unit}};
}

}  // namespace

nlohmann::json layer_kernel_table(const prof::ProfileData& p, std::map<std::string, std::string>* anchors) {
  struct Row {
    std::string range, kernel;
    std::uint64_t launches = 0;
    double ms = 0;
  };
  std::vector<Row> rows;
  for (const auto& [key, k] : p.kernels)
    if (!k.nvtx_path.empty())
      rows.push_back({k.nvtx_path, k.demangled.empty() ? k.name : k.demangled, k.duration.count(),
                      k.duration.total() / 1e6});
  // Ranges in order of their time, kernels within a range likewise.
  std::map<std::string, double> range_ms;
  for (const auto& r : rows) range_ms[r.range] += r.ms;
  std::sort(rows.begin(), rows.end(), [&](const Row& a, const Row& b) {
    if (a.range != b.range) {
      const double ta = range_ms[a.range], tb = range_ms[b.range];
      return ta != tb ? ta > tb : a.range < b.range;
    }
    return a.ms != b.ms ? a.ms > b.ms : a.kernel < b.kernel;
  });
  // Counters are kept per (kernel as CUPTI names it, range); match on both.
  std::map<std::pair<std::string, std::string>, const prof::KernelCounters*> counted;
  for (const auto& c : p.counters) counted[{c.kernel, c.nvtx_path}] = &c;
  std::map<std::pair<std::string, std::string>, std::string> raw_name;
  for (const auto& [key, k] : p.kernels) raw_name[{k.demangled.empty() ? k.name : k.demangled, k.nvtx_path}] = k.name;

  nlohmann::json t = {{"id", "profile.layer_kernels"},
                      {"title", "Kernels by layer and pass (NVTX range): what ran each row of the layer tables"},
                      {"columns", nlohmann::json::array({column("range", "Range"), column("kernel", "Kernel"),
                                                         column("launches", "Launches"),
                                                         column("ms", "Time", "ms"),
                                                         column("gflop", "Counted (one step)", "GFLOP"),
                                                         column("dram_mb", "DRAM (one step)", "MB")})},
                      {"rows", nlohmann::json::array()}};
  bool any_counted = false;
  for (const auto& r : rows) {
    nlohmann::json row = {{"range", r.range}, {"kernel", prof::short_kernel_name(r.kernel, 100)},
                          {"launches", r.launches}, {"ms", r.ms}};
    const auto raw = raw_name.find({r.kernel, r.range});
    if (raw != raw_name.end())
      if (const auto c = counted.find({raw->second, r.range}); c != counted.end()) {
        row["gflop"] = c->second->total_flops() / 1e9;
        row["dram_mb"] = c->second->dram_bytes() / 1e6;
        any_counted = true;
      }
    if (!anchors->count(r.range)) {
      const std::string id = fmt::format("range-{}", anchors->size());
      (*anchors)[r.range] = id;
      row["_id"] = id;
    }
    t["rows"].push_back(std::move(row));
  }
  if (!any_counted) {  // no counters: drop the two empty columns
    auto& cols = t["columns"];
    cols.erase(cols.end() - 2, cols.end());
  }
  return t;
}

int link_layer_rows(nlohmann::json& report_json, const std::string& label, const std::string& file,
                    const std::map<std::string, std::string>& anchors) {
  if (label.empty() || anchors.empty() || !report_json.contains("tables")) return 0;
  int linked = 0;
  for (auto& t : report_json["tables"]) {
    if (t.value("title", "").rfind(label + ":", 0) != 0) continue;
    bool has_layer = false, has_pass = false;
    for (const auto& c : t.value("columns", nlohmann::json::array())) {
      has_layer |= c.value("key", "") == "layer";
      has_pass |= c.value("key", "") == "pass";
    }
    if (!has_layer || !has_pass || !t.contains("rows")) continue;
    for (auto& row : t["rows"]) {
      if (!row.contains("layer") || !row.contains("pass") || !row["layer"].is_string() || !row["pass"].is_string())
        continue;
      const std::string tail = "/" + row["layer"].get<std::string>() + "/" + row["pass"].get<std::string>();
      for (const auto& [range, id] : anchors)
        if (ends_with(range, tail) || range == tail.substr(1)) {
          row["_links"]["layer"] = file + "#" + id;
          ++linked;
          break;
        }
    }
  }
  return linked;
}

}  // namespace roofline::report

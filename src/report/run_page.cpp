// A stored run as one HTML page: see run_page.hpp.
#include "roofline/report/run_page.hpp"

#include <fmt/format.h>

#include "roofline/core/strings.hpp"
#include "src/report/style.hpp"

namespace roofline::report {

namespace {

const char* kCss = R"css(
body{font-family:sans-serif;margin:20px;color:#222;max-width:1400px}
h1{font-size:22px}h2{font-size:17px;margin-top:28px}
table{border-collapse:collapse;font-size:13px;margin:6px 0}
th,td{padding:3px 8px;border-bottom:1px solid #ddd;text-align:left;vertical-align:top}
th{background:#f4f4f4}td.num{text-align:right;font-variant-numeric:tabular-nums}
.note{color:#555;font-size:13px;margin:2px 0}.warning{color:#a40;font-size:13px}
.meta td{border:none;padding:1px 10px 1px 0}nav a{margin-right:14px}
)css";

std::string cell_html(const nlohmann::json& v) {
  if (v.is_null()) return "-";
  if (v.is_boolean()) return v.get<bool>() ? "yes" : "no";
  if (v.is_number_integer()) return std::to_string(v.get<std::int64_t>());
  if (v.is_number()) return xml_escape(format_sig(v.get<double>(), 4));
  if (v.is_string()) return xml_escape(v.get<std::string>());
  return xml_escape(v.dump());
}

}  // namespace

std::string render_run_page(const store::RunRow& run, const nlohmann::json& rep,
                            const std::vector<std::pair<std::string, std::string>>& links, const std::string& heading) {
  std::string o = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>";
  const std::string title = heading.empty() ? fmt::format("roofline {} — run {}", run.command, run.id) : heading;
  o += xml_escape(title) + "</title>\n<style>" + kCss + "</style>\n</head>\n<body>\n";
  o += "<h1>" + xml_escape(title) + "</h1>\n<table class=\"meta\">\n";
  std::string argv = run.argv;  // stored as a JSON array of the words
  if (const auto words = nlohmann::json::parse(run.argv, nullptr, false); words.is_array()) {
    argv.clear();
    for (const auto& w : words)
      if (w.is_string()) argv += (argv.empty() ? "" : " ") + w.get<std::string>();
  }
  for (const auto& [k, v] : std::vector<std::pair<std::string, std::string>>{
           {"Command line", argv}, {"Started", run.started_at}, {"Finished", run.finished_at},
           {"Status", run.status}, {"Host", run.host}, {"Devices", run.devices}, {"roofline", run.version}})
    if (!v.empty()) o += "<tr><td>" + xml_escape(k) + "</td><td>" + xml_escape(v) + "</td></tr>\n";
  o += "</table>\n";
  if (!links.empty()) {
    o += "<nav>Pages: ";
    for (const auto& [text, href] : links) o += "<a href=\"" + xml_escape(href) + "\">" + xml_escape(text) + "</a>";
    o += "</nav>\n";
  }
  const auto tables = rep.value("tables", nlohmann::json::array());
  if (tables.size() > 1) {
    o += "<nav>Tables: ";
    for (size_t i = 0; i < tables.size(); ++i)
      o += fmt::format("<a href=\"#t{}\">{}</a>", i, xml_escape(tables[i].value("title", tables[i].value("id", ""))));
    o += "</nav>\n";
  }
  for (size_t i = 0; i < tables.size(); ++i) {
    const auto& t = tables[i];
    o += fmt::format("<h2 id=\"t{}\">{}</h2>\n<table class=\"data\" data-id=\"{}\">\n<tr>", i,
                     xml_escape(t.value("title", "")), xml_escape(t.value("id", "")));
    std::vector<std::string> keys;
    for (const auto& c : t.value("columns", nlohmann::json::array())) {
      keys.push_back(c.value("key", ""));
      const std::string unit = c.value("unit", "");
      o += "<th>" + xml_escape(c.value("title", "")) + (unit.empty() ? "" : " (" + xml_escape(unit) + ")") + "</th>";
    }
    o += "</tr>\n";
    for (const auto& r : t.value("rows", nlohmann::json::array())) {
      // "_id": the row's anchor; "_links": {column key: href} (layer_kernels.hpp).
      const auto id = r.find("_id");
      o += id != r.end() && id->is_string() ? "<tr id=\"" + xml_escape(id->get<std::string>()) + "\">" : "<tr>";
      const auto cell_links = r.find("_links");
      for (const auto& k : keys) {
        const nlohmann::json v = r.contains(k) ? r[k] : nlohmann::json();
        std::string text = cell_html(v);
        if (cell_links != r.end() && cell_links->is_object() && cell_links->contains(k) && (*cell_links)[k].is_string())
          text = "<a href=\"" + xml_escape((*cell_links)[k].get<std::string>()) + "\">" + text + "</a>";
        o += std::string(v.is_number() ? "<td class=\"num\">" : "<td>") + text + "</td>";
      }
      o += "</tr>\n";
    }
    o += "</table>\n";
    for (const auto& n : t.value("notes", nlohmann::json::array()))
      o += "<p class=\"note\">note: " + xml_escape(n.get<std::string>()) + "</p>\n";
  }
  for (const auto& n : rep.value("notes", nlohmann::json::array()))
    o += "<p class=\"note\">note: " + xml_escape(n.get<std::string>()) + "</p>\n";
  for (const auto& w : rep.value("warnings", nlohmann::json::array()))
    o += "<p class=\"warning\">warning: " + xml_escape(w.get<std::string>()) + "</p>\n";
  o += "</body>\n</html>\n";
  return o;
}

}  // namespace roofline::report

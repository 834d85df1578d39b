#include "src/report/style.hpp"

namespace roofline::report {

std::string series_color(size_t index) {
  static const char* palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e",
                                  "#17becf", "#8c564b", "#e377c2", "#bcbd22", "#7f7f7f"};
  return palette[index % 10];
}

std::string roof_color(const Chart& chart, const std::string& roof) {
  static const char* palette[] = {"#333333", "#b8860b", "#006d77", "#6a3d9a"};
  for (size_t i = 0; i < chart.roofs.size(); ++i)
    if (chart.roofs[i].name == roof) return palette[i % 4];
  return palette[0];
}

std::string xml_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      default: o += c;
    }
  }
  return o;
}

const char* svg_css() {
  return ".grid{stroke:#e4e4e4;stroke-width:1}.frame{fill:none;stroke:#888}.tick{fill:#444;font-size:11px}"
         ".ceiling{fill:none;stroke-width:2}.ceiling.theoretical{stroke-width:1.5;opacity:.8}"
         ".clabel{font-size:11px}.ridge{fill:white;stroke-width:2}.pt{stroke:white;stroke-width:1}";
}

}  // namespace roofline::report

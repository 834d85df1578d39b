// Colours, CSS and escaping shared by the SVG and HTML renderers.
#pragma once
#include <string>

#include "roofline/report/chart.hpp"

namespace roofline::report {

std::string series_color(size_t index);
// One colour per roof (device), in the order the chart lists them.
std::string roof_color(const Chart& chart, const std::string& roof);
std::string xml_escape(const std::string& s);
// Styles of the chart's SVG elements (also used inside the HTML page).
const char* svg_css();
// Axis labels of whole decades: 0.01, 10, 1000; "1 TFLOP/s", "100 GFLOP/s".
std::string decade_text(double v);
std::string decade_si(double v, const std::string& unit);

}  // namespace roofline::report

// Roofline charts, for any set of devices and any points: a Chart holds one
// or more rooflines (a device's ceilings, measured and theoretical) and named
// series of points (sweep points now; kernels, layers and models later), each
// point with its own tooltip fields. layout() places everything on log-log
// axes; render_svg() draws a static SVG and render_html() a self-contained
// interactive page (inline CSS/JS, data embedded as JSON, no network).
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "roofline/model/roofline.hpp"

namespace roofline::report {

struct ChartRoof {
  std::string name;       // shown in labels and the legend, e.g. the device name
  model::Roofline roof;   // Source::Measured ceilings are drawn solid, others dashed
};

struct ChartPoint {
  std::string name;
  double ai = 0;     // FLOPs per byte
  double flops = 0;  // FLOP/s achieved
  std::optional<double> bandwidth;        // B/s achieved
  std::optional<double> percent_of_roof;  // of what the roof allows at this AI
  std::vector<std::pair<std::string, std::string>> fields;  // more tooltip lines
  std::optional<double> seconds;                            // its time: the page sizes the point by it
};

struct ChartSeries {
  std::string name;
  std::vector<ChartPoint> points;
  std::string color_key;  // series of one key share a colour (a pass); empty: the series' own
  bool visible = true;    // drawn when the page opens (else behind its legend toggle)
};

struct Chart {
  std::string title, subtitle;
  std::vector<ChartRoof> roofs;
  std::vector<ChartSeries> series;
  std::vector<std::string> notes;
  // Ceiling ids drawn by default (the rest behind the legend's "other
  // ceilings" toggle); a measured ceiling hides a theoretical one of the same
  // id. Empty: every ceiling is drawn.
  std::vector<std::string> shown_ceilings;
  size_t point_count() const;
};

struct Range {
  double min = 0, max = 0;  // data units; both powers of ten
  std::vector<double> decades() const;
};

struct CeilingLine {
  std::string roof, id, label;
  model::CeilingKind kind = model::CeilingKind::Compute;
  bool measured = true;
  bool shown = true;                      // drawn by default (Chart::shown_ceilings)
  double value = 0;                       // FLOP/s or B/s
  double x0 = 0, y0 = 0, x1 = 0, y1 = 0;  // data units, inside the axes
};

struct Ridge {
  std::string roof, compute_id, memory_id;
  bool measured = true;
  bool shown = true;  // both its ceilings are
  double ai = 0, flops = 0;
};

struct Layout {
  Range x, y;
  std::vector<CeilingLine> lines;
  std::vector<Ridge> ridges;
  int off_axes = 0;  // hidden compute ceilings outside the axes, left out
};

// Axes cover every point, every shown compute ceiling and every shown ridge
// point (whole decades, with room around them); hidden compute ceilings
// outside them are left out (off_axes). Compute ceilings run from where they meet
// the fastest memory slope of their roof and kind (measured or theoretical)
// to the right edge; memory slopes from the left edge to where they meet the
// highest compute ceiling. Ridges: each compute ceiling with the roof's DRAM
// ceiling (the fastest one at level "dram", or the fastest memory ceiling).
Layout layout(const Chart& chart);

// A point's radius in pixels: 5 without a time, else 3 to 12 by the square
// root of its share of the longest time on the chart (area ∝ time).
double point_radius(std::optional<double> seconds, double longest);

std::string render_svg(const Chart& chart, int width = 1000, int height = 620);
std::string render_html(const Chart& chart);
// The data the HTML page draws from (also useful to other front ends).
nlohmann::json chart_json(const Chart& chart, const Layout& l);

}  // namespace roofline::report

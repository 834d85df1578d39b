#include "roofline/report/chart.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "roofline/core/strings.hpp"

namespace roofline::report {

double point_radius(std::optional<double> seconds, double longest) {
  if (!seconds || !(longest > 0) || !(*seconds > 0)) return 5;
  return 3 + 9 * std::sqrt(std::min(1.0, *seconds / longest));
}

size_t Chart::point_count() const {
  size_t n = 0;
  for (const auto& s : series) n += s.points.size();
  return n;
}

std::vector<double> Range::decades() const {
  std::vector<double> d;
  if (min <= 0 || max <= min) return d;
  for (int e = static_cast<int>(std::lround(std::log10(min))); e <= std::lround(std::log10(max)); ++e)
    d.push_back(std::pow(10.0, e));
  return d;
}

namespace {

double floor_decade(double v) { return std::pow(10.0, std::floor(std::log10(v))); }
double ceil_decade(double v) { return std::pow(10.0, std::ceil(std::log10(v))); }

struct Group {
  std::string roof;
  bool measured;
  std::vector<const model::Ceiling*> compute, memory;
  double bw_max = 0, peak_max = 0;
  const model::Ceiling* dram = nullptr;
};

std::vector<Group> groups_of(const Chart& chart) {
  std::vector<Group> out;
  for (const auto& r : chart.roofs)
    for (bool measured : {true, false}) {
      Group g{r.name, measured, {}, {}, 0, 0, nullptr};
      for (const auto& c : r.roof.ceilings()) {
        if ((c.source == model::Source::Measured) != measured || !(c.value > 0)) continue;
        if (c.kind == model::CeilingKind::Compute) {
          g.compute.push_back(&c);
          g.peak_max = std::max(g.peak_max, c.value);
        } else {
          g.memory.push_back(&c);
          g.bw_max = std::max(g.bw_max, c.value);
          if (c.unit == "dram" && (!g.dram || c.value > g.dram->value)) g.dram = &c;
        }
      }
      if (!g.dram)
        for (const auto* m : g.memory)
          if (!g.dram || m->value > g.dram->value) g.dram = m;
      if (!g.compute.empty() || !g.memory.empty()) out.push_back(std::move(g));
    }
  return out;
}

}  // namespace

namespace {

// Whether a ceiling is drawn by default: its id is asked for, and no measured
// ceiling of the same id on its roof outranks a theoretical one.
bool shown_ceiling(const Chart& chart, const std::string& roof, const model::Ceiling& c) {
  if (chart.shown_ceilings.empty()) return true;
  if (std::find(chart.shown_ceilings.begin(), chart.shown_ceilings.end(), c.id) == chart.shown_ceilings.end())
    return false;
  if (c.source == model::Source::Measured) return true;
  for (const auto& r : chart.roofs)
    if (r.name == roof)
      for (const auto& o : r.roof.ceilings())
        if (o.id == c.id && o.source == model::Source::Measured && o.value > 0) return false;
  return true;
}

}  // namespace

Layout layout(const Chart& chart) {
  Layout l;
  auto groups = groups_of(chart);
  auto shown = [&](const Group& g, const model::Ceiling* c) { return shown_ceiling(chart, g.roof, *c); };
  for (const auto& g : groups)
    if (g.dram)
      for (const auto* c : g.compute)
        l.ridges.push_back({g.roof, c->id, g.dram->id, g.measured, shown(g, c) && shown(g, g.dram),
                            c->value / g.dram->value, c->value});

  std::vector<double> xs, ys;
  for (const auto& s : chart.series)
    for (const auto& p : s.points)
      if (p.ai > 0 && p.flops > 0) {
        xs.push_back(p.ai);
        ys.push_back(p.flops);
      }
  for (const auto& r : l.ridges)
    if (r.shown) xs.push_back(r.ai);
  for (const auto& g : groups)
    for (const auto* c : g.compute)
      if (shown(g, c)) ys.push_back(c->value);
  if (xs.empty()) xs = {0.1, 100};
  l.x.min = floor_decade(*std::min_element(xs.begin(), xs.end()) / 2);
  l.x.max = ceil_decade(*std::max_element(xs.begin(), xs.end()) * 2);
  double ymax = ys.empty() ? 0 : *std::max_element(ys.begin(), ys.end());
  double ylow = ys.empty() ? std::numeric_limits<double>::infinity() : *std::min_element(ys.begin(), ys.end());
  for (const auto& g : groups)
    for (const auto* m : g.memory)
      if (shown(g, m)) ylow = std::min(ylow, m->value * l.x.min), ymax = std::max(ymax, m->value * l.x.min);
  if (!(ymax > 0)) ymax = 1e12;
  l.y.max = ceil_decade(ymax * 1.5);
  // Slopes may start far below everything else; the points always fit.
  double ypoints = std::numeric_limits<double>::infinity();
  for (const auto& s : chart.series)
    for (const auto& p : s.points)
      if (p.flops > 0) ypoints = std::min(ypoints, p.flops);
  double ymin = std::max(std::isfinite(ylow) ? ylow : l.y.max / 1e4, l.y.max / 1e4);
  ymin = std::min(ymin, ypoints);
  l.y.min = floor_decade(ymin / 1.5);

  for (const auto& g : groups) {
    // Slopes end at the highest shown compute roof (any, where none is shown).
    double peak_shown = 0;
    for (const auto* c : g.compute)
      if (shown(g, c)) peak_shown = std::max(peak_shown, c->value);
    const double peak_end = peak_shown > 0 ? peak_shown : g.peak_max;
    for (const auto* c : g.compute) {
      const bool on = shown(g, c);
      if (!on && (c->value > l.y.max || c->value < l.y.min)) {
        ++l.off_axes;
        continue;
      }
      double x0 = g.bw_max > 0 ? std::max(l.x.min, c->value / g.bw_max) : l.x.min;
      l.lines.push_back({g.roof, c->id, c->label.empty() ? c->id : c->label, c->kind, g.measured, on, c->value, x0,
                         c->value, l.x.max, c->value});
    }
    for (const auto* m : g.memory) {
      const bool on = shown(g, m);
      double x1 = peak_end > 0 ? std::min(l.x.max, (on ? peak_end : g.peak_max) / m->value) : l.x.max;
      double x0 = std::max(l.x.min, l.y.min / m->value);
      if (x0 >= x1) continue;
      x1 = std::min(x1, l.y.max / m->value);
      if (x0 >= x1) continue;
      l.lines.push_back({g.roof, m->id, m->label.empty() ? m->id : m->label, m->kind, g.measured, on, m->value, x0,
                         m->value * x0, x1, m->value * x1});
    }
  }
  return l;
}

nlohmann::json chart_json(const Chart& chart, const Layout& l) {
  using nlohmann::json;
  json j;
  j["title"] = chart.title;
  j["subtitle"] = chart.subtitle;
  j["notes"] = chart.notes;
  if (l.off_axes > 0)
    j["notes"].push_back(std::to_string(l.off_axes) + " other ceiling" + (l.off_axes == 1 ? "" : "s") +
                         " outside the axes left out (roofline ceilings lists every one)");
  j["x"] = {{"min", l.x.min}, {"max", l.x.max}};
  j["y"] = {{"min", l.y.min}, {"max", l.y.max}};
  json roofs = json::array();
  for (const auto& r : chart.roofs) roofs.push_back(r.name);
  j["roofs"] = roofs;
  json lines = json::array();
  for (const auto& c : l.lines)
    lines.push_back({{"roof", c.roof},
                     {"id", c.id},
                     {"label", c.label},
                     {"kind", model::to_string(c.kind)},
                     {"measured", c.measured},
                     {"shown", c.shown},
                     {"value", c.value},
                     {"text", format_si(c.value, c.kind == model::CeilingKind::Compute ? "FLOP/s" : "B/s")},
                     {"x0", c.x0},
                     {"y0", c.y0},
                     {"x1", c.x1},
                     {"y1", c.y1}});
  j["lines"] = lines;
  json ridges = json::array();
  for (const auto& r : l.ridges)
    ridges.push_back({{"roof", r.roof}, {"compute", r.compute_id}, {"memory", r.memory_id}, {"measured", r.measured},
                      {"shown", r.shown}, {"ai", r.ai}, {"flops", r.flops}});
  j["ridges"] = ridges;
  double longest = 0;
  for (const auto& s : chart.series)
    for (const auto& p : s.points)
      if (p.seconds) longest = std::max(longest, *p.seconds);
  json series = json::array();
  for (const auto& s : chart.series) {
    json pts = json::array();
    for (const auto& p : s.points) {
      json fields = json::array();
      fields.push_back({"AI", format_sig(p.ai, 4) + " FLOP/B"});
      fields.push_back({"Performance", format_si(p.flops, "FLOP/s", 4)});
      if (p.bandwidth) fields.push_back({"Bandwidth", format_si(*p.bandwidth, "B/s", 4)});
      if (p.percent_of_roof) fields.push_back({"% of roof", format_sig(*p.percent_of_roof, 3) + "%"});
      if (p.seconds) fields.push_back({"Time", format_seconds(*p.seconds)});
      for (const auto& [k, v] : p.fields) fields.push_back({k, v});
      json pt = {{"name", p.name}, {"ai", p.ai}, {"flops", p.flops}, {"fields", fields},
                 {"r", point_radius(p.seconds, longest)}};
      if (p.seconds) pt["seconds"] = *p.seconds;
      pts.push_back(std::move(pt));
    }
    series.push_back({{"name", s.name}, {"points", pts}, {"color_key", s.color_key.empty() ? s.name : s.color_key},
                      {"visible", s.visible}});
  }
  j["series"] = series;
  return j;
}

}  // namespace roofline::report

// The static SVG: the same layout as the HTML page, with native <title>
// tooltips on points and ridges.
#include <algorithm>
#include <cmath>
#include <sstream>

#include <fmt/format.h>

#include "roofline/core/strings.hpp"
#include "roofline/report/chart.hpp"
#include "src/report/style.hpp"

namespace roofline::report {

namespace {

struct Frame {
  double left = 100, right = 250, top = 60, bottom = 60;
  double width, height;
  Range x, y;
  double px(double v) const {
    return left + (std::log10(v) - std::log10(x.min)) / (std::log10(x.max) - std::log10(x.min)) * (width - left - right);
  }
  double py(double v) const {
    return height - bottom -
           (std::log10(v) - std::log10(y.min)) / (std::log10(y.max) - std::log10(y.min)) * (height - top - bottom);
  }
};

}  // namespace

std::string decade_text(double v) { return fmt::format("{}", v); }

std::string decade_si(double v, const std::string& unit) {
  static const std::pair<double, const char*> prefixes[] = {{1e18, "E"}, {1e15, "P"}, {1e12, "T"}, {1e9, "G"},
                                                            {1e6, "M"},  {1e3, "k"},  {1, ""}};
  for (const auto& [f, p] : prefixes)
    if (v >= f * 0.999) return fmt::format("{} {}{}", std::round(v / f * 1000) / 1000, p, unit);
  return fmt::format("{} {}", v, unit);
}

std::string render_svg(const Chart& chart, int width, int height) {
  Layout l = layout(chart);
  Frame f;
  f.width = width;
  f.height = height;
  f.x = l.x;
  f.y = l.y;
  std::ostringstream o;
  o << fmt::format(R"(<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" viewBox="0 0 {} {}" )"
                   R"(font-family="sans-serif" font-size="12" class="roofline-chart">)"
                   "\n",
                   width, height, width, height);
  o << "<style>" << svg_css() << "</style>\n";
  o << fmt::format(R"(<rect x="0" y="0" width="{}" height="{}" fill="white"/>)", width, height) << "\n";
  o << fmt::format(R"(<text x="{}" y="24" font-size="16" font-weight="bold">{}</text>)", f.left, xml_escape(chart.title))
    << "\n";
  if (!chart.subtitle.empty())
    o << fmt::format(R"(<text x="{}" y="42" fill="#555">{}</text>)", f.left, xml_escape(chart.subtitle)) << "\n";
  // Axes and decade grid.
  double x0 = f.left, x1 = width - f.right, y0 = f.top, y1 = height - f.bottom;
  o << "<g class=\"axes\">\n";
  for (double d : l.x.decades()) {
    double px = f.px(d);
    o << fmt::format(R"(<line class="grid" x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}"/>)", px, y0, px, y1)
      << fmt::format(R"(<text class="tick" x="{:.1f}" y="{:.1f}" text-anchor="middle">{}</text>)", px, y1 + 16,
                     decade_text(d))
      << "\n";
  }
  for (double d : l.y.decades()) {
    double py = f.py(d);
    o << fmt::format(R"(<line class="grid" x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}"/>)", x0, py, x1, py)
      << fmt::format(R"(<text class="tick" x="{:.1f}" y="{:.1f}" text-anchor="end">{}</text>)", x0 - 6, py + 4,
                     decade_si(d, "FLOP/s"))
      << "\n";
  }
  o << fmt::format(R"(<rect class="frame" x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}"/>)", x0, y0, x1 - x0,
                   y1 - y0)
    << "\n";
  o << fmt::format(R"(<text x="{:.1f}" y="{:.1f}" text-anchor="middle">Arithmetic intensity (FLOP/byte)</text>)",
                   (x0 + x1) / 2, height - 16.0)
    << "\n";
  o << fmt::format(R"svg(<text transform="translate(18 {:.1f}) rotate(-90)" text-anchor="middle">Performance (FLOP/s)</text>)svg",
                   (y0 + y1) / 2)
    << "\n</g>\n";
  // Ceilings: those shown by default (Chart::shown_ceilings); their labels at
  // the right end of compute roofs and the middle of slopes, moved up where
  // they would overlap one placed before (widths estimated: no text metrics here).
  struct Box {
    double x0, y0, x1, y1;
  };
  std::vector<Box> placed;
  auto place = [&](double x, double y, bool end_anchor, size_t chars) {
    const double w = 6.6 * double(chars), h = 13;
    for (int guard = 0; guard < 64; ++guard) {
      const Box b{end_anchor ? x - w : x - w / 2, y - h + 2, end_anchor ? x : x + w / 2, y + 2};
      bool hit = false;
      for (const Box& o : placed)
        if (b.x0 < o.x1 && o.x0 < b.x1 && b.y0 < o.y1 && o.y0 < b.y1) {
          y = o.y0 - 1;
          hit = true;
          break;
        }
      if (!hit) {
        placed.push_back(b);
        break;
      }
    }
    return y;
  };
  o << "<g class=\"ceilings\">\n";
  for (const auto& c : l.lines) {
    if (!c.shown) continue;
    std::string color = roof_color(chart, c.roof);
    const std::string value = format_si(c.value, c.kind == model::CeilingKind::Compute ? "FLOP/s" : "B/s");
    o << fmt::format(
        R"(<path class="ceiling {} {}" d="M{:.1f},{:.1f} L{:.1f},{:.1f}" stroke="{}"{}><title>{}</title></path>)",
        c.measured ? "measured" : "theoretical", model::to_string(c.kind), f.px(c.x0), f.py(c.y0), f.px(c.x1),
        f.py(c.y1), color, c.measured ? "" : R"( stroke-dasharray="6 4")",
        xml_escape(fmt::format("{} {} ({}): {}", c.roof, c.label, c.measured ? "measured" : "theoretical", value)));
    const bool compute = c.kind == model::CeilingKind::Compute;
    const double lx = compute ? f.px(c.x1) - 4 : (f.px(c.x0) + f.px(c.x1)) / 2;
    const std::string text = c.label + " " + value;
    const double ly = place(lx, compute ? f.py(c.y1) - 4 : (f.py(c.y0) + f.py(c.y1)) / 2 - 6, compute, text.size());
    o << fmt::format(R"(<text class="clabel" x="{:.1f}" y="{:.1f}" text-anchor="{}" fill="{}">{}</text>)", lx, ly,
                     compute ? "end" : "middle", color, xml_escape(text))
      << "\n";
  }
  o << "</g>\n<g class=\"ridges\">\n";
  for (const auto& r : l.ridges)
    if (r.shown)
      o << fmt::format(R"(<circle class="ridge" cx="{:.1f}" cy="{:.1f}" r="4" stroke="{}"><title>{}</title></circle>)",
                       f.px(r.ai), f.py(r.flops), roof_color(chart, r.roof),
                       xml_escape(fmt::format("ridge {} / {} ({}): AI {} FLOP/B", r.compute_id, r.memory_id,
                                              r.measured ? "measured" : "theoretical", format_sig(r.ai, 3))))
        << "\n";
  double longest = 0;  // points with a time are sized by it
  for (const auto& sr : chart.series)
    for (const auto& p : sr.points)
      if (p.seconds) longest = std::max(longest, *p.seconds);
  o << "</g>\n<g class=\"points\">\n";
  for (size_t si = 0; si < chart.series.size(); ++si) {
    const auto& s = chart.series[si];
    for (const auto& p : s.points) {
      if (!(p.ai > 0 && p.flops > 0)) continue;
      std::string tip = fmt::format("{}: {}\nAI {} FLOP/B, {}", s.name, p.name, format_sig(p.ai, 4),
                                    format_si(p.flops, "FLOP/s", 4));
      if (p.bandwidth) tip += ", " + format_si(*p.bandwidth, "B/s", 4);
      if (p.percent_of_roof) tip += fmt::format(", {}% of roof", format_sig(*p.percent_of_roof, 3));
      for (const auto& [k, v] : p.fields) tip += fmt::format("\n{}: {}", k, v);
      o << fmt::format(R"(<circle class="pt" cx="{:.1f}" cy="{:.1f}" r="{:.1f}" fill="{}"><title>{}</title></circle>)",
                       f.px(p.ai), f.py(p.flops), point_radius(p.seconds, longest), series_color(si), xml_escape(tip))
        << "\n";
    }
  }
  o << "</g>\n";
  // Legend: series, then line styles per roof.
  double lx = width - f.right + 16, ly = f.top + 8;
  o << "<g class=\"legend\">\n";
  for (size_t si = 0; si < chart.series.size(); ++si, ly += 18)
    o << fmt::format(R"(<circle cx="{:.1f}" cy="{:.1f}" r="5" fill="{}"/><text x="{:.1f}" y="{:.1f}">{}</text>)", lx,
                     ly, series_color(si), lx + 12, ly + 4, xml_escape(shorten(chart.series[si].name, 30)))
      << "\n";
  ly += 8;
  for (const auto& r : chart.roofs) {
    std::string color = roof_color(chart, r.name);
    o << fmt::format(R"(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="{}" stroke-width="2"/>)"
                     R"(<text x="{:.1f}" y="{:.1f}">{} measured</text>)",
                     lx - 6, ly, lx + 6, ly, color, lx + 12, ly + 4, xml_escape(shorten(r.name, 22)))
      << "\n";
    ly += 18;
    o << fmt::format(R"(<line x1="{:.1f}" y1="{:.1f}" x2="{:.1f}" y2="{:.1f}" stroke="{}" stroke-width="2" )"
                     R"(stroke-dasharray="6 4"/><text x="{:.1f}" y="{:.1f}">{} theoretical</text>)",
                     lx - 6, ly, lx + 6, ly, color, lx + 12, ly + 4, xml_escape(shorten(r.name, 22)))
      << "\n";
    ly += 22;
  }
  o << "</g>\n</svg>\n";
  return o.str();
}

}  // namespace roofline::report

// Chart layout and the static SVG.
#include <gtest/gtest.h>

#include <cmath>
#include <regex>

#include "tests/support/chart_fixture.hpp"

using namespace roofline;

namespace {
int count(const std::string& s, const std::string& what) {
  int n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}
}  // namespace

TEST(ChartLayout, AxesCoverEveryPointCeilingAndRidge) {
  auto c = test::synthetic_chart();
  auto l = report::layout(c);
  for (const auto& s : c.series)
    for (const auto& p : s.points) {
      EXPECT_GE(p.ai, l.x.min) << p.name;
      EXPECT_LE(p.ai, l.x.max) << p.name;
      EXPECT_GE(p.flops, l.y.min) << p.name;
      EXPECT_LE(p.flops, l.y.max) << p.name;
    }
  for (const auto& ce : c.roofs[0].roof.ceilings())
    if (ce.kind == model::CeilingKind::Compute) {
      EXPECT_GE(ce.value, l.y.min);
      EXPECT_LE(ce.value, l.y.max);
    }
  for (const auto& r : l.ridges) {
    EXPECT_GE(r.ai, l.x.min);
    EXPECT_LE(r.ai, l.x.max);
  }
  // Whole decades.
  EXPECT_DOUBLE_EQ(std::log10(l.x.min), std::round(std::log10(l.x.min)));
  EXPECT_DOUBLE_EQ(std::log10(l.y.max), std::round(std::log10(l.y.max)));
  // Every line stays inside the axes; slopes are y = bandwidth x AI.
  for (const auto& ln : l.lines) {
    EXPECT_GE(ln.x0, l.x.min * 0.999);
    EXPECT_LE(ln.x1, l.x.max * 1.001);
    EXPECT_LT(ln.x0, ln.x1);
    if (ln.kind == model::CeilingKind::Memory) {
      EXPECT_NEAR(ln.y0 / ln.x0, ln.value, ln.value * 1e-9);
      EXPECT_NEAR(ln.y1 / ln.x1, ln.value, ln.value * 1e-9);
    }
  }
  EXPECT_EQ(l.lines.size(), 6u);  // 4 measured + 2 datasheet
}

TEST(ChartLayout, RidgesAreWhereComputeMeetsDram) {
  auto l = report::layout(test::synthetic_chart());
  bool found = false;
  for (const auto& r : l.ridges)
    if (r.measured && r.compute_id == "fp32.cuda") {
      found = true;
      EXPECT_EQ(r.memory_id, "dram.copy");
      EXPECT_NEAR(r.ai, 60e12 / 2.9e12, 1e-9);
    }
  EXPECT_TRUE(found);
  // Measured compute roofs start where they meet the fastest measured slope (L2 here).
  for (const auto& ln : l.lines)
    if (ln.measured && ln.id == "fp32.cuda") EXPECT_NEAR(ln.x0, 60e12 / 9e12, 1e-9);
}

TEST(ChartSvg, WellFormedWithPointsCeilingsAndEscapedText) {
  auto c = test::synthetic_chart();
  std::string svg = report::render_svg(c);
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  EXPECT_EQ(count(svg, "class=\"pt\""), static_cast<int>(c.point_count()));
  EXPECT_EQ(count(svg, "class=\"ceiling measured"), 4);
  EXPECT_EQ(count(svg, "class=\"ceiling theoretical"), 2);
  EXPECT_EQ(count(svg, "stroke-dasharray=\"6 4\""), 2 + 1);  // theoretical lines + the legend's sample
  EXPECT_GE(count(svg, "class=\"ridge\""), 2);
  EXPECT_NE(svg.find("Test &lt;chart&gt; &amp; friends"), std::string::npos);
  EXPECT_EQ(svg.find("<chart>"), std::string::npos);
  EXPECT_NE(svg.find("gemm &lt;big&gt;"), std::string::npos);
  // Tags balance (every <g> closed) and no element is left open.
  EXPECT_EQ(count(svg, "<g "), count(svg, "</g>"));
  EXPECT_EQ(count(svg, "<title>"), count(svg, "</title>"));
  // Decade labels.
  EXPECT_NE(svg.find(">1 PFLOP/s<"), std::string::npos) << svg.substr(0, 3000);
  EXPECT_NE(svg.find(">0.01<"), std::string::npos);
}

TEST(ChartSvg, LogScaleMapsDecadesEvenly) {
  std::string svg = report::render_svg(test::synthetic_chart(), 1000, 620);
  // x tick labels sit at equal spacing: collect their x positions.
  std::regex tick(R"re(<text class="tick" x="([0-9.]+)" y="[0-9.]+" text-anchor="middle">)re");
  std::vector<double> xs;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), tick); it != std::sregex_iterator(); ++it)
    xs.push_back(std::stod((*it)[1]));
  ASSERT_GE(xs.size(), 4u);
  double step = xs[1] - xs[0];
  EXPECT_GT(step, 0);
  for (size_t i = 2; i < xs.size(); ++i) EXPECT_NEAR(xs[i] - xs[i - 1], step, 0.2);
  EXPECT_NEAR(xs.front(), 100, 0.2);        // left edge = x.min
  EXPECT_NEAR(xs.back(), 1000 - 250, 0.2);  // right edge = x.max
}

TEST(ChartHtml, SelfContainedWithEmbeddedData) {
  std::string html = report::render_html(test::synthetic_chart());
  EXPECT_EQ(html.find("http://"), html.find("http://www.w3.org/2000/svg"));  // only the SVG namespace name
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_EQ(html.find("<script src"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_NE(html.find("id=\"chart-data\""), std::string::npos);
  // Text with "<" cannot end the data script early.
  EXPECT_EQ(html.find("gemm <big>"), std::string::npos);
  EXPECT_NE(html.find("gemm \\u003cbig\\u003e"), std::string::npos);
}

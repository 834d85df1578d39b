// Renders the HTML chart in headless Chromium and checks that it drew: the
// page marks body[data-rendered] with the number of points it drew.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>

#include "roofline/report/chart.hpp"
#include "tests/support/chart_fixture.hpp"
#include "tests/support/cli.hpp"

using namespace roofline;

namespace {
std::string find_chromium() {
  for (const char* p : {"/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"})
    if (access(p, X_OK) == 0) return p;
  return {};
}

int count(const std::string& s, const std::string& what) {
  int n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}
}  // namespace

TEST(ChartRender, HeadlessChromiumDrawsEveryPointAndCeiling) {
  std::string chromium = find_chromium();
  if (chromium.empty()) GTEST_SKIP() << "chromium is not installed (tools/install-deps.sh --test installs it)";
  test::TempDir d;
  auto chart = test::synthetic_chart();
  test::write_file(d.file("chart.html"), report::render_html(chart));
  std::string cmd = "timeout 120 " + chromium +
                    " --headless --no-sandbox --disable-gpu --disable-quic --no-first-run"
                    " --disable-background-networking --disable-component-update --disable-sync"
                    " --user-data-dir=" + d.file("profile") + " --dump-dom file://" + d.file("chart.html") + " > " +
                    d.file("dom.html") + " 2> " + d.file("chromium.log");
  int rc = std::system(cmd.c_str());
  std::string dom = test::read_file(d.file("dom.html"));
  ASSERT_EQ(rc, 0) << "chromium failed: " << test::read_file(d.file("chromium.log"));
  size_t n = chart.point_count();
  EXPECT_NE(dom.find("data-rendered=\"" + std::to_string(n) + "\""), std::string::npos) << dom.substr(0, 2000);
  EXPECT_NE(dom.find("rendered " + std::to_string(n) + " points, 6 ceilings (6 shown)"), std::string::npos);
  EXPECT_EQ(count(dom, "class=\"pt\""), static_cast<int>(n));
  EXPECT_EQ(count(dom, "class=\"ceiling measured"), 4);
  EXPECT_EQ(count(dom, "class=\"ceiling theoretical"), 2);
  EXPECT_GE(count(dom, "class=\"ridge\""), 2);
  EXPECT_EQ(dom.find("data-rendered=\"error\""), std::string::npos);
}

// A device chart with a network's layers on it: legible by default (the
// ceilings that matter drawn, the other 20-odd behind a toggle), no two
// ceiling labels overlapping, and every point hoverable (its centre names it,
// also where repeated layers share a spot). The screenshot is kept in
// test-artifacts/ beside the build.
TEST(ChartRender, WorkloadChartIsLegibleAndEveryPointHoverable) {
  std::string chromium = find_chromium();
  if (chromium.empty()) GTEST_SKIP() << "chromium is not installed (tools/install-deps.sh --test installs it)";
  test::TempDir d;
  const auto chart = test::workload_chart();
  const std::string page = d.file("chart.html");
  test::write_file(page, report::render_html(chart));
  const std::string flags = " --headless --no-sandbox --disable-gpu --disable-quic --no-first-run"
                            " --disable-background-networking --disable-component-update --disable-sync"
                            " --hide-scrollbars --window-size=1400,1000 --user-data-dir=" + d.file("profile");
  const std::string dump = "timeout 120 " + chromium + flags + " --dump-dom 'file://" + page + "#selftest' > " +
                           d.file("dom.html") + " 2> " + d.file("chromium.log");
  ASSERT_EQ(std::system(dump.c_str()), 0) << test::read_file(d.file("chromium.log"));
  const std::string dom = test::read_file(d.file("dom.html"));
  const size_t n = chart.point_count();
  EXPECT_NE(dom.find("data-rendered=\"" + std::to_string(n) + "\""), std::string::npos) << dom.substr(0, 1500);
  EXPECT_NE(dom.find("data-hoverable=\"" + std::to_string(n) + "\""), std::string::npos)
      << "a point whose centre does not name it: " << dom.substr(0, 600);
  EXPECT_NE(dom.find("data-label-overlaps=\"0\""), std::string::npos) << dom.substr(0, 600);
  // Shown: dram and l2 (measured hides the datasheet's dram), fp32.cuda and bf16.tensor, measured.
  const report::Layout l = report::layout(chart);
  int shown = 0;
  for (const auto& line : l.lines) shown += line.shown ? 1 : 0;
  EXPECT_EQ(shown, 4);
  EXPECT_NE(dom.find("other ceilings ("), std::string::npos);
  // Axes fitted to what is shown: no decade above the bf16 roof's.
  EXPECT_LE(l.y.max, 1e16);
  const std::string artifacts = std::string(ROOFLINE_BINARY_DIR) + "/test-artifacts";
  std::system(("mkdir -p '" + artifacts + "'").c_str());
  const std::string shot = "timeout 120 " + chromium + flags + " --screenshot='" + artifacts +
                           "/roofline-workloads.png' 'file://" + page + "' > /dev/null 2>&1";
  EXPECT_EQ(std::system(shot.c_str()), 0);
  test::write_file(artifacts + "/roofline-workloads.html", report::render_html(chart));
}

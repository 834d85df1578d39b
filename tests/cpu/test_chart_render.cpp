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
  EXPECT_NE(dom.find("rendered " + std::to_string(n) + " points, 6 ceilings"), std::string::npos);
  EXPECT_EQ(count(dom, "class=\"pt\""), static_cast<int>(n));
  EXPECT_EQ(count(dom, "class=\"ceiling measured"), 4);
  EXPECT_EQ(count(dom, "class=\"ceiling theoretical"), 2);
  EXPECT_GE(count(dom, "class=\"ridge\""), 2);
  EXPECT_EQ(dom.find("data-rendered=\"error\""), std::string::npos);
}

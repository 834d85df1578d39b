// roofline report RUN_ID: a stored run as one HTML page with its devices'
// charts, opened in headless Chromium; bad run ids are named.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "roofline/store/db.hpp"
#include "roofline/store/results.hpp"
#include "tests/support/cli.hpp"

using roofline::test::run_cli;
using roofline::test::TempDir;

TEST(ReportCli, AStoredRunBecomesAPage) {
  TempDir dir;
  const auto dev = run_cli({"--db", dir.file("r.db"), "device", "--device", "cpu"});
  ASSERT_EQ(dev.exit_code, 0) << dev.err;
  std::int64_t id = 0;
  {
    roofline::store::Db db(dir.file("r.db"));
    const auto runs = roofline::store::list_runs(db, 1);
    ASSERT_EQ(runs.size(), 1u);
    id = runs[0].id;
    ASSERT_TRUE(roofline::store::run_report(db, id).has_value()) << "the run keeps what it printed";
  }
  const auto r = run_cli({"--db", dir.file("r.db"), "report", std::to_string(id), "--out", dir.file("pages")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string page = dir.file("pages") + "/run-" + std::to_string(id) + ".html";
  ASSERT_TRUE(std::filesystem::exists(page)) << r.out;
  const std::string html = roofline::test::read_file(page);
  EXPECT_NE(html.find("roofline device"), std::string::npos);
  EXPECT_NE(html.find("<table class=\"data\""), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos) << "the page needs no script";
  if (access("/usr/bin/chromium", X_OK) == 0) {
    const std::string cmd = "timeout 120 /usr/bin/chromium --headless --no-sandbox --disable-gpu --no-first-run "
                            "--user-data-dir=" + dir.file("profile") + " --dump-dom file://" + page + " > " +
                            dir.file("dom.html") + " 2>/dev/null";
    ASSERT_EQ(std::system(cmd.c_str()), 0);
    EXPECT_NE(roofline::test::read_file(dir.file("dom.html")).find("class=\"data\""), std::string::npos);
  }
  const auto missing = run_cli({"--db", dir.file("r.db"), "report", "999", "--out", dir.file("pages")});
  EXPECT_EQ(missing.exit_code, 2) << missing.err;
  EXPECT_NE(missing.err.find("has no run 999"), std::string::npos) << missing.err;
  EXPECT_NE(missing.err.find("roofline runs"), std::string::npos) << missing.err;
  {
    roofline::store::Db db(dir.file("r.db"));
    id = roofline::store::begin_run(db, {"ceilings", {"roofline", "ceilings"}});  // never finished: no report
  }
  const auto none = run_cli({"--db", dir.file("r.db"), "report", std::to_string(id), "--out", dir.file("pages")});
  EXPECT_NE(none.exit_code, 0);
  EXPECT_NE(none.err.find("has no stored report"), std::string::npos) << none.err;
}

// roofline report RUN_ID: a stored run as one HTML page with its devices'
// charts, opened in headless Chromium; bad run ids are named.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "roofline/core/json_text.hpp"
#include "roofline/core/report.hpp"
#include "roofline/profiler/profile_store.hpp"
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

// A run with a profile: the profile gets a page of its own (its tables and
// diagnoses), the run's page links to it, and it links back.
TEST(ReportCli, ARunsProfilesArePagesLinkedBothWays) {
  TempDir dir;
  std::int64_t run = 0, profile = 0;
  {
    roofline::store::Db db(dir.file("r.db"));
    run = roofline::store::begin_run(db, {"bench", {"roofline", "bench", "resnet18", "--profile"}});
    roofline::prof::ProfileData p;
    p.command = "roofline bench resnet18 <&> (3 eager steps)";
    p.exit_status = "in-process";
    p.complete = true;
    p.diagnoses.push_back({"launch-bound", "high", "Kernels <shorter> than their launches", "82% of the time", "use "
                           "CUDA graphs", 1e6});
    for (const char* range : {"resnet18/conv1/forward", "resnet18/fc/weight-grad"}) {
      roofline::prof::KernelSummary k;
      k.name = k.demangled = std::string("gemm_kernel<") + range + ">";
      k.nvtx_path = range;
      k.duration.add(2e5);
      p.kernels[k.name + '\x1f' + k.nvtx_path] = k;
    }
    profile = roofline::prof::store_profile(db, run, p, "resnet18 gpu bf16 batch 128 train");
    roofline::Report rep("bench");
    rep.add(roofline::Table("t", "A table")).col("x", "X").row({std::string("y")});
    rep.add(roofline::Table("bench.nets.layers", "resnet18 gpu bf16 batch 128 train: GPU time per layer"))
        .col("layer", "Layer").col("pass", "Pass")
        .row({std::string("conv1"), std::string("forward")})
        .row({std::string("bn1"), std::string("forward")});  // no kernel under its range: no link
    rep.add(roofline::Table("bench.nets.layers", "resnet18 gpu bf16 batch 128 infer: GPU time per layer"))
        .col("layer", "Layer").col("pass", "Pass").row({std::string("fc"), std::string("weight-grad")});
    roofline::store::finish_run(db, run, 0);
    roofline::store::save_run_report(db, run, roofline::json_text(roofline::to_json(rep)));
  }
  const auto r = run_cli({"--db", dir.file("r.db"), "report", std::to_string(run), "--out", dir.file("pages")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string run_page = roofline::test::read_file(dir.file("pages") + "/run-" + std::to_string(run) + ".html");
  const std::string file = "profile-" + std::to_string(profile) + ".html";
  EXPECT_NE(run_page.find("href=\"" + file + "\""), std::string::npos) << run_page;
  const std::string page = roofline::test::read_file(dir.file("pages") + "/" + file);
  EXPECT_NE(page.find("roofline profile " + std::to_string(profile) + ": resnet18 gpu bf16 batch 128 train"),
            std::string::npos);
  EXPECT_NE(page.find("href=\"run-" + std::to_string(run) + ".html\""), std::string::npos) << "no link back";
  EXPECT_NE(page.find("Kernels &lt;shorter&gt; than their launches"), std::string::npos) << "the diagnosis, escaped";
  EXPECT_EQ(page.find("<shorter>"), std::string::npos);
  // Layer rows link to the kernels of their range, and only where a kernel ran under it and the table is
  // of that profile's cell (the infer table's fc row belongs to no profile here).
  const auto anchor = page.find("<tr id=\"range-");
  ASSERT_NE(anchor, std::string::npos) << page;
  const std::string id = page.substr(anchor + 8, page.find('"', anchor + 8) - anchor - 8);
  EXPECT_NE(page.find("gemm_kernel&lt;resnet18/conv1/forward&gt;"), std::string::npos);
  const std::string href = "<a href=\"" + file + "#";
  size_t links = 0;
  for (size_t at = run_page.find(href); at != std::string::npos; at = run_page.find(href, at + 1)) ++links;
  EXPECT_EQ(links, 1u) << run_page;
  const size_t conv1 = run_page.find(href);
  const std::string target = run_page.substr(conv1 + href.size(), run_page.find('"', conv1 + href.size()) -
                                                                       conv1 - href.size());
  EXPECT_NE(page.find("<tr id=\"" + target + "\"><td>resnet18/conv1/forward"), std::string::npos)
      << "the conv1 row points at conv1's kernels: " << target;
  EXPECT_NE(run_page.find(">conv1</a>"), std::string::npos);
}

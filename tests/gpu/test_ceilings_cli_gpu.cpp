// `roofline ceilings --quick --device gpu` on a real GPU: exits 0, prints the
// tables, and every figure it printed is in the store (category "ceiling").
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "roofline/store/db.hpp"
#include "tests/support/cli.hpp"
#include "tests/support/gpu.hpp"

using roofline::test::run_cli;
using roofline::test::TempDir;

TEST(CeilingsCliGpu, QuickRunPrintsAndStoresTheFigures) {
  ROOFLINE_REQUIRE_GPU();
  TempDir dir;
  const std::string db = dir.file("r.db");
  // A subset keeps the test short; tools/device/ceilings.sh runs the whole thing.
  auto r = run_cli({"--db", db, "--json", "ceilings", "--quick", "--device", "gpu:0", "--only",
                    "dram.read,dram.memcpy,fp32.cuda,bf16.tensor,launch.latency,launch.cooperative,sync.grid,dram.latency,"
                    "dram.bytes_in_flight"},
                   {}, {}, 600);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  std::map<std::string, double> printed;
  for (const auto& t : j["tables"])
    for (const auto& row : t["rows"]) {
      const std::string name = row.contains("ceiling") ? row["ceiling"].get<std::string>() : row["figure"].get<std::string>();
      if (row.contains("measured") && row["measured"].is_number()) printed[name] = row["measured"].get<double>();
      if (row.contains("value") && row["value"].is_number()) printed[name] = row["value"].get<double>();
    }
  for (const char* want : {"dram.read", "dram.memcpy", "fp32.cuda", "bf16.tensor", "bf16.tensor.cublaslt",
                           "launch.latency", "launch.cooperative", "sync.grid", "dram.latency", "dram.bytes_in_flight"}) {
    ASSERT_TRUE(printed.count(want)) << want << " missing from " << r.out;
    EXPECT_GT(printed[want], 0) << want;
  }

  roofline::store::Db store(db, roofline::store::Db::Mode::ReadOnly);
  auto st = store.prepare("SELECT name, value FROM measurements WHERE category = 'ceiling'");
  std::map<std::string, double> stored;
  while (st.step()) stored[st.text(0)] = st.f64(1);
  for (const auto& [name, value] : printed) {
    ASSERT_TRUE(stored.count(name)) << name << " printed but not stored";
    EXPECT_TRUE(std::isfinite(stored[name]) && stored[name] > 0) << name;
  }
}

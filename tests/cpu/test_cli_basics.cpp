// The CLI's shared behaviour: version, help, unknown commands and options,
// the results database chosen by --db and ROOFLINE_DB, and store errors.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>

#include <nlohmann/json.hpp>

#include "roofline/store/db.hpp"
#include "tests/support/cli.hpp"

using roofline::test::run_cli;
using roofline::test::TempDir;

TEST(Cli, VersionAndHelp) {
  auto v = run_cli({"--version"});
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_NE(v.out.find("CUDA"), std::string::npos);
  auto h = run_cli({"--help"});
  EXPECT_EQ(h.exit_code, 0);
  EXPECT_NE(h.out.find("runs"), std::string::npos);
}

TEST(Cli, UnknownCommandIsAUsageError) {
  auto r = run_cli({"frobnicate"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("frobnicate"), std::string::npos) << r.err;
}

TEST(Cli, NoCommandIsAUsageError) {
  auto r = run_cli({});
  EXPECT_EQ(r.exit_code, 2);
}

TEST(Cli, DbOptionAndEnvironmentChooseTheDatabase) {
  TempDir dir;
  for (const char* name : {"a.db", "b.db", "roofline.db"}) roofline::store::Db(dir.file(name));
  auto a = run_cli({"--json", "runs", "--db", dir.file("a.db")});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_NE(nlohmann::json::parse(a.out)["tables"][0]["title"].get<std::string>().find("a.db"), std::string::npos);
  auto b = run_cli({"--json", "runs"}, {"ROOFLINE_DB=" + dir.file("b.db")});
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_NE(nlohmann::json::parse(b.out)["tables"][0]["title"].get<std::string>().find("b.db"), std::string::npos);
  // Default: ./roofline.db in the working directory.
  auto c = run_cli({"--json", "runs"}, {}, dir.path());
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_NE(nlohmann::json::parse(c.out)["tables"][0]["title"].get<std::string>().find("roofline.db"),
            std::string::npos);
}

TEST(Cli, StoreErrorsExitWithTheStoreCodeAndAHint) {
  TempDir dir;
  roofline::test::write_file(dir.file("junk.db"), std::string(4096, '\x42'));
  auto r = run_cli({"runs", "--db", dir.file("junk.db")});
  EXPECT_EQ(r.exit_code, 5);
  EXPECT_NE(r.err.find("not a roofline results database"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("what to do"), std::string::npos) << r.err;
  roofline::test::write_file(dir.file("plain"), "x");
  auto u = run_cli({"runs", "--db", dir.file("plain") + "/sub.db"});
  EXPECT_EQ(u.exit_code, 5) << u.err;
}

TEST(Cli, JsonAndCsvAreExclusive) {
  auto r = run_cli({"--json", "--csv", "runs"});
  EXPECT_EQ(r.exit_code, 2);
}

// Readers (runs, chart, profile --show) open the store read-only: they change
// nothing in any SQLite file given to them, and say what is wrong with it.
TEST(Cli, ReadersNeverChangeTheStoreAndSayWhatTheFileIs) {
  TempDir dir;
  auto missing = run_cli({"runs", "--db", dir.file("typo.db")});
  EXPECT_EQ(missing.exit_code, 5) << missing.err;
  EXPECT_NE(missing.err.find("there is no results store at"), std::string::npos) << missing.err;
  EXPECT_NE(::access(dir.file("typo.db").c_str(), F_OK), 0) << "a mistyped path must not be created";

  // Another program's SQLite file: listed as what it is, and left as it was.
  const std::string other = dir.file("other.db");
  ASSERT_EQ(std::system(("sqlite3 " + other + " 'CREATE TABLE t(x); INSERT INTO t VALUES (1);'").c_str()), 0);
  const std::string before = roofline::test::read_file(other);
  for (const char* cmd : {"runs", "chart"}) {
    auto r = run_cli({cmd, "--db", other});
    EXPECT_EQ(r.exit_code, 5) << cmd << ": " << r.err;
    EXPECT_NE(r.err.find("not a roofline results store"), std::string::npos) << r.err;
  }
  EXPECT_EQ(roofline::test::read_file(other), before) << "the file changed";
  EXPECT_NE(::access((other + "-wal").c_str(), F_OK), 0) << "switched to WAL";

  // A roofline store is read without being written.
  roofline::store::Db(dir.file("r.db"));
  const std::string store_before = roofline::test::read_file(dir.file("r.db"));
  auto r = run_cli({"runs", "--db", dir.file("r.db")});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(roofline::test::read_file(dir.file("r.db")), store_before);
}

// Numbers on the command line: a sign where none is allowed, a value out of
// range and an empty model list are usage errors that say so plainly (no
// 18446744073709551615, no 309-digit bound, nothing stored).
TEST(Cli, NumbersOutOfRangeAreRefusedPlainly) {
  TempDir dir;
  const std::string db = dir.file("r.db");
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{"bench", "simple-mlp", "--device", "cpu", "--seed", "-1"}, "-1 is not allowed"},
      {{"bench", "simple-mlp", "--device", "cpu", "--infer-reps", "0"}, "0 is not allowed"},
      {{"bench", "simple-mlp", "--device", "cpu", "--max-steps", "1.5"}, "not a whole number"},
      {{"bench", "simple-mlp", "--device", "cpu", "--seed", "99999999999999999999999"}, "is not allowed"},
      {{"runs", "-n", "0"}, "0 is not allowed: give a whole number of 1 or more"},
      {{"runs", "-n", "-1"}, "-1 is not allowed"},
      {{"profile", "--pm-sampling", "--pm-interval", "-5", "--", "/bin/true"}, "give a number greater than 0"},
      {{"bench", "", "--device", "cpu"}, "no model named"},
      {{"profile", "--pm-sampling", "--pm-interval", "20", "--", "/bin/true"}, "use --pm-interval 100 or more"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args = {"--db", db};
    args.insert(args.end(), c.args.begin(), c.args.end());
    auto r = run_cli(args);
    EXPECT_EQ(r.exit_code, 2) << c.says << ": " << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("17976931348623157"), std::string::npos) << r.err;
  }
  // Nothing ran: no run ended "ok" (a usage error found after the run was
  // recorded leaves it "failed", with the message).
  auto runs = run_cli({"--db", db, "--json", "runs"});
  if (runs.exit_code == 0)
    for (const auto& row : nlohmann::json::parse(runs.out)["tables"][0]["rows"]) EXPECT_NE(row["status"], "ok") << row;
}

// The results store: round trip, migrations, concurrent writers, a writer
// killed mid-transaction, and the files it must refuse without harming them.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "roofline/core/error.hpp"
#include "roofline/store/db.hpp"
#include "roofline/store/results.hpp"
#include "tests/support/cli.hpp"

using namespace roofline;
using namespace roofline::store;
using roofline::test::TempDir;

namespace {

std::int64_t count(Db& db, const std::string& table) {
  auto st = db.prepare("SELECT COUNT(*) FROM " + table);
  st.step();
  return st.i64(0);
}

MeasurementRecord figure(std::int64_t run, std::optional<std::int64_t> dev, const std::string& name, double v) {
  MeasurementRecord m;
  m.run_id = run;
  m.device_id = dev;
  m.category = "ceiling";
  m.name = name;
  m.unit = "B/s";
  m.value = v;
  m.time = summarize({1e-3, 1.1e-3, 0.9e-3});
  m.clock_mhz = 1980;
  m.params_json = R"({"bytes": 1024})";
  return m;
}

}  // namespace

TEST(Store, RoundTripOfRunsDevicesAndMeasurements) {
  TempDir dir;
  std::string path = dir.file("r.db");
  std::int64_t run = 0;
  {
    Db db(path);
    EXPECT_EQ(db.schema_version(), latest_schema_version());
    run = begin_run(db, {"ceilings", {"roofline", "ceilings", "--quick"}});
    auto dev = record_device(db, run, {"gpu", 0, "NVIDIA H100 80GB HBM3", "GPU-1234", R"({"sms":132})"});
    EXPECT_EQ(record_device(db, run, {"gpu", 0, "NVIDIA H100 80GB HBM3", "GPU-1234", "{}"}), dev) << "idempotent";
    add_measurement(db, figure(run, dev, "dram.read", 3.1e12));
    add_measurement(db, figure(run, dev, "dram.read", 3.2e12));
    finish_run(db, run, 0);
  }
  Db db(path, Db::Mode::ReadOnly);
  auto runs = list_runs(db, 10);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].id, run);
  EXPECT_EQ(runs[0].command, "ceilings");
  EXPECT_EQ(runs[0].status, "ok");
  EXPECT_EQ(runs[0].measurements, 2);
  EXPECT_EQ(runs[0].devices, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(nlohmann::json::parse(runs[0].argv)[2], "--quick");
  auto latest = latest_measurement(db, "NVIDIA H100 80GB HBM3", "dram.read");
  ASSERT_TRUE(latest);
  EXPECT_DOUBLE_EQ(latest->value, 3.2e12);
  auto st = db.prepare("SELECT median_s, q1_s, q3_s, samples, clock_mhz, params FROM measurements ORDER BY id LIMIT 1");
  ASSERT_TRUE(st.step());
  EXPECT_DOUBLE_EQ(st.f64(0), 1e-3);
  EXPECT_EQ(st.i64(3), 3);
  EXPECT_DOUBLE_EQ(st.f64(4), 1980);
  EXPECT_EQ(nlohmann::json::parse(st.text(5))["bytes"], 1024);
}

TEST(Store, MigratesAnOlderDatabaseKeepingItsData) {
  TempDir dir;
  std::string path = dir.file("old.db");
  {
    Db v1(path, Db::Mode::ReadWrite, 1);  // a database as the first release wrote it
    EXPECT_EQ(v1.schema_version(), 1);
    auto run = begin_run(v1, {"device", {"roofline", "device"}});
    add_measurement(v1, figure(run, std::nullopt, "mem.read", 1e11));
  }
  Db db(path);  // opening with this build migrates to the latest version
  EXPECT_EQ(db.schema_version(), latest_schema_version());
  EXPECT_EQ(count(db, "runs"), 1);
  EXPECT_EQ(count(db, "measurements"), 1);
  auto st = db.prepare("SELECT COUNT(*) FROM sqlite_master WHERE type='table' AND name='measurements'");
  st.step();
  EXPECT_EQ(st.i64(0), 1);
}

TEST(Store, RefusesADatabaseFromANewerSchemaWithoutTouchingIt) {
  TempDir dir;
  std::string path = dir.file("new.db");
  {
    Db db(path);
    begin_run(db, {"device", {"roofline"}});
    db.exec("PRAGMA user_version=" + std::to_string(latest_schema_version() + 5));
  }
  std::string before = roofline::test::read_file(path);
  try {
    Db db(path);
    FAIL() << "opened a newer database";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Store);
    EXPECT_NE(std::string(e.what()).find("newer"), std::string::npos) << e.what();
    EXPECT_FALSE(e.hint().empty());
  }
  EXPECT_EQ(roofline::test::read_file(path), before);
}

TEST(Store, RefusesACorruptFileWithoutTouchingIt) {
  TempDir dir;
  std::string path = dir.file("corrupt.db");
  std::string garbage(8192, 'x');
  for (size_t i = 0; i < garbage.size(); ++i) garbage[i] = static_cast<char>((i * 7919) % 251);
  roofline::test::write_file(path, garbage);
  try {
    Db db(path);
    FAIL() << "opened garbage";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Store);
    EXPECT_NE(std::string(e.what()).find("not a roofline results database"), std::string::npos) << e.what();
  }
  EXPECT_EQ(roofline::test::read_file(path), garbage);
}

// A store whose header is sound but whose table pages are damaged: the damage
// shows only when a statement reaches it, after the open, so the error must not
// claim the file was left unchanged.
TEST(Store, DamageFoundWhileWritingIsSaidWithoutClaimingTheFileUnchanged) {
  TempDir dir;
  std::string path = dir.file("damaged.db");
  { Db db(path); }
  std::string bytes = roofline::test::read_file(path);
  ASSERT_GT(bytes.size(), 8192u);
  for (size_t i = 4096; i < bytes.size(); ++i) bytes[i] = static_cast<char>((i * 7919) % 251);
  roofline::test::write_file(path, bytes);
  try {
    Db db(path);
    begin_run(db, {"device", {"roofline", "device"}});
    FAIL() << "wrote a run into a damaged store";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Store);
    EXPECT_NE(std::string(e.what()).find("is damaged"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find("not changed"), std::string::npos) << e.what();
    EXPECT_EQ(e.hint().find("not changed"), std::string::npos) << e.hint();
  }
}

TEST(Store, ReportsAnUnwritableLocation) {
  if (geteuid() == 0) {
    // root ignores permissions; a path under a regular file is unwritable for everyone.
    TempDir dir;
    roofline::test::write_file(dir.file("plain"), "x");
    EXPECT_THROW(Db(dir.file("plain") + "/r.db"), Error);
    return;
  }
  TempDir dir;
  chmod(dir.path().c_str(), 0500);
  EXPECT_THROW(Db(dir.file("r.db")), Error);
}

TEST(Store, TwoWritersAtOnceLoseNothing) {
  TempDir dir;
  std::string path = dir.file("two.db");
  { Db db(path); }
  constexpr int kRows = 200;
  pid_t kids[2];
  for (int k = 0; k < 2; ++k) {
    kids[k] = fork();
    ASSERT_GE(kids[k], 0);
    if (kids[k] == 0) {
      try {
        Db db(path);
        auto run = begin_run(db, {"writer", {"w" + std::to_string(k)}});
        for (int i = 0; i < kRows; ++i) {
          Transaction tx(db);
          add_measurement(db, figure(run, std::nullopt, "w" + std::to_string(k), i));
          tx.commit();
        }
        finish_run(db, run, 0);
        _exit(0);
      } catch (...) {
        _exit(1);
      }
    }
  }
  for (pid_t kid : kids) {
    int status = 0;
    waitpid(kid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  Db db(path);
  EXPECT_EQ(count(db, "measurements"), 2 * kRows);
  EXPECT_EQ(count(db, "runs"), 2);
}

TEST(Store, AWriterKilledMidTransactionLeavesCommittedDataIntact) {
  TempDir dir;
  std::string path = dir.file("killed.db");
  {
    Db db(path);
    auto run = begin_run(db, {"before", {}});
    add_measurement(db, figure(run, std::nullopt, "kept", 1));
    finish_run(db, run, 0);
  }
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  pid_t kid = fork();
  ASSERT_GE(kid, 0);
  if (kid == 0) {
    Db db(path);
    auto run = begin_run(db, {"victim", {}});
    Transaction tx(db);
    for (int i = 0; i < 1000; ++i) add_measurement(db, figure(run, std::nullopt, "lost", i));
    char c = 'r';
    if (write(ready[1], &c, 1) != 1) _exit(2);
    pause();  // killed here, transaction open
    _exit(0);
  }
  char c;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  kill(kid, SIGKILL);
  waitpid(kid, nullptr, 0);
  Db db(path);
  auto st = db.prepare("SELECT COUNT(*) FROM measurements WHERE name='lost'");
  st.step();
  EXPECT_EQ(st.i64(0), 0);
  auto kept = db.prepare("SELECT COUNT(*) FROM measurements WHERE name='kept'");
  kept.step();
  EXPECT_EQ(kept.i64(0), 1);
  // The killed run's row was committed before its transaction began: it stays 'running'.
  auto runs = list_runs(db, 10);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].command, "victim");
  EXPECT_EQ(runs[0].status, "running");
  // And the database still takes writes.
  auto run = begin_run(db, {"after", {}});
  add_measurement(db, figure(run, std::nullopt, "after", 1));
  EXPECT_EQ(count(db, "measurements"), 2);
}

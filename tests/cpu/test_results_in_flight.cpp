// What is measured is stored as it is measured (docs/store.md): a run killed
// half-way keeps the figures it printed, and an output that cannot be written
// is refused before any work is done, not after.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <regex>
#include <string>
#include <thread>

#include "roofline/store/db.hpp"
#include "tests/support/cli.hpp"

using namespace roofline;

namespace {

int count_rows(const std::string& db_path, const std::string& table) {
  store::Db db(db_path, store::Db::Mode::ReadOnly);
  auto st = db.prepare("SELECT COUNT(*) FROM " + table);
  st.step();
  return static_cast<int>(st.i64(0));
}

}  // namespace

TEST(ResultsInFlight, CpuCeilingsKilledHalfWayKeepTheFiguresTheyPrinted) {
  test::TempDir dir;
  const std::string log = dir.file("err.txt"), db = dir.file("r.db");
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 2);
    dup2(fd, 1);
    execl(ROOFLINE_BINARY, ROOFLINE_BINARY, "--db", db.c_str(), "ceilings", "--device", "cpu", "--quick", nullptr);
    _exit(127);
  }
  // A figure's progress line: two spaces, its name, its value with a unit.
  const std::regex figure_line(R"(\n  (fp32|fp64|mem|cache)\.[a-z0-9.]+ +[0-9])");
  auto printed = [&] {
    const std::string text = test::read_file(log);
    return std::distance(std::sregex_iterator(text.begin(), text.end(), figure_line), std::sregex_iterator());
  };
  for (int i = 0; i < 1200 && printed() < 2; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const auto seen = printed();
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_GE(seen, 2) << "the run printed no figures in 60 s: " << test::read_file(log);
  EXPECT_GE(count_rows(db, "measurements"), seen) << "figures printed before the kill are lost";
}

TEST(ResultsInFlight, AnUnwritableTraceIsRefusedBeforeTheProgramRuns) {
  test::TempDir dir;
  const auto t0 = std::chrono::steady_clock::now();
  auto r = test::run_cli({"--db", dir.file("r.db"), "profile", "--trace", "/nonexistent/t.json", "--", "/bin/sleep", "5"});
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("cannot write the trace file '/nonexistent/t.json'"), std::string::npos) << r.err;
  EXPECT_LT(s, 4.0) << "the program ran before the trace path was checked";
}

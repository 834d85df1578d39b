// `roofline profile` end to end on a machine without a GPU: programs that
// never initialise CUDA (so the injection library is never loaded: "no GPU
// activity" is the right answer), exit codes, signals, bad input, and the
// stored/loaded profile paths. The GPU side is in tests/gpu/test_profile_gpu.cpp.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include "roofline/core/strings.hpp"
#include "tests/support/cli.hpp"

using namespace roofline;
using roofline::test::run_cli;

#if ROOFLINE_HAVE_CUDA
#define REQUIRE_INJECTION() (void)0
#else
#define REQUIRE_INJECTION() GTEST_SKIP() << "built without CUDA: `roofline profile` has no injection library"
#endif

namespace {
std::string fixture() { return std::string(ROOFLINE_TEST_DATA) + "/profiles/cnn_train_h100.json"; }
}  // namespace

TEST(ProfileCli, ProgramWithoutCudaRunsAndReportsNoGpuActivity) {
  REQUIRE_INJECTION();
  test::TempDir dir;
  auto r = run_cli({"--db", dir.file("r.db"), "profile", "--", "/bin/true"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("exited 0"), std::string::npos) << r.out;
  // /bin/true never calls cuInit, so the CUDA driver never loads the library.
  EXPECT_NE(r.out.find("no GPU activity was seen"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("never initialised CUDA"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("stored as profile 1"), std::string::npos) << r.out;
}

TEST(ProfileCli, ProgramNotFound) {
  REQUIRE_INJECTION();
  test::TempDir dir;
  auto r = run_cli({"--db", dir.file("r.db"), "profile", "--", "no-such-program-roofline"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("program 'no-such-program-roofline' not found in PATH"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("what to do"), std::string::npos);
  auto r2 = run_cli({"--db", dir.file("r.db"), "profile", "--", dir.file("missing")});
  EXPECT_EQ(r2.exit_code, 3);
  EXPECT_NE(r2.err.find("not found"), std::string::npos) << r2.err;
  // A file that is there but cannot be run.
  test::write_file(dir.file("data.txt"), "not a program");
  auto r3 = run_cli({"--db", dir.file("r.db"), "profile", "--", dir.file("data.txt")});
  EXPECT_EQ(r3.exit_code, 3);
  EXPECT_NE(r3.err.find("not an executable"), std::string::npos) << r3.err;
}

TEST(ProfileCli, ExitCodeOfTheProgramIsPassedOn) {
  REQUIRE_INJECTION();
  test::TempDir dir;
  auto r = run_cli({"--db", dir.file("r.db"), "profile", "--", "sh", "-c", "exit 7"});
  EXPECT_EQ(r.exit_code, 7);
  EXPECT_NE(r.out.find("exited 7"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("roofline exits with code 7 too"), std::string::npos) << r.out;
  // The run itself succeeded: it is stored as such, with the program's status.
  auto runs = run_cli({"--db", dir.file("r.db"), "--json", "runs"});
  auto j = nlohmann::json::parse(runs.out);
  EXPECT_EQ(j["tables"][0]["rows"][0]["status"], "ok");
}

TEST(ProfileCli, ProgramKilledOrCrashing) {
  REQUIRE_INJECTION();
  test::TempDir dir;
  auto killed = run_cli({"--db", dir.file("r.db"), "profile", "--", "sh", "-c", "kill -TERM $$"});
  EXPECT_EQ(killed.exit_code, 128 + SIGTERM);
  EXPECT_NE(killed.out.find("killed by signal 15 (SIGTERM)"), std::string::npos) << killed.out;
  auto crashed = run_cli({"--db", dir.file("r.db"), "profile", "--", "sh", "-c", "kill -SEGV $$"});
  EXPECT_EQ(crashed.exit_code, 128 + SIGSEGV);
  EXPECT_NE(crashed.out.find("crashed (SIGSEGV)"), std::string::npos) << crashed.out;
}

TEST(ProfileCli, SigtermToRooflineReachesTheProgram) {
  REQUIRE_INJECTION();
  test::TempDir dir;
  std::string out = dir.file("out.txt");
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    int fd = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    std::string db = dir.file("r.db");
    execl(ROOFLINE_BINARY, ROOFLINE_BINARY, "--db", db.c_str(), "profile", "--", "sleep", "30", nullptr);
    _exit(127);
  }
  // Wait until roofline has started the program, then stop roofline.
  for (int i = 0; i < 100 && !contains(test::read_file(out), "profiling sleep"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  kill(pid, SIGTERM);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status)) << test::read_file(out);
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGTERM);
  EXPECT_NE(test::read_file(out).find("killed by signal 15 (SIGTERM)"), std::string::npos) << test::read_file(out);
}

TEST(ProfileCli, JsonOutputStaysCleanOfTheProgramsOutput) {
  REQUIRE_INJECTION();
  test::TempDir dir;
  auto r = run_cli({"--db", dir.file("r.db"), "--json", "profile", "--", "sh", "-c", "echo hello-from-program"});
  EXPECT_EQ(r.exit_code, 0);
  auto j = nlohmann::json::parse(r.out);  // throws if the program's line got in
  EXPECT_EQ(j["command"], "profile");
  EXPECT_NE(r.err.find("hello-from-program"), std::string::npos);
}

TEST(ProfileCli, BadUsage) {
  test::TempDir dir;
  auto none = run_cli({"--db", dir.file("r.db"), "profile"});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("no program to profile"), std::string::npos) << none.err;
  // The program never starts CUDA: the options run (and need the CUDA build).
  for (const char* opt : {"--counters", "--pm-sampling"}) {
    auto r = run_cli({"--db", dir.file("r.db"), "profile", opt, "--", "/bin/true"});
    EXPECT_EQ(r.exit_code, ROOFLINE_HAVE_CUDA ? 0 : 6) << opt << r.err;
  }
  auto both = run_cli({"--db", dir.file("r.db"), "profile", "--counters", "--pm-sampling", "--", "/bin/true"});
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_NE(both.err.find("cannot run together"), std::string::npos) << both.err;
  auto interval = run_cli({"--db", dir.file("r.db"), "profile", "--pm-interval", "50", "--", "/bin/true"});
  EXPECT_EQ(interval.exit_code, 2);
  EXPECT_NE(interval.err.find("--pm-interval needs --pm-sampling"), std::string::npos) << interval.err;
  auto bad = run_cli({"--db", dir.file("r.db"), "profile", "--load", dir.file("nope.json")});
  EXPECT_EQ(bad.exit_code, 2);
  test::write_file(dir.file("junk.json"), "{ not json");
  auto junk = run_cli({"--db", dir.file("r.db"), "profile", "--load", dir.file("junk.json")});
  EXPECT_EQ(junk.exit_code, 3);
  EXPECT_NE(junk.err.find("is not a roofline profile"), std::string::npos) << junk.err;
  auto missing = run_cli({"--db", dir.file("r.db"), "profile", "--show", "42"});
  EXPECT_EQ(missing.exit_code, 3);
  EXPECT_NE(missing.err.find("no profile 42"), std::string::npos) << missing.err;
}

// --delay, --duration and --capture-range: numbers that are not durations,
// ranges that are not ranges, and combinations that mean nothing are usage
// errors (exit 2) that say what to give, before any program runs.
TEST(ProfileCli, CaptureOptionsAreValidated) {
  test::TempDir dir;
  struct Case {
    std::vector<std::string> args;
    const char* says;
  } cases[] = {
      {{"--delay=-1"}, "-1 is not allowed: give a number of 0 or more"},
      {{"--delay", "nan"}, "nan is not allowed: give a number of 0 or more"},
      {{"--delay", "inf"}, "inf is not allowed"},
      {{"--delay", "soon"}, "'soon' is not a number"},
      {{"--duration", "0"}, "0 is not allowed: give a number greater than 0"},
      {{"--duration=-2"}, "-2 is not allowed: give a number greater than 0"},
      {{"--delay", "2e6"}, "--delay 2000000 s is longer than roofline accepts (1000000 s, 11.6 days)"},
      {{"--duration", "1e7"}, "--duration 10000000 s is longer than roofline accepts"},
      {{"--capture-range", "cudaProfilerApi"}, "--capture-range: 'cudaProfilerApi' is not a capture range"},
      {{"--capture-range", ""}, "--capture-range: '' is not a capture range"},
      {{"--capture-range", "nvtx:"}, "nvtx: needs the range's name"},
      {{"--counters", "--capture-range", "cuda-profiler-api"}, "--counters cannot be combined with a capture range"},
      {{"--counters", "--delay", "1"}, "--counters cannot be combined with a capture range"},
  };
  for (const auto& k : cases) {
    std::vector<std::string> cli = {"--db", dir.file("r.db"), "profile"};
    cli.insert(cli.end(), k.args.begin(), k.args.end());
    cli.insert(cli.end(), {"--", "/bin/true"});
    auto r = run_cli(cli);
    EXPECT_EQ(r.exit_code, 2) << k.args[0] << " " << r.err;
    EXPECT_NE(r.err.find(k.says), std::string::npos) << r.err;
  }
  // A stored or loaded profile keeps the capture it was taken with.
  auto load = run_cli({"--db", dir.file("r.db"), "profile", "--delay", "1", "--load", fixture()});
  EXPECT_EQ(load.exit_code, 2);
  EXPECT_NE(load.err.find("not of a profile it prints (--show, --load)"), std::string::npos) << load.err;
  // Good values run the program (which never starts CUDA here).
  auto good = run_cli({"--db", dir.file("r.db"), "profile", "--delay", "0.5", "--duration", "2", "--capture-range",
                       "nvtx:step", "--", "/bin/true"});
  EXPECT_EQ(good.exit_code, ROOFLINE_HAVE_CUDA ? 0 : 6) << good.err;
}

TEST(ProfileCli, LoadsARecordedProfile) {
  test::TempDir dir;
  auto r = run_cli({"--db", dir.file("r.db"), "profile", "--load", fixture(), "--label", "60/train", "--top", "5"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  for (const char* s :
       {"cuda_gpu_kern_sum", "cuda_api_sum", "cuda_gpu_mem_time_sum", "cuda_gpu_mem_size_sum", "cuda_kern_exec_sum",
        "Utilization", "60/train", "NVTX ranges", "train/step/forward", "fusion candidates", "NVIDIA H100 80GB HBM3"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s;
  EXPECT_EQ(r.out.find("stored as run"), std::string::npos);  // printing measures nothing
  auto full = run_cli({"--db", dir.file("r.db"), "profile", "--load", fixture(), "--full-names"});
  EXPECT_NE(full.out.find("void at::native::reduce_kernel<float, at::native::ReduceOp<float> >"), std::string::npos);
}

TEST(ProfileCli, StoredProfileShowsAgain) {
  REQUIRE_INJECTION();
  test::TempDir dir;
  auto r = run_cli({"--db", dir.file("r.db"), "profile", "--label", "smoke", "--", "sh", "-c", "exit 0"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto s = run_cli({"--db", dir.file("r.db"), "--json", "profile", "--show", "1"});
  ASSERT_EQ(s.exit_code, 0) << s.err;
  auto j = nlohmann::json::parse(s.out);
  bool found = false;
  for (const auto& t : j["tables"])
    if (t["id"] == "profile")
      for (const auto& row : t["rows"])
        if (row["key"] == "command") found = row["value"] == "sh -c exit 0";
  EXPECT_TRUE(found) << s.out;
}

#if !ROOFLINE_HAVE_CUDA
TEST(ProfileCli, WithoutCudaSaysSo) {
  test::TempDir dir;
  auto r = run_cli({"--db", dir.file("r.db"), "profile", "--", "/bin/true"});
  EXPECT_EQ(r.exit_code, 6);
  EXPECT_NE(r.err.find("built without CUDA"), std::string::npos) << r.err;
}
#endif

// libroofline_inject.so builds, loads, exports exactly its entry points, and
// goes through its life cycle in a child process: profile written at exit,
// on SIGTERM (then the process still dies of it), and as periodic snapshots
// that survive SIGKILL. Without a GPU driver CUPTI cannot subscribe: the
// library must say so in the profile and let the program run on.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "roofline/profiler/injection_config.hpp"
#include "tests/support/cli.hpp"

namespace fs = std::filesystem;

#if ROOFLINE_HAVE_CUDA

namespace {

std::string library() {
  return (fs::path(ROOFLINE_BINARY).parent_path().parent_path() / "lib" / "libroofline_inject.so").string();
}

// The configuration `roofline profile` would pass, with the profile folder `dir`.
void write_profile_dir(const std::string& dir) {
  roofline::prof::InjectionConfig c;
  c.out_dir = dir;
  const auto [name, value] = c.environment_variable();
  setenv(name.c_str(), value.c_str(), 1);
}

// Runs `body` in a child that has loaded the library and called
// InitializeInjection() with the profile folder `dir`; returns the wait status.
template <class F>
int in_child(const std::string& dir, F body, int kill_after_file = 0) {
  pid_t pid = fork();
  if (pid == 0) {
    write_profile_dir(dir);
    void* h = dlopen(library().c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) _exit(90);
    auto init = reinterpret_cast<int (*)()>(dlsym(h, "InitializeInjection"));
    if (!init || init() != 1) _exit(91);
    body();
    std::exit(0);  // runs the atexit handlers, as a program's normal end does
  }
  if (kill_after_file) {
    // Wait for the first periodic snapshot, then kill without warning.
    std::string f = dir + "/profile-" + std::to_string(pid) + ".json";
    for (int i = 0; i < 400 && !fs::exists(f); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(25));
    kill(pid, kill_after_file);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

nlohmann::json read_profile(const std::string& dir, int pid) {
  std::ifstream f(dir + "/profile-" + std::to_string(pid) + ".json");
  if (!f) return nullptr;
  return nlohmann::json::parse(f);
}

int only_profile_pid(const std::string& dir) {
  int pid = 0, n = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::string name = e.path().filename().string();
    if (name.rfind("profile-", 0) == 0 && name.size() > 13 && name.substr(name.size() - 5) == ".json") {
      pid = std::atoi(name.substr(8).c_str());
      ++n;
    }
  }
  return n == 1 ? pid : -n;
}

}  // namespace

TEST(ProfileInject, LoadsAndExportsOnlyItsEntryPoints) {
  ASSERT_TRUE(fs::exists(library())) << library();
  void* h = dlopen(library().c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(h, nullptr) << dlerror();
  EXPECT_NE(dlsym(h, "InitializeInjection"), nullptr);
  EXPECT_NE(dlsym(h, "InitializeInjectionNvtx2"), nullptr);
  // The aggregation code is inside, but hidden: nothing to clash with the program's symbols.
  EXPECT_EQ(dlsym(h, "_ZN8roofline4prof10Aggregator8snapshotEv"), nullptr);
  EXPECT_EQ(dlsym(h, "_ZNK8roofline4prof10Aggregator8snapshotEv"), nullptr);
  dlclose(h);
}

TEST(ProfileInject, WritesACompleteProfileAtExit) {
  roofline::test::TempDir dir;
  int status = in_child(dir.path(), [] {});
  ASSERT_TRUE(WIFEXITED(status)) << status;
  ASSERT_EQ(WEXITSTATUS(status), 0);
  int pid = only_profile_pid(dir.path());
  ASSERT_GT(pid, 0);
  auto j = read_profile(dir.path(), pid);
  EXPECT_TRUE(j["complete"].get<bool>());
  EXPECT_EQ(j["pid"].get<int>(), pid);
  EXPECT_NE(j["command"].get<std::string>().find("roofline_tests"), std::string::npos);
  EXPECT_TRUE(j["kernels"].empty());
  // No temporary files left behind.
  for (const auto& e : fs::directory_iterator(dir.path())) EXPECT_NE(e.path().extension(), ".tmp");
  if (roofline::test::read_file("/proc/driver/nvidia/version").empty()) {
    // No driver: CUPTI could not subscribe, and the profile says so.
    ASSERT_FALSE(j["warnings"].empty());
    EXPECT_NE(j["warnings"][0].get<std::string>().find("cuptiSubscribe"), std::string::npos);
  }
}

TEST(ProfileInject, SigtermWritesASnapshotAndStillEndsTheProcess) {
  roofline::test::TempDir dir;
  int status = in_child(dir.path(), [] {
    raise(SIGTERM);
    // Not reached: the default action of SIGTERM still applies.
    _exit(0);
  });
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
  int pid = only_profile_pid(dir.path());
  ASSERT_GT(pid, 0);
  EXPECT_FALSE(read_profile(dir.path(), pid)["complete"].get<bool>());
}

TEST(ProfileInject, SigintWithoutAHandlerEndsTheProcessAfterTheSnapshot) {
  roofline::test::TempDir dir;
  int status = in_child(dir.path(), [] {
    raise(SIGINT);
    _exit(0);  // not reached
  });
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGINT);
  int pid = only_profile_pid(dir.path());
  ASSERT_GT(pid, 0);
  EXPECT_FALSE(read_profile(dir.path(), pid)["complete"].get<bool>());
}

namespace {
volatile sig_atomic_t g_handled = 0;
}

TEST(ProfileInject, ProgramsOwnSigintHandlerStillRuns) {
  // A handler installed before CUDA starts (Python's, which raises
  // KeyboardInterrupt) is chained: it runs, and the program goes on.
  roofline::test::TempDir dir;
  pid_t pid = fork();
  if (pid == 0) {
    signal(SIGINT, [](int) { g_handled = 1; });
    write_profile_dir(dir.path());
    void* h = dlopen(library().c_str(), RTLD_NOW | RTLD_LOCAL);
    auto init = h ? reinterpret_cast<int (*)()>(dlsym(h, "InitializeInjection")) : nullptr;
    if (!init) _exit(90);
    init();
    raise(SIGINT);
    std::exit(g_handled ? 0 : 1);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  ASSERT_TRUE(WIFEXITED(st));
  EXPECT_EQ(WEXITSTATUS(st), 0);
  auto j = read_profile(dir.path(), pid);
  ASSERT_FALSE(j.is_null());
  EXPECT_TRUE(j["complete"].get<bool>());  // it ended normally, after its handler
}

TEST(ProfileInject, SigkillLeavesThePeriodicSnapshot) {
  roofline::test::TempDir dir;
  int status = in_child(
      dir.path(), [] { sleep(30); }, SIGKILL);
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGKILL);
  int pid = only_profile_pid(dir.path());
  ASSERT_GT(pid, 0);
  auto j = read_profile(dir.path(), pid);
  EXPECT_FALSE(j["complete"].get<bool>());
}

TEST(ProfileInject, MalformedConfigurationIsNamedAndTheProgramRunsOn) {
  // Only a hand-set ROOFLINE_PROFILE_CONFIG can be malformed: the library says
  // what is wrong on stderr, profiles nothing, and the program is unharmed.
  roofline::test::TempDir dir;
  const std::string err = dir.file("stderr.txt");
  pid_t pid = fork();
  if (pid == 0) {
    const std::string bad = R"({"out_dir": ")" + dir.path() + R"(", "trace": "yes"})";
    setenv("ROOFLINE_PROFILE_CONFIG", bad.c_str(), 1);
    if (!std::freopen(err.c_str(), "w", stderr)) _exit(92);
    void* h = dlopen(library().c_str(), RTLD_NOW | RTLD_LOCAL);
    auto init = h ? reinterpret_cast<int (*)()>(dlsym(h, "InitializeInjection")) : nullptr;
    if (!init || init() != 1) _exit(91);
    std::exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(only_profile_pid(dir.path()), 0);  // no profile file
  const std::string said = roofline::test::read_file(err);
  EXPECT_NE(said.find("the profiler could not start: ROOFLINE_PROFILE_CONFIG: trace must be true or false"),
            std::string::npos)
      << said;
}

TEST(ProfileInject, ForkedChildWithoutGpuWorkWritesNothing) {
  roofline::test::TempDir dir;
  int status = in_child(dir.path(), [] {
    pid_t c = fork();
    if (c == 0) std::exit(0);  // atexit handlers run in the child too
    int s = 0;
    waitpid(c, &s, 0);
  });
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_GT(only_profile_pid(dir.path()), 0);  // the parent's file only
}

#else

TEST(ProfileInject, NotBuiltWithoutCuda) { GTEST_SKIP() << "built without CUDA: no injection library"; }

#endif

#include "roofline/profiler/launcher.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <nlohmann/json.hpp>

#include "roofline/core/env.hpp"
#include "roofline/core/error.hpp"
#include "roofline/core/strings.hpp"

extern char** environ;

namespace roofline::prof {

namespace fs = std::filesystem;

namespace {

bool is_executable_file(const std::string& p) {
  struct stat st {};
  return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(p.c_str(), X_OK) == 0;
}

std::string self_dir() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : exe.parent_path().string();
}

const char* signal_name(int sig) {
  switch (sig) {
    case SIGHUP:
      return "SIGHUP";
    case SIGINT:
      return "SIGINT";
    case SIGQUIT:
      return "SIGQUIT";
    case SIGILL:
      return "SIGILL";
    case SIGTRAP:
      return "SIGTRAP";
    case SIGABRT:
      return "SIGABRT";
    case SIGBUS:
      return "SIGBUS";
    case SIGFPE:
      return "SIGFPE";
    case SIGKILL:
      return "SIGKILL";
    case SIGUSR1:
      return "SIGUSR1";
    case SIGSEGV:
      return "SIGSEGV";
    case SIGUSR2:
      return "SIGUSR2";
    case SIGPIPE:
      return "SIGPIPE";
    case SIGALRM:
      return "SIGALRM";
    case SIGTERM:
      return "SIGTERM";
    case SIGXCPU:
      return "SIGXCPU";
    default:
      return nullptr;
  }
}

volatile sig_atomic_t g_child = 0;

void forward_signal(int sig, siginfo_t* info, void*) {
  if (g_child <= 0) return;
  // A terminal's Ctrl-C reaches the whole foreground group, the program
  // included: forwarding it again would interrupt the program twice.
  if (sig == SIGINT && info && info->si_code == SI_KERNEL) return;
  kill(static_cast<pid_t>(g_child), sig);
}

}  // namespace

std::string find_inject_library() {
  std::vector<std::string> looked;
  if (std::optional<std::string> e = env::get(env::Var::InjectLib)) {
    if (fs::exists(*e)) return *e;
    looked.push_back(*e + " ($ROOFLINE_INJECT_LIB)");
  }
  std::string dir = self_dir();
  for (const std::string& cand : {dir + "/../lib/" + kInjectLibraryName, dir + "/" + kInjectLibraryName}) {
    std::error_code ec;
    if (fs::exists(cand, ec)) return fs::weakly_canonical(cand, ec).string();
    looked.push_back(fs::path(cand).lexically_normal().string());
  }
#if ROOFLINE_HAVE_CUDA
  throw Error(ErrorKind::Unsupported,
              fmt::format("the profiler's injection library {} is missing (looked in: {})", kInjectLibraryName,
                          join(looked, ", ")),
              "build it (cmake --build build --target roofline_inject) or point ROOFLINE_INJECT_LIB at it");
#else
  throw Error(ErrorKind::Unsupported,
              "this roofline was built without CUDA: `roofline profile` needs the CUPTI injection library",
              "rebuild roofline with the CUDA toolkit installed (not -DROOFLINE_CUDA=OFF)");
#endif
}

std::string find_program(const std::string& name) {
  if (name.empty()) throw_usage("no program to profile", "give it after --, e.g. roofline profile -- python3 train.py");
  if (name.find('/') != std::string::npos) {
    if (!fs::exists(name)) throw Error(ErrorKind::Input, fmt::format("program '{}' not found", name), "check the path");
    if (!is_executable_file(name))
      throw Error(ErrorKind::Input, fmt::format("'{}' is not an executable file", name),
                  "check the path and its permissions (chmod +x)");
    return name;
  }
  const char* path = std::getenv("PATH");
  for (const auto& dir : split(path ? path : "/usr/local/bin:/usr/bin:/bin", ':')) {
    std::string cand = (dir.empty() ? std::string(".") : dir) + "/" + name;
    if (is_executable_file(cand)) return cand;
  }
  throw Error(ErrorKind::Input, fmt::format("program '{}' not found in PATH", name),
              "check the name, or give its path (./prog); PATH is searched for names without a '/'");
}

std::string describe_wait_status(int status, int* exit_code, int* signal) {
  *signal = 0;
  if (WIFEXITED(status)) {
    *exit_code = WEXITSTATUS(status);
    return fmt::format("exited {}", *exit_code);
  }
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    *signal = sig;
    *exit_code = 128 + sig;
    const char* name = signal_name(sig);
    std::string n = name ? name : fmt::format("signal {}", sig);
    bool crash = sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE || sig == SIGABRT || sig == SIGTRAP;
    if (crash) return fmt::format("crashed ({}){}", n, WCOREDUMP(status) ? ", core dumped" : "");
    return fmt::format("killed by signal {} ({})", sig, n);
  }
  *exit_code = 1;
  return "ended in an unknown way";
}

LaunchResult run_profiled(const LaunchOptions& opt) {
  ROOFLINE_ASSERT(!opt.argv.empty(), "no program");
  std::string program = find_program(opt.argv[0]);
  LaunchResult r;
  // The environment: the caller's, with the profiler's variables set. The
  // program starts now, as far as --delay is concerned (CLOCK_MONOTONIC, which
  // the library turns into CUPTI's clock).
  InjectionConfig config = opt.config;
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  config.program_start_ns =
      static_cast<std::uint64_t>(now.tv_sec) * 1'000'000'000u + static_cast<std::uint64_t>(now.tv_nsec);
  std::map<std::string, std::string> set = {{"CUDA_INJECTION64_PATH", opt.inject_library},
                                            config.environment_variable()};
  if (const char* old = std::getenv("CUDA_INJECTION64_PATH"); old && *old && opt.inject_library != old)
    r.notes.push_back(fmt::format("CUDA_INJECTION64_PATH was set to {}; roofline replaced it for the program", old));
  if (const char* nvtx = std::getenv("NVTX_INJECTION64_PATH"); nvtx && *nvtx) {
    r.notes.push_back(
        fmt::format("NVTX_INJECTION64_PATH is set to {}: NVTX ranges go to that tool, not to roofline", nvtx));
  } else {
    set["NVTX_INJECTION64_PATH"] = opt.inject_library;
  }
  std::vector<std::string> env_strings;
  for (char** e = environ; e && *e; ++e) {
    std::string s(*e);
    if (!set.count(s.substr(0, s.find('=')))) env_strings.push_back(std::move(s));
  }
  for (const auto& [k, v] : set) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp, argv;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = opt.argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  // exec failures come back through a close-on-exec pipe: nothing arrives
  // when exec succeeds.
  int errpipe[2];
  if (pipe2(errpipe, O_CLOEXEC) != 0)
    throw Error(ErrorKind::Internal, fmt::format("pipe failed: {}", std::strerror(errno)));
  auto t0 = std::chrono::steady_clock::now();
  pid_t pid = fork();
  if (pid < 0) {
    close(errpipe[0]);
    close(errpipe[1]);
    throw Error(ErrorKind::Input, fmt::format("cannot start '{}': fork failed: {}", opt.argv[0], std::strerror(errno)),
                "the system is out of processes or memory");
  }
  if (pid == 0) {
    close(errpipe[0]);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    if (opt.stdout_to_stderr) dup2(2, 1);
    execve(program.c_str(), argv.data(), envp.data());
    int err = errno;
    ssize_t ignored = write(errpipe[1], &err, sizeof err);
    (void)ignored;
    _exit(127);
  }
  close(errpipe[1]);
  g_child = pid;
  struct sigaction sa {
  }, old_int{}, old_term{};
  sa.sa_sigaction = forward_signal;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);
  int exec_errno = 0;
  ssize_t n;
  do {
    n = read(errpipe[0], &exec_errno, sizeof exec_errno);
  } while (n < 0 && errno == EINTR);
  close(errpipe[0]);
  int status = 0;
  pid_t w;
  do {
    w = waitpid(pid, &status, 0);
  } while (w < 0 && errno == EINTR);
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  g_child = 0;
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  if (n == static_cast<ssize_t>(sizeof exec_errno))
    throw Error(ErrorKind::Input, fmt::format("cannot run '{}': {}", opt.argv[0], std::strerror(exec_errno)),
                "check that it is a program for this machine and that you may run it");
  r.pid = pid;
  r.status = describe_wait_status(status, &r.exit_code, &r.signal);
  return r;
}

CollectedProfiles collect_profiles(const std::string& dir, int main_pid) {
  CollectedProfiles c;
  std::vector<std::pair<int, std::string>> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    std::string name = e.path().filename().string();
    if (starts_with(name, "profile-") && ends_with(name, ".json")) {
      int pid = std::atoi(name.substr(8, name.size() - 13).c_str());
      files.emplace_back(pid, e.path().string());
    } else if (starts_with(name, "trace-") && ends_with(name, ".jsonl")) {
      c.trace_files.push_back(e.path().string());
    }
  }
  // The main process first: its data leads the merge (command, devices).
  std::sort(files.begin(), files.end(), [&](const auto& a, const auto& b) {
    if ((a.first == main_pid) != (b.first == main_pid)) return a.first == main_pid;
    return a.first < b.first;
  });
  std::sort(c.trace_files.begin(), c.trace_files.end());
  bool first = true;
  for (const auto& [pid, path] : files) {
    ProfileData p;
    try {
      std::ifstream f(path);
      p = ProfileData::from_json(nlohmann::json::parse(f));
    } catch (const std::exception& e) {
      c.warnings.push_back(fmt::format("the profile of process {} is unreadable ({}): left out", pid, e.what()));
      continue;
    }
    ++c.files;
    if (!p.complete)
      c.warnings.push_back(fmt::format(
          "process {} ended without writing its final profile (killed, or left through _exit): its last snapshot is "
          "shown, up to about a second of GPU work may be missing",
          pid));
    if (p.processes.empty()) p.processes.push_back(p.pid ? p.pid : pid);
    if (first) {
      c.merged = std::move(p);
      first = false;
    } else {
      c.merged.merge(p);
    }
  }
  if (!first) c.merged.complete = c.warnings.empty();
  return c;
}

}  // namespace roofline::prof

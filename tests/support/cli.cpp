#include "tests/support/cli.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "roofline/core/env.hpp"

namespace roofline::test {

namespace {
// The roofline binary: $ROOFLINE_TEST_BINARY when set; else the path the build
// recorded, when it exists; else `roofline` beside this test executable (a build
// folder carried to another machine, e.g. the GPU machine, keeps that layout).
std::string roofline_binary() {
  if (auto path = env::get(env::Var::TestBinary)) return *path;
  std::error_code ec;
  if (std::filesystem::exists(ROOFLINE_BINARY, ec)) return ROOFLINE_BINARY;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    auto beside = self.parent_path() / "roofline";
    if (std::filesystem::exists(beside, ec)) return beside.string();
  }
  return ROOFLINE_BINARY;
}
// Every thread's stack of a command that passed its time limit, so that a hang
// seen once (on CI, under the sanitizers) says where it was: gdb attached for a
// moment, when it is installed and allowed to attach.
std::string stacks_of(pid_t pid) {
  if (std::system("command -v gdb > /dev/null 2>&1") != 0) return "(gdb is not installed: no stacks)\n";
  const std::string cmd = "timeout 120 gdb -batch -nx -p " + std::to_string(pid) +
                          " -ex 'thread apply all bt 40' 2>&1 | grep -E '^(Thread|#)'";
  std::string out;
  if (FILE* p = ::popen(cmd.c_str(), "r")) {
    char line[1024];
    while (std::fgets(line, sizeof line, p)) out += line;
    ::pclose(p);
  }
  return out.empty() ? "(gdb could not attach: no stacks)\n" : out;
}
}  // namespace

CliResult run_cli(const std::vector<std::string>& args, const std::vector<std::string>& env, const std::string& cwd,
                  int timeout_s) {
  const std::string binary = roofline_binary();
  int out_pipe[2], err_pipe[2];
  if (pipe(out_pipe) != 0 || pipe(err_pipe) != 0) throw std::runtime_error("pipe failed");
  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    close(out_pipe[0]);
    close(err_pipe[0]);
    if (!cwd.empty() && chdir(cwd.c_str()) != 0) _exit(126);
    for (const auto& e : env) putenv(const_cast<char*>(e.c_str()));
    std::vector<char*> argv;
    std::string bin = binary;
    argv.push_back(bin.data());
    std::vector<std::string> copy = args;
    for (auto& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(bin.c_str(), argv.data());
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  CliResult r;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  int open_fds = 2;
  char buf[4096];
  while (open_fds > 0) {
    int left = static_cast<int>(
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count());
    if (left <= 0) {
      r.err += "\nrun_cli: roofline passed the test's " + std::to_string(timeout_s) +
               " s limit and was killed; its threads were:\n" + stacks_of(pid);
      kill(pid, SIGKILL);
      break;
    }
    if (poll(fds, 2, left) <= 0) continue;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP))) continue;
      ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n <= 0) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      } else {
        (i == 0 ? r.out : r.err).append(buf, static_cast<size_t>(n));
      }
    }
  }
  for (auto& f : fds)
    if (f.fd >= 0) close(f.fd);
  int status = 0;
  waitpid(pid, &status, 0);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

TempDir::TempDir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "roofline-test-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::permissions(path_, std::filesystem::perms::owner_all, ec);
  std::filesystem::remove_all(path_, ec);
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void write_file(const std::string& path, const std::string& content) {
  std::ofstream f(path, std::ios::binary);
  f << content;
}

}  // namespace roofline::test

// Starting and watching a one-machine job's ranks: see roofline/engine/rank_launch.hpp.
#include "roofline/engine/rank_launch.hpp"

#include <fmt/format.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "roofline/core/error.hpp"
#include "roofline/engine/rendezvous.hpp"

namespace roofline::engine::dist {

namespace {

using Clock = std::chrono::steady_clock;

ErrorKind kind_of_exit(int status) {
  switch (status) {
    case 2: return ErrorKind::Usage;
    case 3: return ErrorKind::Input;
    case 5: return ErrorKind::Store;
    case 6: return ErrorKind::Unsupported;
    case 7: return ErrorKind::Numeric;
    case 1: return ErrorKind::Internal;
    default: return ErrorKind::Device;
  }
}

std::string how(int status) {
  if (WIFEXITED(status)) return fmt::format("exited with status {}", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return fmt::format("was killed by signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
  return "stopped";
}

}  // namespace

void launch_ranks(const RankLaunch& l) {
  if (l.world < 1) throw Error(ErrorKind::Usage, fmt::format("a job of {} ranks", l.world), "give 1 or more GPUs");
  if (l.argv.empty()) throw Error(ErrorKind::Usage, "no program to start on the ranks", "");
  // The ranks read torchrun's variables, so they listen on MASTER_PORT + 1 (rendezvous_port).
  const int port = l.port > 0 ? l.port : free_port();
  std::vector<char*> args;
  for (const auto& a : l.argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::fflush(nullptr);  // the children must not repeat what stdio holds
  std::vector<pid_t> pids(size_t(l.world), -1);
  const auto stop_all = [&](int sig) {
    for (pid_t p : pids)
      if (p > 0) ::kill(p, sig);
  };
  for (int r = 0; r < l.world; ++r) {
    const pid_t pid = ::fork();
    if (pid < 0) {
      const std::string why = std::strerror(errno);
      stop_all(SIGKILL);
      for (pid_t p : pids)
        if (p > 0) ::waitpid(p, nullptr, 0);
      throw Error(ErrorKind::Device, "could not start rank " + std::to_string(r) + ": " + why, "too many processes?");
    }
    if (pid == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGTERM);  // a rank never outlives its launcher (killed, or Ctrl-C)
      ::setenv("RANK", std::to_string(r).c_str(), 1);
      ::setenv("WORLD_SIZE", std::to_string(l.world).c_str(), 1);
      ::setenv("LOCAL_RANK", std::to_string(r).c_str(), 1);
      ::setenv("LOCAL_WORLD_SIZE", std::to_string(l.world).c_str(), 1);
      ::setenv("MASTER_ADDR", "127.0.0.1", 1);
      ::setenv("MASTER_PORT", std::to_string(port - 1).c_str(), 1);
      ::setenv("NCCL_NVLS_ENABLE", "0", 0);
      // Other launchers' variables would win over torchrun's in read_rank_env.
      for (const char* v : {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
                            "OMPI_COMM_WORLD_LOCAL_SIZE", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID",
                            "SLURM_NTASKS_PER_NODE"})
        ::unsetenv(v);
      ::execvp(args[0], args.data());
      std::fprintf(stderr, "roofline: could not run %s: %s\n", args[0], std::strerror(errno));
      std::_Exit(127);
    }
    pids[size_t(r)] = pid;
  }
  const auto t0 = Clock::now();
  int left = l.world, failed = -1, failed_status = 0;
  bool timed_out = false;
  Clock::time_point kill_at{};
  while (left > 0) {
    int status = 0;
    const pid_t p = ::waitpid(-1, &status, WNOHANG);
    if (p > 0) {
      for (int r = 0; r < l.world; ++r)
        if (pids[size_t(r)] == p) {
          pids[size_t(r)] = -1;
          --left;
          const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
          if (!ok && failed < 0 && !timed_out) {
            failed = r, failed_status = status;
            stop_all(SIGTERM);
            kill_at = Clock::now() + l.grace;
          }
        }
      continue;
    }
    if (p < 0 && errno != EINTR) break;  // no children left
    if (kill_at != Clock::time_point{} && Clock::now() >= kill_at) {
      stop_all(SIGKILL);
      kill_at = Clock::time_point{};
    }
    if (l.timeout.count() > 0 && !timed_out && failed < 0 && Clock::now() - t0 >= l.timeout) {
      timed_out = true;
      stop_all(SIGTERM);
      kill_at = Clock::now() + l.grace;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (timed_out)
    throw Error(ErrorKind::Device,
                fmt::format("the {} ranks did not finish within {} s; every rank was stopped", l.world,
                            std::chrono::duration<double>(l.timeout).count()),
                "a rank is stuck (in a collective whose peer is gone?): each rank's output above says where");
  if (failed >= 0) {
    const ErrorKind k = WIFEXITED(failed_status) ? kind_of_exit(WEXITSTATUS(failed_status)) : ErrorKind::Device;
    throw Error(k,
                fmt::format("rank {} of {} {}; the other ranks were stopped", failed, l.world, how(failed_status)),
                "its own message above says why");
  }
}

}  // namespace roofline::engine::dist

// libroofline_inject.so: the CUDA driver loads it into a program started by
// `roofline profile` (CUDA_INJECTION64_PATH) and calls InitializeInjection()
// during cuInit. From then on CUPTI activity is aggregated on the fly (see
// cupti_collector.hpp) and the profile is written to
// <out_dir>/profile-<pid>.json (out_dir and the other options come from
// `roofline profile` as one prof::InjectionConfig, ROOFLINE_PROFILE_CONFIG):
//   - every ~0.5 s while data changes, as a snapshot (complete=false), so a
//     SIGKILL still leaves the data up to the last snapshot;
//   - on SIGTERM/SIGINT (when the program has not installed its own handler,
//     the handler asks for a last snapshot, waits for it, then lets the signal
//     do what it would have done);
//   - at exit (complete=true) after a forced flush.
// A forked child starts empty and writes its own profile-<childpid>.json if
// it produces GPU work; `roofline profile` merges the files.
//
// Developer switches (rows of the env registry, src/core/env.cpp):
// ROOFLINE_API=0 (no CUDA API records), ROOFLINE_NVTX=0 (no NVTX), and
// ROOFLINE_CRASH_BACKTRACE=1 (on SIGSEGV/SIGBUS/SIGABRT, the crashing thread's
// frames on stderr, for debugging a crash inside the profiled program).
//
// Nothing here throws across the C boundary: failures become warnings in the
// profile, or a line on stderr when even the profile cannot be written.
#include <cupti.h>
#include <execinfo.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>

#include "roofline/engine/rank_env.hpp"
#include "roofline/core/env.hpp"
#include "roofline/core/error.hpp"
#include "roofline/core/json_text.hpp"
#include "roofline/profiler/injection_config.hpp"
#include "src/profiler/cupti_collector.hpp"
#include "src/profiler/inject/counters_bridge.hpp"

#define ROOFLINE_EXPORT extern "C" __attribute__((visibility("default")))

using roofline::prof::CuptiCollector;

namespace {

// The shortest time between two periodic snapshots; the writer stretches it
// as the profile grows (writer_loop).
constexpr std::uint64_t kMinSnapshotIntervalMs = 500;

struct State {
  roofline::prof::InjectionConfig config;
  std::string command;
  std::thread* writer = nullptr;   // leaked in a forked child, where the thread does not exist
  int pipe_rd = -1, pipe_wr = -1;  // wakes the writer: 's' snapshot now, 'q' quit
  std::atomic<bool> stopping{false};
  std::atomic<bool> signal_done{false};
  std::atomic<bool> finished{false};
  bool child = false;
  std::mutex write_mu;
  struct sigaction old_term {
  }, old_int{};
};

State* g = nullptr;

std::string read_cmdline() {
  std::ifstream f("/proc/self/cmdline", std::ios::binary);
  std::string raw((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  for (char& c : raw)
    if (c == '\0') c = ' ';
  while (!raw.empty() && raw.back() == ' ') raw.pop_back();
  return raw;
}

void write_profile(bool complete) {
  std::lock_guard<std::mutex> lock(g->write_mu);
  CuptiCollector& c = CuptiCollector::instance();
  // A forked child that did no GPU work leaves no file (and makes no CUPTI call).
  if (g->child && !c.has_records()) return;
  roofline::prof::ProfileData p = c.snapshot();
  roofline::inject::counters_fill(p);
  p.time_replayed_launches();  // --counters: replayed launches take their measured time
  p.keep_captured_samples();   // a capture range: PM samples inside it only
  p.complete = complete;
  p.command = g->command;
  // A process a launcher started (torchrun, mpirun, Slurm) says which rank it is, for the per-rank table.
  try {
    if (const auto e = roofline::engine::dist::read_rank_env())
      p.add_rank_row(e->rank, e->world, e->local_rank, e->launcher);
  } catch (const std::exception& ex) {
    p.warnings.push_back(std::string("this process's rank is not recorded: ") + ex.what());
  }
  std::string path = g->config.out_dir + "/profile-" + std::to_string(getpid()) + ".json";
  std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    // Invalid UTF-8 in a name (NVTX messages are the program's bytes) must not
    // cost the whole profile.
    f << roofline::json_text(p.to_json());
    if (!f) {
      std::fprintf(stderr, "roofline: cannot write the profile %s: %s\n", tmp.c_str(), std::strerror(errno));
      return;
    }
  }
  // Rename is atomic: a reader (or a kill) never sees half a file.
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    std::fprintf(stderr, "roofline: cannot write the profile %s: %s\n", path.c_str(), std::strerror(errno));
  c.trace().flush();
}

void writer_loop() {
  // Signals go to the application's threads: this one must stay free to
  // write the snapshot a signal handler waits for.
  sigset_t block;
  sigemptyset(&block);
  sigaddset(&block, SIGTERM);
  sigaddset(&block, SIGINT);
  pthread_sigmask(SIG_BLOCK, &block, nullptr);
  std::uint64_t last_gen = ~std::uint64_t{0};
  std::uint64_t interval = kMinSnapshotIntervalMs;
  CuptiCollector& c = CuptiCollector::instance();
  while (!g->stopping.load()) {
    pollfd pfd{g->pipe_rd, POLLIN, 0};
    int r = poll(&pfd, 1, static_cast<int>(interval));
    bool signal_snapshot = false;
    if (r > 0 && (pfd.revents & POLLIN)) {
      char buf[16];
      ssize_t n = read(g->pipe_rd, buf, sizeof buf);
      for (ssize_t i = 0; i < n; ++i) {
        signal_snapshot |= buf[i] == 's';
      }
    }
    if (g->stopping.load()) break;
    if (signal_snapshot) {
      c.flush(true);
      write_profile(false);
      g->signal_done.store(true);
      continue;
    }
    // CUPTI's own periodic flush hands over full buffers only: a program with
    // little GPU work would leave everything in a half-full buffer until exit.
    c.flush(false);
    std::uint64_t gen = c.generation();
    if (gen == last_gen) continue;
    last_gen = gen;
    auto t0 = std::chrono::steady_clock::now();
    write_profile(false);
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
    // Keep the writer under ~2% of one core however large the profile grows.
    interval = std::max<std::uint64_t>(kMinSnapshotIntervalMs, static_cast<std::uint64_t>(ms) * 50);
  }
}

void wake(char what) {
  if (g && g->pipe_wr >= 0) {
    ssize_t ignored = write(g->pipe_wr, &what, 1);  // async-signal-safe
    (void)ignored;
  }
}

void on_signal(int sig, siginfo_t* info, void* ctx) {
  int saved_errno = errno;
  struct sigaction& old = sig == SIGTERM ? g->old_term : g->old_int;
  bool has_handler = (old.sa_flags & SA_SIGINFO) ? old.sa_sigaction != nullptr
                                                 : (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN);
  if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_IGN) {
    errno = saved_errno;
    return;
  }
  if (!g->child && g->writer) {
    g->signal_done.store(false);
    wake('s');
  }
  if (has_handler) {
    // The program handles this signal (Python turns SIGINT into
    // KeyboardInterrupt): let it, the snapshot is written meanwhile.
    if (old.sa_flags & SA_SIGINFO)
      old.sa_sigaction(sig, info, ctx);
    else
      old.sa_handler(sig);
    errno = saved_errno;
    return;
  }
  // The default action would end the process: wait (at most 3 s) for the
  // snapshot, then restore the default and let the signal take effect when
  // this handler returns (it is blocked while the handler runs).
  for (int i = 0; i < 300 && !g->child && g->writer && !g->signal_done.load(); ++i) {
    timespec ts{0, 10'000'000};
    nanosleep(&ts, nullptr);
  }
  sigaction(sig, &old, nullptr);
  raise(sig);
  errno = saved_errno;
}

// ROOFLINE_CRASH_BACKTRACE=1: the crashing thread's frames on stderr, then the
// default action (the launcher still reports the signal). backtrace() may
// allocate on its first call, so it is called once at install time.
void on_crash(int sig) {
  static const char head[] = "roofline: crash backtrace (ROOFLINE_CRASH_BACKTRACE):\n";
  ssize_t ignored = write(STDERR_FILENO, head, sizeof head - 1);
  (void)ignored;
  void* frames[64];
  int n = backtrace(frames, 64);
  backtrace_symbols_fd(frames, n, STDERR_FILENO);
  signal(sig, SIG_DFL);
  raise(sig);
}

void install_crash_backtrace() {
  if (!roofline::env::get(roofline::env::Var::CrashBacktrace)) return;
  void* warm[1];
  (void)backtrace(warm, 1);
  for (int sig : {SIGSEGV, SIGBUS, SIGABRT}) signal(sig, on_crash);
}

void install_signal_handlers() {
  struct sigaction sa {};
  sa.sa_sigaction = on_signal;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, &g->old_term);
  sigaction(SIGINT, &sa, &g->old_int);
}

void at_exit() {
  if (!g || g->finished.exchange(true)) return;
  g->stopping.store(true);
  wake('q');
  if (g->writer && !g->child && g->writer->joinable()) g->writer->join();
  CuptiCollector& c = CuptiCollector::instance();
  // In a child forked after the parent started CUDA, CUPTI's threads and
  // locks are the parent's: no CUPTI call there (it has no records anyway).
  if (!g->child) {
    c.flush(true);
    roofline::inject::counters_finish();
  }
  write_profile(true);
  c.trace().close();
}

void prepare_fork() {
  g->write_mu.lock();
  CuptiCollector::instance().prepare_fork();
}

void parent_after_fork() {
  CuptiCollector::instance().parent_after_fork();
  g->write_mu.unlock();
}

void child_after_fork() {
  CuptiCollector::instance().child_after_fork();
  roofline::inject::counters_child_after_fork();
  g->write_mu.unlock();
  g->child = true;
  g->writer = nullptr;  // that thread lives in the parent only
  // The pipe is shared with the parent: the child must not wake its writer.
  if (g->pipe_rd >= 0) close(g->pipe_rd);
  if (g->pipe_wr >= 0) close(g->pipe_wr);
  g->pipe_rd = g->pipe_wr = -1;
}

void start() {
  // A malformed configuration stops here, before anything is installed.
  roofline::prof::InjectionConfig config = roofline::prof::InjectionConfig::from_environment();
  g = new State();  // never freed: used until the very end of the process
  g->config = std::move(config);
  g->command = read_cmdline();
  roofline::prof::CollectorOptions opt;
  opt.api = roofline::env::get(roofline::env::Var::ProfileApi) != "0";
  opt.nvtx = roofline::env::get(roofline::env::Var::ProfileNvtx) != "0";
  opt.command = g->command;
  if (g->config.trace) {
    opt.trace_dir = g->config.out_dir;
    opt.trace_limit = g->config.trace_limit;
  }
  // The capture range before the collector starts (it enables the
  // cudaProfilerStart/Stop callbacks then); NVTX may have configured it already.
  CuptiCollector::instance().configure_capture(g->config.capture(), g->config.program_start_ns);
  // A failed start leaves its reason in the profile's warnings: the profile is
  // still written, so `roofline profile` can say what happened.
  CuptiCollector::instance().start(opt);
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) == 0) {
    g->pipe_rd = fds[0];
    g->pipe_wr = fds[1];
  }
  roofline::inject::counters_init(g->config);
  pthread_atfork(prepare_fork, parent_after_fork, child_after_fork);
  std::atexit(at_exit);
  install_signal_handlers();
  install_crash_backtrace();
  try {
    g->writer = new std::thread(writer_loop);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "roofline: no periodic profile snapshots (%s): a killed program leaves no profile\n",
                 e.what());
  }
}

// No exception may leave the function std::call_once runs: it would unwind
// through glibc's pthread_once, which with the statically linked unwinder
// aborts the program.
void start_or_say_why() noexcept {
  try {
    start();
  } catch (const roofline::Error& e) {
    std::fprintf(stderr, "roofline: the profiler could not start: %s (%s)\n", e.what(), e.hint().c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "roofline: the profiler could not start: %s\n", e.what());
  }
}

}  // namespace

// Called by the CUDA driver while it initialises (cuInit). Returns 1 always:
// the program must run whether or not the profiler could attach.
ROOFLINE_EXPORT int InitializeInjection(void) {
  static std::once_flag once;
  std::call_once(once, start_or_say_why);
  return 1;
}

// InitializeInjectionNvtx2 (NVTX's entry point into this library) is in
// nvtx_hooks.cpp.

// Runs a program under the injection library and collects what it leaves:
// the launcher half of `roofline profile`. Plain POSIX (fork, execvp,
// waitpid), no CUDA: the program loads CUDA, and with it the library.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "roofline/profiler/injection_config.hpp"
#include "roofline/profiler/profile_data.hpp"

namespace roofline::prof {

// The library's file name and where roofline looks for it (first hit wins):
// $ROOFLINE_INJECT_LIB, <bin>/../lib/, <bin>/ (bin = the roofline binary's folder).
inline constexpr const char* kInjectLibraryName = "libroofline_inject.so";
// The path of the injection library; throws Error(Unsupported) naming every
// place it looked when it is nowhere.
std::string find_inject_library();

// `name` as execvp would find it: a path when it contains '/', else searched
// in $PATH. Throws Error(Input) when it does not exist or is not executable.
std::string find_program(const std::string& name);

struct LaunchOptions {
  std::vector<std::string> argv;  // the program and its arguments
  std::string inject_library;     // from find_inject_library()
  InjectionConfig config;         // for the library; config.out_dir is where the processes write
  bool stdout_to_stderr = false;  // keeps roofline's --json/--csv output on stdout clean
};

struct LaunchResult {
  int pid = 0;
  std::string status;              // "exited 0", "killed by signal 9 (SIGKILL)", "crashed (SIGSEGV)"
  int exit_code = 0;               // the program's code, or 128 + signal
  int signal = 0;                  // the signal that ended it (0: it exited)
  double wall_s = 0;               // fork to exit
  std::vector<std::string> notes;  // about the environment (a replaced CUDA_INJECTION64_PATH, ...)
};

// Starts the program with the injection environment, forwards SIGTERM (and
// SIGINT sent with kill, not the terminal's, which reaches the program
// directly), and waits for it. Throws Error(Input) when it cannot be started.
LaunchResult run_profiled(const LaunchOptions& opt);

// waitpid status as words, and the exit code a shell would give.
std::string describe_wait_status(int wait_status, int* exit_code, int* signal);

struct CollectedProfiles {
  ProfileData merged;                    // the main process first, then the others (forked children)
  size_t files = 0;                      // profile files read
  std::vector<std::string> trace_files;  // trace-<pid>.jsonl
  std::vector<std::string> warnings;     // unreadable files, snapshots of killed processes
};
// Reads and merges every profile-<pid>.json in `dir` (`main_pid`'s first).
CollectedProfiles collect_profiles(const std::string& dir, int main_pid);

}  // namespace roofline::prof

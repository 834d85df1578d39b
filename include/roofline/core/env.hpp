// Every ROOFLINE_* environment variable roofline reads, declared once (the
// table in src/core/env.cpp) with its meaning and accepted values. Code reads
// the environment only through get(); `roofline --help` and
// docs/environment.md list the table, and a test checks that no other file
// calls getenv for a ROOFLINE_* name.
#pragma once
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace roofline::env {

enum class Var {
  Db,          // ROOFLINE_DB
  Data,        // ROOFLINE_DATA
  PeerScript,  // ROOFLINE_PEER_SCRIPT
  CpuIsa,      // ROOFLINE_CPU_ISA
  ConvKernel,   // ROOFLINE_CONV_KERNEL
  FusedPhases,  // ROOFLINE_FUSED_PHASES
  StudyEpochs,  // ROOFLINE_STUDY_EPOCHS
  TestBinary,   // ROOFLINE_TEST_BINARY
  GoldenDir,    // ROOFLINE_GOLDEN_DIR
  InjectLib,    // ROOFLINE_INJECT_LIB
  // The profiler's rows.
  ProfileConfig,   // ROOFLINE_PROFILE_CONFIG
  ProfileApi,      // ROOFLINE_API
  ProfileNvtx,     // ROOFLINE_NVTX
  CuptiDebug,      // ROOFLINE_CUPTI_DEBUG
  CrashBacktrace,  // ROOFLINE_CRASH_BACKTRACE
  DpFault,         // ROOFLINE_DP_FAULT
};

// Who sets it: a user (documented option), a developer comparing paths,
// roofline itself for a process it starts (never set by hand), or a developer
// running the test suites (read by tests/ only). `roofline --help` lists the
// User and Developer rows; docs/environment.md lists them all.
enum class Audience { User, Developer, Internal, Test };

struct Declaration {
  Var var;
  std::string_view name;     // "ROOFLINE_DB"
  Audience audience;
  std::string_view values;   // "PATH", "avx512|avx2|sse2", ...
  std::string_view meaning;  // one sentence
};

// The whole table, in the order `roofline --help` lists it.
std::span<const Declaration> declarations();
const Declaration& declaration(Var v);

// The variable's value; nullopt when it is unset or empty.
std::optional<std::string> get(Var v);

// The table as `roofline --help` prints it (the User and Developer rows).
std::string help_text();

}  // namespace roofline::env

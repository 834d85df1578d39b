#include "roofline/core/env.hpp"

#include <cstdlib>
#include <fmt/format.h>

#include "roofline/core/error.hpp"

namespace roofline::env {

namespace {
using enum Audience;
// clang-format off
constexpr Declaration kTable[] = {
  {Var::Db, "ROOFLINE_DB", User, "PATH",
   "the results store used when --db is not given (default ./roofline.db)"},
  {Var::Data, "ROOFLINE_DATA", User, "DIR",
   "where `bench` looks for the Fashion-MNIST files when --data is not given (default /usr/share/datasets/fashion-mnist)"},
  {Var::PeerScript, "ROOFLINE_PEER_SCRIPT", User, "PATH",
   "the PyTorch peer script `bench --peer pytorch` runs for the small models (default: peers/pytorch_bench.py in the working directory or the tree above the binary); the networks' peer, pytorch_nets.py, is taken from the same folder"},
  {Var::CpuIsa, "ROOFLINE_CPU_ISA", User, "avx512|avx2|sse2",
   "the vector instruction set of roofline's CPU code (the engine's fast path, the CPU ceilings and the CPU sweep), "
   "at most what this CPU has (default: the widest it has)"},
  {Var::ConvKernel, "ROOFLINE_CONV_KERNEL", Developer, "auto|tiled|cudnn|regtile:KB:R[:THREADS]",
   "forces the engine's GPU convolution kernel, to compare them: our tiled or register-tiled kernels for stride-1 fp32 NCHW layers, or cuDNN for every layer (default auto: the engine's rule)"},
  {Var::FusedPhases, "ROOFLINE_FUSED_PHASES", Developer, "1",
   "prints to stderr, when a fused-mlp GPU run ends, each phase's time in a training step and in an inference, by block 0's SM clock (default: off; 0 is off)"},
  {Var::StudyEpochs, "ROOFLINE_STUDY_EPOCHS", Test, "N",
   "the epochs of the disabled test DeadClass.DISABLED_RealDataBatch128FastAndReferenceBackends (default 5)"},
  {Var::TestBinary, "ROOFLINE_TEST_BINARY", Test, "PATH",
   "the roofline binary the CLI tests run (default: the build's, else `roofline` beside the test executable)"},
  {Var::GoldenDir, "ROOFLINE_GOLDEN_DIR", Test, "DIR",
   "where the GPU suite's golden tests read PyTorch's full-size golden files (written by peers/golden_nets.py, and bert-base/ by peers/pytorch_bert.py golden --size base; unset: those tests are skipped)"},
  {Var::InjectLib, "ROOFLINE_INJECT_LIB", Developer, "PATH",
   "the injection library `profile` loads into the program (default: libroofline_inject.so beside the binary)"},
  // The profiler's rows (src/profiler).
  {Var::ProfileConfig, "ROOFLINE_PROFILE_CONFIG", Internal, "JSON",
   "what `profile` asks of the injection library in the program it starts (prof::InjectionConfig: output folder, "
   "trace, counters, PM sampling); written by `profile`, never by hand"},
  {Var::ProfileApi, "ROOFLINE_API", Developer, "0|1",
   "0: `profile` records kernels, copies and memsets only, no CUDA API calls (to measure what the API records "
   "cost; the API and launch tables are then empty) (default 1)"},
  {Var::ProfileNvtx, "ROOFLINE_NVTX", Developer, "0|1",
   "0: `profile` ignores the program's NVTX ranges (no NVTX hooks or callbacks) (default 1)"},
  {Var::CuptiDebug, "ROOFLINE_CUPTI_DEBUG", Developer, "1",
   "the profiler prints one stderr line per CUPTI activity buffer it folds (bytes, time taken, and whether on the "
   "program's main thread), to see where the tracing overhead goes (default: off)"},
  {Var::CrashBacktrace, "ROOFLINE_CRASH_BACKTRACE", Developer, "1",
   "on SIGSEGV, SIGBUS or SIGABRT in a profiled program, the injection library prints the crashing thread's "
   "frames to stderr (library-relative addresses: resolve them with addr2line on an unstripped build) "
   "(default: off)"},
  {Var::DpFault, "ROOFLINE_DP_FAULT", Test, "exit:RANK:STEP",
   "a data-parallel bench's rank RANK exits (status 9) before step STEP of its first cell, to test that its peers "
   "stop with a message naming it (default: off)"},
};
// clang-format on
}  // namespace

std::span<const Declaration> declarations() { return kTable; }

const Declaration& declaration(Var v) {
  for (const auto& d : kTable)
    if (d.var == v) return d;
  throw Error(ErrorKind::Internal, "an environment variable is used but not declared in src/core/env.cpp",
              "add its row to the table");
}

std::optional<std::string> get(Var v) {
  const char* value = std::getenv(std::string(declaration(v).name).c_str());
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}

std::string help_text() {
  std::string out = "Environment:\n";
  for (const auto& d : kTable) {
    if (d.audience == Audience::Internal || d.audience == Audience::Test) continue;
    out += fmt::format("  {}={}{}\n      {}\n", d.name, d.values, d.audience == Audience::Developer ? "  (for developers)" : "",
                       d.meaning);
  }
  return out;
}

}  // namespace roofline::env

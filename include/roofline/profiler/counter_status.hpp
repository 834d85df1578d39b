// What went wrong (or not) when reading GPU performance counters, in a form
// both sides can use: our own binaries throw it as a roofline::Error, the
// injection library keeps it as a warning and carries on with tracing.
// Plain C++ (no CUPTI types), so the CUPTI result mapping is tested on CPU.
#pragma once
#include <string>

#include "roofline/core/error.hpp"

namespace roofline::prof {

enum class CounterProblem {
  None,          // all well
  NoGpu,         // no GPU, no driver, or a CPU-only build on a GPU machine
  NotPermitted,  // ERR_NVGPUCTRPERM: counters restricted to admin users
  Busy,          // another profiler (Nsight, DCGM, another CUPTI client) holds CUPTI or the counters
  Unsupported,   // this GPU, vGPU/MIG/confidential-compute setting or build cannot do it
  BadMetric,     // a metric name this chip does not know
  BadOption,     // another bad option (device, interval, ...)
  Failed,        // any other CUPTI or CUDA failure
};

const char* to_string(CounterProblem p) noexcept;

struct CounterStatus {
  CounterProblem problem = CounterProblem::None;
  std::string what;  // the problem, one line
  std::string hint;  // what to do about it
  int code = 0;      // the CUPTI result code when it came from CUPTI, else 0

  bool ok() const noexcept { return problem == CounterProblem::None; }
  // The error our own binaries throw: Device for permission, busy, no GPU and
  // failures; Usage for unknown metrics and bad options; Unsupported for what cannot be done here.
  Error to_error() const;
  void throw_if_error() const;
  // "what (hint)" for warnings in a profile's output.
  std::string message() const;

  static CounterStatus success() { return {}; }
  static CounterStatus make(CounterProblem p, std::string what, std::string hint = {}, int code = 0);
  // Maps a CUPTI result code (CUptiResult as int) from `call` to a status; the
  // permission and busy codes get their own messages and fixes. `cupti_text` is
  // cuptiGetResultString's text (may be empty).
  static CounterStatus from_cupti(int code, const std::string& call, const std::string& cupti_text);
};

// The message and fix for ERR_NVGPUCTRPERM, shared by every caller.
CounterStatus counters_not_permitted(const std::string& call = {}, int code = 0);

}  // namespace roofline::prof

// What `roofline profile` asks of the injection library in the program it
// starts: one typed configuration, written by the launcher into the program's
// environment as one variable (ROOFLINE_PROFILE_CONFIG, JSON; an Internal row
// of the env registry, roofline/core/env.hpp) and read back by
// libroofline_inject.so. Both sides use the functions below, so an option
// added here reaches the library without a second parser.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "roofline/profiler/capture_gate.hpp"

namespace roofline::prof {

struct InjectionConfig {
  std::string out_dir = ".";               // where profile-<pid>.json and trace-<pid>.jsonl go
  bool trace = false;                      // also write every event to trace-<pid>.jsonl (--trace)
  std::uint64_t trace_limit = 1'000'000;   // events per process in that trace (--trace-limit)
  int device = 0;                          // the GPU PM sampling and the counters read (--device)
  bool counters = false;                   // per-kernel hardware counters, kernel replay (--counters)
  std::uint32_t counters_limit = 1;        // launches measured per kernel name, 0: every one (--counters-limit)
  std::vector<std::string> metrics;        // counter metrics instead of the default set (--metrics)
  bool pm_sampling = false;                // CUPTI PM sampling (--pm-sampling)
  std::uint64_t pm_interval_ns = 100'000;  // its interval (--pm-interval, given in µs)
  std::string capture_range;               // "cuda-profiler-api" or "nvtx:NAME" (--capture-range; "": none)
  std::uint64_t delay_ns = 0;              // capture from this long after the program's start (--delay, in s)
  std::uint64_t duration_ns = 0;           // capture this long (--duration, in s; 0: to the end)
  std::uint64_t program_start_ns = 0;      // the program's start, CLOCK_MONOTONIC (the launcher's; 0: unknown)

  // The capture range these fields ask for (capture_gate.hpp).
  CaptureSpec capture() const;

  // The configuration as JSON text, and back. parse() takes what to_text()
  // writes; a missing field keeps its default, and a malformed text, an
  // unknown field or a value of the wrong type throws Error(Input) naming it.
  std::string to_text() const;
  static InjectionConfig parse(const std::string& text);

  // {"ROOFLINE_PROFILE_CONFIG", <to_text()>}: the variable the launcher puts
  // into the program's environment.
  std::pair<std::string, std::string> environment_variable() const;
  // This process's configuration: parsed from ROOFLINE_PROFILE_CONFIG, the
  // defaults when it is unset. Throws Error(Input) when it is malformed.
  static InjectionConfig from_environment();

  bool operator==(const InjectionConfig&) const = default;
};

}  // namespace roofline::prof

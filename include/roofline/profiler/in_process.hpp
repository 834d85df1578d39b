// Profiles roofline's own workloads inside the roofline process (`roofline
// bench ... --profile`): the same CUPTI collection and aggregation as the
// injection library, started and stopped around the work. Kernels map to the
// NVTX ranges the engine opens (model/layer/pass), like any program's.
//
//   prof::InProcessTracer tracer;
//   tracer.start();
//   ... run the workload ...
//   prof::ProfileData p = tracer.stop();
//   double busy = prof::busy_fraction(p);
//
// One tracer at a time per process (CUPTI allows one subscriber). After
// stop() every activity kind and callback is disabled: no overhead remains.
#pragma once
#include <cstdint>
#include <string>

#include "roofline/profiler/profile_data.hpp"

namespace roofline::prof {

class InProcessTracer {
 public:
  struct Options {
    bool api = true;        // CUDA runtime and driver API calls
    bool nvtx = true;       // NVTX ranges (kernel -> layer/pass)
    std::string trace_dir;  // also write per-event lines there ("" = none)
    std::uint64_t trace_limit = 1'000'000;
  };

  InProcessTracer() = default;
  ~InProcessTracer();  // stops a trace still running (its data is dropped)
  InProcessTracer(const InProcessTracer&) = delete;
  InProcessTracer& operator=(const InProcessTracer&) = delete;

  // Throws Error(Device) when CUPTI cannot trace here (another profiler holds
  // it, no driver), Error(Usage) when a trace is already running, and
  // Error(Unsupported) in a build without CUDA.
  void start(const Options& opt);
  void start() { start(Options{}); }
  // Flushes every record and returns the profile (complete, demangled names).
  ProfileData stop();
  bool running() const { return running_; }

 private:
  bool running_ = false;
};

// Fraction of the GPU-active window (first to last GPU activity) with a
// kernel running; 0 when there was no GPU activity.
double busy_fraction(const ProfileData& p);

}  // namespace roofline::prof

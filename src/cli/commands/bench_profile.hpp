// `roofline bench --profile`: each GPU training run is traced in-process by the
// profiler (kernels, CUDA API, NVTX ranges, so every kernel maps to its layer
// and pass). The engine's KernelTimeSource (bench_busy_gpu.cpp) does the
// tracing: with profiling on it keeps the whole profile, not only the kernel
// time. The bench command takes the profiles as each run's record arrives.
#pragma once
#include <string>
#include <vector>

#include "roofline/profiler/profile_data.hpp"
#include "roofline/profiler/range_profiler.hpp"

namespace roofline::cli::bench_profile {

// Turns profiling on for this process. Throws Error(Unsupported) in a build
// without CUDA.
void enable();
bool enabled();
// Called by the tracer when a training run ends (profile) or when tracing
// could not start (why).
void add(prof::ProfileData p);
void failed(std::string why);
// What was collected since the last call, in the order the runs ended.
std::vector<prof::ProfileData> take();
std::vector<std::string> take_failures();

// bench --counters: what one counter run of a cell read (engine::CounterSource,
// bench_counters_gpu.cpp), per kernel name and NVTX path.
struct CounterRun {
  int run = 0;  // 0: every metric (replayed); 1: DRAM bytes alone, one pass
  std::vector<prof::KernelCounters> kernels;
  prof::RangeProfilerStats stats;
};
void add_counters(CounterRun r);
std::vector<CounterRun> take_counters();

}  // namespace roofline::cli::bench_profile

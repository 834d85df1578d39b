// Hardware counters inside the injection library: the counters engineer's
// prof::RangeProfiler (per-kernel counters with kernel replay, attached to
// this process's CUPTI subscriber) and prof::PmSampler (PM sampling over
// time), started when `roofline profile --counters` / `--pm-sampling` ask
// for them through the environment:
//   ROOFLINE_COUNTERS=1, ROOFLINE_COUNTERS_LIMIT (instances per kernel name,
//   0 = all), ROOFLINE_METRICS (comma-separated), ROOFLINE_PM=1,
//   ROOFLINE_PM_INTERVAL_NS, ROOFLINE_DEVICE; for experiments
//   (tools/device/pm_crash_rate.sh) ROOFLINE_PM_IMAGE_SAMPLES (the counter-data
//   image holds at least this many samples) and ROOFLINE_PM_HW_MB (hardware
//   buffer size).
// Problems (ERR_NVGPUCTRPERM, another profiler, unknown metric) become
// warnings in the profile and tracing goes on.
#pragma once
#include "roofline/profiler/profile_data.hpp"

namespace roofline::inject {

// At InitializeInjection, after the collector started. When a CUDA context
// appears (inside CUPTI's callback) the range profiler is attached and PM
// sampling started; PM sampling is stopped before a context is destroyed and,
// through its own atexit handler, before the exit handlers of CUDA, CUPTI and
// the profiler libraries.
void counters_init();
// Adds PM samples and per-kernel counters to a snapshot (under the writer lock).
void counters_fill(prof::ProfileData& p);
// At exit, before the final profile: stops sampling and detaches the range profiler.
void counters_finish();
// In a forked child (pthread_atfork): forget the parent's sampler and counters.
void counters_child_after_fork();

}  // namespace roofline::inject

// Hardware counters inside the injection library: prof::RangeProfiler
// (per-kernel counters with kernel replay, attached to this process's CUPTI
// subscriber) and prof::PmSampler (PM sampling over time), started when the
// configuration `roofline profile` passed asks for them (--counters,
// --pm-sampling; prof::InjectionConfig).
// Problems (ERR_NVGPUCTRPERM, another profiler, unknown metric) become
// warnings in the profile and tracing goes on.
#pragma once
#include "roofline/profiler/injection_config.hpp"
#include "roofline/profiler/profile_data.hpp"

namespace roofline::inject {

// At InitializeInjection, after the collector started. When a CUDA context
// appears (inside CUPTI's callback) the range profiler is attached and PM
// sampling started; PM sampling is stopped before a context is destroyed and,
// through its own atexit handler, before the exit handlers of CUDA, CUPTI and
// the profiler libraries.
void counters_init(const prof::InjectionConfig& config);
// Adds PM samples and per-kernel counters to a snapshot (under the writer lock).
void counters_fill(prof::ProfileData& p);
// At exit, before the final profile: stops sampling and detaches the range profiler.
void counters_finish();
// In a forked child (pthread_atfork): forget the parent's sampler and counters.
void counters_child_after_fork();

}  // namespace roofline::inject

// Glue between two areas, as bench_busy_gpu.cpp: the engine's bench runs a
// network's step under an engine::CounterSource it does not implement
// (bench --counters); the profiler's CUPTI range profiler, in-process, is that
// source. Every launch is profiled and filed under the engine's innermost NVTX
// range (engine::current_nvtx_range: "<model>/<layer>/<pass>"). Run 0 reads
// the default metric set (kernel replay); run 1 reads the DRAM bytes alone,
// in one pass, because replay's save and restore leaves dirty L2 lines that a
// replayed range writes back (docs/counters.md "DRAM writes"). What each run
// read goes to bench_profile for the bench command to merge and store.
#include <memory>

#include "roofline/engine/context.hpp"
#include "roofline/engine/net_bench.hpp"
#include "roofline/profiler/metrics.hpp"
#include "roofline/profiler/range_profiler.hpp"
#include "src/cli/commands/bench_profile.hpp"

namespace roofline::cli {
namespace {

class RangeProfilerCounters : public engine::CounterSource {
 public:
  RangeProfilerCounters(int gpu, int run) : run_(run) {
    prof::RangeProfilerOptions o;
    o.device = gpu;
    o.max_instances_per_kernel = 0;  // every launch: one kernel name serves many layers
    o.dram_pass = false;             // run 1 reads DRAM in one pass instead (launch pairs would cross layers)
    if (run == 1) o.metrics = {prof::metric::kDuration, prof::metric::kDramRead, prof::metric::kDramWrite};
    o.nvtx_path = [] { return engine::current_nvtx_range(); };
    profiler_ = std::make_unique<prof::RangeProfiler>(o);
  }
  void start() override { profiler_->start(); }  // throws roofline::Error (permissions, no CUPTI)
  void stop() override {
    profiler_->stop();
    if (const prof::CounterStatus s = profiler_->status(); !s.ok())
      throw Error(ErrorKind::Device, "bench --counters: the range profiler stopped: " + s.message(),
                  "see roofline profile --counters's requirements (docs/counters.md)");
    bench_profile::add_counters({run_, profiler_->kernel_counters(), profiler_->stats()});
  }

 private:
  int run_;
  std::unique_ptr<prof::RangeProfiler> profiler_;
};

const bool registered = [] {
  engine::register_counter_source_factory(
      [](int gpu, int run) { return std::make_unique<RangeProfilerCounters>(gpu, run); });
  return true;
}();

}  // namespace
}  // namespace roofline::cli

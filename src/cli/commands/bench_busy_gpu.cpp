// Glue between two areas: the engine reports the GPU busy fraction (kernel
// time over wall time) through a KernelTimeSource it does not implement; the
// profiler's in-process CUPTI tracer is that source. Registered when the
// roofline executable starts (CUDA builds only). With `bench --profile` the
// same tracer also records API calls and NVTX ranges and hands the whole
// profile to the bench command (bench_profile.hpp).
#include <cmath>
#include <memory>

#include "roofline/core/error.hpp"
#include "roofline/engine/trainer.hpp"
#include "roofline/profiler/in_process.hpp"
#include "src/cli/commands/bench_profile.hpp"

namespace roofline::cli {
namespace {

class TracerKernelTime : public engine::KernelTimeSource {
 public:
  void start() override {
    // Kernel activity only: no API or NVTX callbacks on the training thread,
    // so the timed run pays as little as CUPTI allows.
    // (bench --profile: API calls and NVTX ranges too.)
    profiling_ = bench_profile::enabled();
    prof::InProcessTracer::Options o;
    o.api = profiling_;
    o.nvtx = profiling_;
    try {
      tracer_.start(o);
    } catch (const Error& e) {
      // Another profiler holds CUPTI (e.g. roofline profile -- roofline bench):
      // the busy fraction is then unknown, never guessed.
      if (profiling_) bench_profile::failed(e.what());
    }
  }
  double stop() override {
    if (!tracer_.running()) return std::nan("");
    prof::ProfileData p = tracer_.stop();
    double busy_s = static_cast<double>(p.timeline.kernel_busy_ns) * 1e-9;
    if (profiling_) bench_profile::add(std::move(p));
    return busy_s;
  }

 private:
  prof::InProcessTracer tracer_;
  bool profiling_ = false;
};

const bool registered = [] {
  engine::register_kernel_time_factory([](int) { return std::make_unique<TracerKernelTime>(); });
  return true;
}();

}  // namespace
}  // namespace roofline::cli

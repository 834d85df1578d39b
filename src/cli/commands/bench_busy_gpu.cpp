// Glue between two areas: the engine reports the GPU busy fraction (kernel
// time over wall time) through a KernelTimeSource it does not implement; the
// profiler's in-process CUPTI tracer is that source. Registered when the
// roofline executable starts (CUDA builds only).
#include <cmath>
#include <memory>

#include "roofline/core/error.hpp"
#include "roofline/engine/trainer.hpp"
#include "roofline/profiler/in_process.hpp"

namespace roofline::cli {
namespace {

class TracerKernelTime : public engine::KernelTimeSource {
 public:
  void start() override {
    // Kernel activity only: no API or NVTX callbacks on the training thread,
    // so the timed run pays as little as CUPTI allows.
    prof::InProcessTracer::Options o;
    o.api = false;
    o.nvtx = false;
    try {
      tracer_.start(o);
    } catch (const Error&) {
      // Another profiler holds CUPTI (e.g. roofline profile -- roofline bench):
      // the busy fraction is then unknown, never guessed.
    }
  }
  double stop() override {
    if (!tracer_.running()) return std::nan("");
    prof::ProfileData p = tracer_.stop();
    return static_cast<double>(p.timeline.kernel_busy_ns) * 1e-9;
  }

 private:
  prof::InProcessTracer tracer_;
};

const bool registered = [] {
  engine::register_kernel_time_factory([](int) { return std::make_unique<TracerKernelTime>(); });
  return true;
}();

}  // namespace
}  // namespace roofline::cli

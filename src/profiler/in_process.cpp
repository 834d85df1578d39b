// The parts of the in-process tracer that need no CUDA; in a CPU-only build
// the tracer itself says it is unavailable.
#include "roofline/profiler/in_process.hpp"

#include "roofline/core/error.hpp"

namespace roofline::prof {

double busy_fraction(const ProfileData& p) { return p.timeline.busy_fraction(); }

#if !ROOFLINE_HAVE_CUDA
InProcessTracer::~InProcessTracer() = default;

void InProcessTracer::start(const Options&) {
  throw_unsupported("this roofline was built without CUDA: there is nothing to trace",
                    "rebuild roofline with the CUDA toolkit installed to profile GPU workloads");
}

ProfileData InProcessTracer::stop() {
  throw_unsupported("this roofline was built without CUDA: there is nothing to trace");
}
#endif

}  // namespace roofline::prof

// The in-process tracer in a CPU-only build: there is nothing to trace.
#include "roofline/core/error.hpp"
#include "roofline/profiler/in_process.hpp"

namespace roofline::prof {

InProcessTracer::~InProcessTracer() = default;

void InProcessTracer::start(const Options&) {
  throw_unsupported("this roofline was built without CUDA: there is nothing to trace",
                    "rebuild roofline with the CUDA toolkit installed to profile GPU workloads");
}

ProfileData InProcessTracer::stop() {
  throw_unsupported("this roofline was built without CUDA: there is nothing to trace");
}

}  // namespace roofline::prof

// The GPU ceilings of a CPU-only build: the CUDA build's implementation is
// src/ceilings/gpu_ceilings_gpu.cpp.
#include "roofline/ceilings/gpu_ceilings.hpp"

#include "roofline/core/error.hpp"

namespace roofline::ceilings {

namespace {
[[noreturn]] void built_without_cuda() {
  throw_unsupported("GPU ceilings: this roofline was built without CUDA",
                    "rebuild with the CUDA toolkit installed (ROOFLINE_CUDA=AUTO or ON), or use --device cpu");
}
}  // namespace

GpuCeilingsResult run_gpu_ceilings(int, const CeilingOptions&, const measure::Progress&, const FigureSink&) {
  built_without_cuda();
}
std::vector<measure::Figure> measure_gpu_ceilings(int, const CeilingOptions&, const measure::Progress&) { built_without_cuda(); }

}  // namespace roofline::ceilings

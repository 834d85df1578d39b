// The GPU ceilings of a CPU-only build: the CUDA build's implementation is
// src/bench/gpu/gpu_ceilings_gpu.cpp.
#include "roofline/bench/gpu_ceilings.hpp"

#if !ROOFLINE_HAVE_CUDA
#include "roofline/core/error.hpp"

namespace roofline::bench {

namespace {
[[noreturn]] void built_without_cuda() {
  throw_unsupported("GPU ceilings: this roofline was built without CUDA",
                    "rebuild with the CUDA toolkit installed (ROOFLINE_CUDA=AUTO or ON), or use --device cpu");
}
}  // namespace

GpuCeilingsResult run_gpu_ceilings(int, const CeilingOptions&, const Progress&, const FigureSink&) {
  built_without_cuda();
}
std::vector<Figure> measure_gpu_ceilings(int, const CeilingOptions&, const Progress&) { built_without_cuda(); }

}  // namespace roofline::bench
#endif

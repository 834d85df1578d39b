// roofline::ceilings::run_gpu_ceilings for CUDA builds. The order: bandwidth and
// latency before the power-hungry compute loops; the library GEMMs before our
// own tensor kernels (a fallback ceiling exists before they run); and the two
// kinds of kernel whose fault would end the CUDA context, the wgmma kernels and
// the bulk-copy DRAM kernels, last, so that such a fault costs only them.
#include <fmt/format.h>

#include "roofline/ceilings/gpu_ceilings.hpp"
#include "roofline/cuda/check.hpp"
#include "roofline/cuda/runtime.hpp"
#include "src/ceilings/gpu/session.hpp"

namespace roofline::ceilings {

GpuCeilingsResult run_gpu_ceilings(int device, const CeilingOptions& opts, const measure::Progress& progress,
                                   const FigureSink& sink) {
  cuda::require_gpu(device);
  gpu::Session s(device, opts, progress, sink);
  s.say(fmt::format("GPU {}: {} ({} SMs, compute capability {}.{}){}", device, s.info().name,
                    s.prop().multiProcessorCount, s.prop().major, s.prop().minor, opts.quick ? ", quick pass" : ""));
  gpu::measure_memory(s);
  gpu::measure_latency(s);
  gpu::measure_transfers(s);
  gpu::measure_peers(s);
  gpu::measure_collectives(s);
  gpu::measure_fma(s);
  gpu::measure_addmul(s);
  gpu::measure_dmma(s);
  gpu::measure_tensor_library(s);
  gpu::measure_tensor_own(s);
  gpu::measure_memory_bulk(s);
  gpu::measure_littles_law(s);
  const cudaError_t last = cudaDeviceSynchronize();
  if (last != cudaSuccess)
    s.warn(fmt::format("the CUDA context ended in error ({}): figures measured after the fault are missing",
                       cudaGetErrorString(last)));
  return s.take_result();
}

std::vector<measure::Figure> measure_gpu_ceilings(int device, const CeilingOptions& opts, const measure::Progress& progress) {
  GpuCeilingsResult r = run_gpu_ceilings(device, opts, progress);
  if (r.figures.empty() && !r.failures.empty()) {
    const FigureFailure& f = r.failures.front();
    throw Error(f.kind, f.name + ": " + f.what, f.hint);
  }
  return std::move(r.figures);
}

}  // namespace roofline::ceilings

// roofline::bench::run_gpu_ceilings for CUDA builds: the measurement parts in
// an order that keeps the figures fair to each other (bandwidth before the
// power-hungry compute loops, the own tensor kernel next to cuBLASLt).
#include <fmt/format.h>

#include "roofline/bench/gpu_ceilings.hpp"
#include "roofline/cuda/check.hpp"
#include "roofline/cuda/runtime.hpp"
#include "src/bench/gpu/session.hpp"

namespace roofline::bench {

GpuCeilingsResult run_gpu_ceilings(int device, const CeilingOptions& opts, const Progress& progress,
                                   const FigureSink& sink) {
  cuda::require_gpu(device);
  gpu::Session s(device, opts, progress, sink);
  s.say(fmt::format("GPU {}: {} ({} SMs, compute capability {}.{}){}", device, s.info().name,
                    s.prop().multiProcessorCount, s.prop().major, s.prop().minor, opts.quick ? ", quick pass" : ""));
  gpu::measure_memory(s);
  gpu::measure_latency(s);
  gpu::measure_transfers(s);
  gpu::measure_fma(s);
  gpu::measure_tensor(s);
  CUDA_CHECK(cudaDeviceSynchronize());
  return s.take_result();
}

std::vector<Figure> measure_gpu_ceilings(int device, const CeilingOptions& opts, const Progress& progress) {
  GpuCeilingsResult r = run_gpu_ceilings(device, opts, progress);
  if (r.figures.empty() && !r.failures.empty()) {
    const FigureFailure& f = r.failures.front();
    throw Error(f.kind, f.name + ": " + f.what, f.hint);
  }
  return std::move(r.figures);
}

}  // namespace roofline::bench

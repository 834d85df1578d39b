// The spin kernel GpuTimer enqueues before each sample's start event: while it
// runs, the host enqueues the event, the timed work and the stop event, so the
// host's launch overhead is not timed as an idle gap between the events.
#include "roofline/measure/measure_gpu.hpp"
#include "roofline/cuda/check.hpp"

namespace roofline::measure {

namespace {
__global__ void spin_kernel(unsigned long long ns) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < ns);
}
}  // namespace

void spin_gpu(cudaStream_t s, double microseconds) {
  if (microseconds <= 0) return;
  spin_kernel<<<1, 1, 0, s>>>(static_cast<unsigned long long>(microseconds * 1e3));
  CUDA_CHECK_LAUNCH();
}

}  // namespace roofline::measure

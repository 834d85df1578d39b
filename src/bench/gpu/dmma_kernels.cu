// FP64 tensor-core throughput (DMMA: mma.sync m8n8k4 f64, sm_80 and sm_90):
// each warp keeps independent 8x8 accumulators and multiplies the same A (8x4)
// and B (4x8) fragments into them over and over; registers only, no memory
// traffic in the loop.
#include <string>

#include "kernels/clock_probe.cuh"
#include "roofline/core/error.hpp"
#include "roofline/cuda/check.hpp"
#include "src/bench/gpu/kernels.hpp"

namespace roofline::bench::gpu {

namespace {

__global__ void __launch_bounds__(kDmmaThreads)
    dmma_kernel(int iters, const double* __restrict__ ab, double* __restrict__ out, int store_all, ClockProbe* probe,
                int* error) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const int lane = threadIdx.x & 31;
  // A is row-major 8x4: lane l holds A[l/4][l%4]; B is col-major 4x8: lane l holds B[l%4][l/4].
  const double a = ab[lane], b = ab[32 + lane];
  double d[kDmmaChains][2];
#pragma unroll
  for (int c = 0; c < kDmmaChains; ++c) d[c][0] = d[c][1] = 0.0;
  kernels::probe_begin(probe);
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int c = 0; c < kDmmaChains; ++c)
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};"
                   : "+d"(d[c][0]), "+d"(d[c][1])
                   : "d"(a), "d"(b));
  }
  double s = 0.0;
#pragma unroll
  for (int c = 0; c < kDmmaChains; ++c) s += d[c][0] + d[c][1];
  const unsigned long long bits = static_cast<unsigned long long>(__double_as_longlong(s));
  kernels::probe_end(probe, static_cast<uint32_t>(bits ^ (bits >> 32)));
  const size_t tid = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (store_all) {
    // D is 8x8: lane l holds D[l/4][2(l%4)] and D[l/4][2(l%4) + 1] of every accumulator.
#pragma unroll
    for (int c = 0; c < kDmmaChains; ++c) {
      out[(tid * kDmmaChains + c) * 2] = d[c][0];
      out[(tid * kDmmaChains + c) * 2 + 1] = d[c][1];
    }
  } else if (bits == 0xFFF8DEADBEEF0000ull + static_cast<unsigned>(iters)) {
    out[tid] = s;  // a NaN pattern: never, but the compiler cannot know
  }
#else
  if (threadIdx.x == 0 && blockIdx.x == 0) atomicExch(error, 2);
#endif
}

}  // namespace

int dmma_grid(int device) {
  int per_sm = 0, sms = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, dmma_kernel, kDmmaThreads, 0));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  if (per_sm < 1) throw_device("the DMMA kernel does not fit on an SM");
  return per_sm * sms;
}

void launch_dmma(int grid, int iters, const double* ab, double* out, bool store_all, ClockProbe* probe, int* error,
                 cudaStream_t s) {
  dmma_kernel<<<grid, kDmmaThreads, 0, s>>>(iters, ab, out, store_all ? 1 : 0, probe, error);
  CUDA_CHECK_LAUNCH();
}

}  // namespace roofline::bench::gpu

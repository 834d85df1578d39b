// Latency kernels: an empty kernel (launch overhead) and a single-thread
// pointer chase (memory latency; each load's address is the previous load's value,
// so exactly one access is in flight).
#include <cooperative_groups.h>

#include "kernels/clock_probe.cuh"
#include "roofline/core/error.hpp"
#include "roofline/cuda/check.hpp"
#include "src/ceilings/gpu/kernels.hpp"

namespace roofline::ceilings::gpu {

namespace {

__global__ void empty_kernel() {}

__global__ void grid_sync_kernel(int syncs) {
  cooperative_groups::grid_group g = cooperative_groups::this_grid();
  for (int i = 0; i < syncs; ++i) g.sync();
}

__global__ void build_chase_kernel(uint32_t* __restrict__ next, const uint32_t* __restrict__ succ, size_t nodes,
                                   uint32_t stride_words) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t n = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; n < nodes; n += stride)
    next[n * stride_words] = succ[n] * stride_words;
}

__device__ __forceinline__ uint32_t load_cg(const uint32_t* p) {
  uint32_t v;
  asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(v) : "l"(p));
  return v;
}

template <bool TRACE>
__global__ void chase_kernel(const uint32_t* __restrict__ next, uint32_t start, long long hops,
                             uint32_t* __restrict__ trace, uint32_t* __restrict__ end, ClockProbe* probe) {
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  kernels::probe_begin(probe);
  uint32_t i = start;
  for (long long h = 0; h < hops; ++h) {
    if constexpr (TRACE) trace[h] = i;
    i = load_cg(next + i);
  }
  kernels::probe_end(probe, i);
  *end = i;
}

}  // namespace

void launch_empty(cudaStream_t s) {
  empty_kernel<<<1, 1, 0, s>>>();
  CUDA_CHECK_LAUNCH();
}

int cooperative_smem_limit(int device) {
  int optin = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  CUDA_CHECK(cudaFuncSetAttribute(reinterpret_cast<const void*>(&grid_sync_kernel),
                                  cudaFuncAttributeMaxDynamicSharedMemorySize, optin));
  return optin;
}

void launch_grid_syncs(int blocks, int smem, int syncs, cudaStream_t s) {
  void* args[] = {&syncs};
  CUDA_CHECK(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(&grid_sync_kernel), dim3(blocks), dim3(256),
                                         args, static_cast<size_t>(smem), s));
}

void build_chase(uint32_t* next, const uint32_t* succ, size_t nodes, uint32_t stride_words, cudaStream_t s) {
  build_chase_kernel<<<1024, 256, 0, s>>>(next, succ, nodes, stride_words);
  CUDA_CHECK_LAUNCH();
}

void launch_chase(const uint32_t* next, uint32_t start, long long hops, uint32_t* trace, uint32_t* end,
                  ClockProbe* probe, cudaStream_t s) {
  if (trace)
    chase_kernel<true><<<1, 32, 0, s>>>(next, start, hops, trace, end, probe);
  else
    chase_kernel<false><<<1, 32, 0, s>>>(next, start, hops, nullptr, end, probe);
  CUDA_CHECK_LAUNCH();
}

}  // namespace roofline::ceilings::gpu

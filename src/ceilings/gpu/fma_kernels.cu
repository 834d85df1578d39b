// CUDA-core FMA throughput: FP64 (DFMA), FP32 (FFMA), FP16 half2 and BF16
// bf16x2 (HFMA2, HFMA2.BF16), at full occupancy with independent chains.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <string>

#include "kernels/fma_chain.cuh"
#include "roofline/core/error.hpp"
#include "roofline/cuda/check.hpp"
#include "src/ceilings/gpu/kernels.hpp"
#include "src/ceilings/gpu/pattern.hpp"

namespace roofline::ceilings::gpu {

namespace {

// 8 chains hide the FMA latency even with few warps; 64 FMAs per chain and trip
// (512 per trip) leave the loop counter and branch under 1% of the issue slots.
// 256 threads x 8 blocks = 2048 threads per SM: at most 32 registers a thread.
constexpr int kThreads = 256;
constexpr int kChains = 8;
constexpr int kUnroll = 64;
constexpr int kMinBlocks = 8;

template <class T>
__device__ __forceinline__ T start_value(uint32_t tid, int chain);
template <>
__device__ __forceinline__ float start_value<float>(uint32_t tid, int chain) {
  return fma_start(tid, chain, 0);
}
template <>
__device__ __forceinline__ double start_value<double>(uint32_t tid, int chain) {
  return static_cast<double>(fma_start(tid, chain, 0));
}
template <>
__device__ __forceinline__ __half2 start_value<__half2>(uint32_t tid, int chain) {
  return __floats2half2_rn(fma_start(tid, chain, 0), fma_start(tid, chain, 1));
}
template <>
__device__ __forceinline__ __nv_bfloat162 start_value<__nv_bfloat162>(uint32_t tid, int chain) {
  return __floats2bfloat162_rn(fma_start(tid, chain, 0), fma_start(tid, chain, 1));
}

template <class T>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
    fma_kernel(int iters, T a, T b, T* __restrict__ out, int store_all, uint32_t sentinel, ClockProbe* probe) {
  const uint32_t tid = blockIdx.x * blockDim.x + threadIdx.x;
  T x[kChains];
#pragma unroll
  for (int c = 0; c < kChains; ++c) x[c] = start_value<T>(tid, c);
  kernels::probe_begin(probe);
  const T s = kernels::fma_chains<T, kChains, kUnroll>(x, iters, a, b);
  const uint32_t bits = kernels::Fma<T>::bits(s);
  kernels::probe_end(probe, bits);
  if (store_all || bits == sentinel) out[tid] = s;
}

template <class T>
int grid_of(int device) {
  int per_sm = 0, sms = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fma_kernel<T>, kThreads, 0));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  if (per_sm < 1) throw_device("the FMA kernel does not fit on an SM");
  return per_sm * sms;
}

template <class T>
void launch(int grid, int iters, T a, T b, void* out, bool store_all, uint32_t sentinel, ClockProbe* probe,
            cudaStream_t s) {
  fma_kernel<T><<<grid, kThreads, 0, s>>>(iters, a, b, static_cast<T*>(out), store_all ? 1 : 0, sentinel, probe);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

FmaConfig fma_config(FmaType t) {
  FmaConfig c;
  c.threads = kThreads;
  c.chains = kChains;
  c.unroll = kUnroll;
  switch (t) {
    case FmaType::FP64: c.flops_per_fma = 2, c.bytes_per_result = 8; break;
    case FmaType::FP32: c.flops_per_fma = 2, c.bytes_per_result = 4; break;
    case FmaType::FP16x2:
    case FmaType::BF16x2: c.flops_per_fma = 4, c.bytes_per_result = 4; break;
  }
  return c;
}

int fma_grid(FmaType t, int device) {
  switch (t) {
    case FmaType::FP64: return grid_of<double>(device);
    case FmaType::FP32: return grid_of<float>(device);
    case FmaType::FP16x2: return grid_of<__half2>(device);
    case FmaType::BF16x2: return grid_of<__nv_bfloat162>(device);
  }
  return 0;
}

void launch_fma(FmaType t, int grid, int iters, double a, double b, void* out, bool store_all, uint32_t sentinel,
                ClockProbe* probe, cudaStream_t s) {
  switch (t) {
    case FmaType::FP64: return launch<double>(grid, iters, a, b, out, store_all, sentinel, probe, s);
    case FmaType::FP32:
      return launch<float>(grid, iters, static_cast<float>(a), static_cast<float>(b), out, store_all, sentinel, probe,
                           s);
    case FmaType::FP16x2:
      return launch<__half2>(grid, iters, __float2half2_rn(static_cast<float>(a)),
                             __float2half2_rn(static_cast<float>(b)), out, store_all, sentinel, probe, s);
    case FmaType::BF16x2:
      return launch<__nv_bfloat162>(grid, iters, __float2bfloat162_rn(static_cast<float>(a)),
                                    __float2bfloat162_rn(static_cast<float>(b)), out, store_all, sentinel, probe, s);
  }
}

}  // namespace roofline::ceilings::gpu

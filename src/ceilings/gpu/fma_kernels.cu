// CUDA-core FMA throughput: FP64 (DFMA), FP32 (FFMA), FP16 half2 and BF16
// bf16x2 (HFMA2, HFMA2.BF16), at full occupancy with independent chains.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <string>
#include <type_traits>

#include "kernels/fma_chain.cuh"
#include "roofline/core/error.hpp"
#include "roofline/cuda/check.hpp"
#include "src/ceilings/gpu/chain_types.cuh"
#include "src/ceilings/gpu/kernels.hpp"
#include "src/ceilings/gpu/persistent_grid.cuh"

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

// v rounded to T (through float for the packed types, both lanes alike).
template <class T>
T operand(double v) {
  if constexpr (std::is_same_v<T, double>)
    return v;
  else if constexpr (std::is_same_v<T, float>)
    return static_cast<float>(v);
  else if constexpr (std::is_same_v<T, __half2>)
    return __float2half2_rn(static_cast<float>(v));
  else
    return __float2bfloat162_rn(static_cast<float>(v));
}

template <class T>
int grid_of(int device) {
  return persistent_grid(fma_kernel<T>, kThreads, 0, device, "the FMA kernel does not fit on an SM");
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
  return with_fma_type(t, [&](auto v) { return grid_of<decltype(v)>(device); });
}

void launch_fma(FmaType t, int grid, int iters, double a, double b, void* out, bool store_all, uint32_t sentinel,
                ClockProbe* probe, cudaStream_t s) {
  with_fma_type(t, [&](auto v) {
    using T = decltype(v);
    launch<T>(grid, iters, operand<T>(a), operand<T>(b), out, store_all, sentinel, probe, s);
  });
}

}  // namespace roofline::ceilings::gpu

// The value types of the CUDA-core throughput kernels (FMA and add+multiply):
// the C++ type of each FmaType, and the starting value of a chain in it.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "src/ceilings/gpu/kernels.hpp"
#include "src/ceilings/gpu/pattern.hpp"

namespace roofline::ceilings::gpu {

// f(T{}) for the type of t: double, float, __half2 or __nv_bfloat162 (the
// packed types' pairs share one 32-bit register).
template <class F>
decltype(auto) with_fma_type(FmaType t, F&& f) {
  switch (t) {
    case FmaType::FP64: return f(double{});
    case FmaType::FP32: return f(float{});
    case FmaType::FP16x2: return f(__half2{});
    case FmaType::BF16x2: break;
  }
  return f(__nv_bfloat162{});
}

// The starting value of chain `chain` of thread `tid`: fma_start() (pattern.hpp)
// in the chain's type, packed types taking lanes 0 and 1. Exact in every
// type, so the host replays of the GPU tests start from the same values.
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

}  // namespace roofline::ceilings::gpu

// Independent FMA chains for CUDA-core throughput (mixbench style): each thread
// keeps CHAINS accumulators and applies x = x * a + b to each, UNROLL times per
// loop trip. a and b arrive as kernel arguments, so the compiler can neither
// fold nor shorten the chains, and the result is kept alive by a store that is
// guarded by a value the compiler cannot know (never true when timing).
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

namespace roofline::kernels {

template <class T>
struct Fma;

template <>
struct Fma<float> {
  static constexpr int flops = 2;  // per lane and instruction
  __device__ static __forceinline__ float fma(float x, float a, float b) { return __fmaf_rn(x, a, b); }
  __device__ static __forceinline__ float add(float x, float y) { return __fadd_rn(x, y); }
  __device__ static __forceinline__ uint32_t bits(float x) { return __float_as_uint(x); }
};

template <>
struct Fma<double> {
  static constexpr int flops = 2;
  __device__ static __forceinline__ double fma(double x, double a, double b) { return __fma_rn(x, a, b); }
  __device__ static __forceinline__ double add(double x, double y) { return __dadd_rn(x, y); }
  __device__ static __forceinline__ uint32_t bits(double x) {
    unsigned long long u = static_cast<unsigned long long>(__double_as_longlong(x));
    return static_cast<uint32_t>(u ^ (u >> 32));
  }
};

template <>
struct Fma<__half2> {
  static constexpr int flops = 4;  // two lanes of one packed FMA
  __device__ static __forceinline__ __half2 fma(__half2 x, __half2 a, __half2 b) { return __hfma2(x, a, b); }
  __device__ static __forceinline__ __half2 add(__half2 x, __half2 y) { return __hadd2(x, y); }
  __device__ static __forceinline__ uint32_t bits(__half2 x) { return *reinterpret_cast<uint32_t*>(&x); }
};

template <>
struct Fma<__nv_bfloat162> {
  static constexpr int flops = 4;
  __device__ static __forceinline__ __nv_bfloat162 fma(__nv_bfloat162 x, __nv_bfloat162 a, __nv_bfloat162 b) {
    return __hfma2(x, a, b);
  }
  __device__ static __forceinline__ __nv_bfloat162 add(__nv_bfloat162 x, __nv_bfloat162 y) { return __hadd2(x, y); }
  __device__ static __forceinline__ uint32_t bits(__nv_bfloat162 x) { return *reinterpret_cast<uint32_t*>(&x); }
};

// Runs `iters` loop trips of UNROLL x CHAINS FMAs on x[] and returns the chains
// summed in order (x[0] + x[1] + ...), in T's own arithmetic.
template <class T, int CHAINS, int UNROLL>
__device__ __forceinline__ T fma_chains(T (&x)[CHAINS], int iters, T a, T b) {
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
#pragma unroll
      for (int c = 0; c < CHAINS; ++c) x[c] = Fma<T>::fma(x[c], a, b);
    }
  }
  T s = x[0];
#pragma unroll
  for (int c = 1; c < CHAINS; ++c) s = Fma<T>::add(s, x[c]);
  return s;
}

}  // namespace roofline::kernels

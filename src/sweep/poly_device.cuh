// Device code shared by the sweep's overlap kernels (overlap_kernels.cu) and
// warp-specialized kernels (ws_kernels.cu): 16-byte vectors in and out of
// registers and shared memory, the polynomial on a thread's registers, and
// the last n mod (values per 16-byte vector) elements. Both
// kernels therefore run exactly the same arithmetic (and the same SASS per
// term), so their FLOP counts per element are equal by construction.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <cstring>

#include "kernels/poly_terms.cuh"

namespace roofline::sweep::gpu {
namespace {

// 16-byte vectors <-> L values of T (through memcpy: no aliasing questions).
template <class T, int L>
__device__ __forceinline__ void unpack(const uint4& v, T* x) {
  static_assert(sizeof(T) * L == sizeof(uint4), "a vector holds L values");
  memcpy(x, &v, sizeof v);
}
template <class T, int L>
__device__ __forceinline__ uint4 pack(const T* x) {
  uint4 v;
  memcpy(&v, x, sizeof v);
  return v;
}

// A 16-byte vector of a shared-memory stage (addr: the shared state space's
// address), as one LDS.128 the compiler may not move across the stage's
// synchronisation.
__device__ __forceinline__ uint4 lds16(uint32_t addr) {
  uint4 v;
  asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "r"(addr)
               : "memory");
  return v;
}

// The polynomial on a thread's chunk, T = float, double, __half2 or
// __nv_bfloat162; k >= 1. The first term is written out (r = 0 + x, p = x * x;
// Horner: r = 1 * x + 1), which is exactly the seed's first trip and saves
// the register copies a loop entry would need.
template <class T, bool Horner, int E>
__device__ __forceinline__ void poly(const T (&x)[E], T (&r)[E], int k) {
  using Op = kernels::PolyOp<T>;
  if constexpr (Horner) {
    const T one = Op::from_float(1.0f);
#pragma unroll
    for (int e = 0; e < E; ++e) r[e] = Op::fma(one, x[e], one);
    kernels::horner_steps<T, E>(r, x, one, k - 1);
  } else {
    const T zero = Op::from_float(0.0f);
    T p[E];
#pragma unroll
    for (int e = 0; e < E; ++e) {
      r[e] = Op::add(zero, x[e]);
      p[e] = Op::mul(x[e], x[e]);
    }
    kernels::addmul_steps<T, E>(r, p, x, k - 1);
  }
}

// The last n mod (values per vector) elements, one thread each (block 0).
template <class T, bool Horner>
__device__ __forceinline__ T poly_one(T x, int k) {
  T xs[1] = {x}, r[1];
  poly<T, Horner, 1>(xs, r, k);
  return r[0];
}
__device__ __forceinline__ void tail_one(const float* a, float* b, int64_t i, int k, bool horner) {
  b[i] = horner ? poly_one<float, true>(a[i], k) : poly_one<float, false>(a[i], k);
}
__device__ __forceinline__ void tail_one(const double* a, double* b, int64_t i, int k, bool) {
  b[i] = poly_one<double, false>(a[i], k);
}
// Half and bfloat16 singles go through the packed kernels' own arithmetic,
// both lanes holding the element.
__device__ __forceinline__ void tail_one(const __half* a, __half* b, int64_t i, int k, bool) {
  b[i] = __low2half(poly_one<__half2, false>(__half2half2(a[i]), k));
}
__device__ __forceinline__ void tail_one(const __nv_bfloat16* a, __nv_bfloat16* b, int64_t i, int k, bool) {
  b[i] = __low2bfloat16(poly_one<__nv_bfloat162, false>(__bfloat162bfloat162(a[i]), k));
}

template <class S>
__device__ __forceinline__ void tail(const void* a, void* b, int64_t n, int k, bool horner) {
  constexpr int64_t P = static_cast<int64_t>(sizeof(uint4) / sizeof(S));
  const int64_t first = n / P * P;
  const int64_t i = first + threadIdx.x;
  if (blockIdx.x == 0 && i < n) tail_one(static_cast<const S*>(a), static_cast<S*>(b), i, k, horner);
}

}  // namespace
}  // namespace roofline::sweep::gpu

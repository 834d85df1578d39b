// The sweep polynomial's inner loop, shared by the sweep's "overlap" kernels
// (src/sweep/overlap_kernels.cu) and the add+multiply ceilings
// (src/ceilings/gpu/addmul_kernels.cu): the ceiling runs exactly the code the
// sweep runs, without memory, so "the peak for this instruction mix" is the
// rate of the same instructions in the same dependency pattern.
//
// Every add and multiply goes through the _rn intrinsics: the compiler never
// contracts them into an FMA, so the instruction mix is the seed's (one add
// and one multiply per term) and the results are bit-exact against a host
// replay. The compiler may still issue an add or a multiply through the FMA
// datapath (HFMA2.MMA R, R, 1, 1, R is an exact half2 add): same result, same
// FLOPs, a different pipe, which the SASS check reports.
#pragma once
#include <cstdint>

namespace roofline::kernels {

// 16-byte vectors of elements per thread and chunk in the overlap kernels,
// and so the independent elements per thread in both users: 12 floats, 6
// doubles or 12 half2/bfloat162 pairs (24 halves). With the loop overhead
// below it leaves about 3% of the issue slots to non-FP work at k = 50.
constexpr int kPolyVecs = 3;
// Elements of type T (float, double, half2, bfloat162) per thread.
template <class T>
constexpr int poly_elements() {
  return kPolyVecs * static_cast<int>(16 / sizeof(T));
}

// Terms per trip of the unrolled loops: 16 keeps the loop counter, compare and
// branch near 1% of the issue slots (FADD/FMUL issue at one warp instruction
// per clock and scheduler, so every other instruction costs a FLOP slot).
constexpr int kPolyUnroll = 16;

}  // namespace roofline::kernels

#if defined(__CUDACC__)
#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace roofline::kernels {

template <class T>
struct PolyOp;

template <>
struct PolyOp<float> {
  static constexpr int lanes = 1;  // values per register (FLOPs per add or multiply)
  __device__ static __forceinline__ float from_float(float v) { return v; }
  __device__ static __forceinline__ float add(float a, float b) { return __fadd_rn(a, b); }
  __device__ static __forceinline__ float mul(float a, float b) { return __fmul_rn(a, b); }
  __device__ static __forceinline__ float fma(float a, float b, float c) { return __fmaf_rn(a, b, c); }
};

template <>
struct PolyOp<double> {
  static constexpr int lanes = 1;
  __device__ static __forceinline__ double from_float(float v) { return v; }
  __device__ static __forceinline__ double add(double a, double b) { return __dadd_rn(a, b); }
  __device__ static __forceinline__ double mul(double a, double b) { return __dmul_rn(a, b); }
  __device__ static __forceinline__ double fma(double a, double b, double c) { return __fma_rn(a, b, c); }
};

template <>
struct PolyOp<__half2> {
  static constexpr int lanes = 2;
  __device__ static __forceinline__ __half2 from_float(float v) { return __float2half2_rn(v); }
  __device__ static __forceinline__ __half2 add(__half2 a, __half2 b) { return __hadd2_rn(a, b); }
  __device__ static __forceinline__ __half2 mul(__half2 a, __half2 b) { return __hmul2_rn(a, b); }
  __device__ static __forceinline__ __half2 fma(__half2 a, __half2 b, __half2 c) { return __hfma2(a, b, c); }
};

template <>
struct PolyOp<__nv_bfloat162> {
  static constexpr int lanes = 2;
  __device__ static __forceinline__ __nv_bfloat162 from_float(float v) { return __float2bfloat162_rn(v); }
  __device__ static __forceinline__ __nv_bfloat162 add(__nv_bfloat162 a, __nv_bfloat162 b) {
    return __hadd2_rn(a, b);
  }
  __device__ static __forceinline__ __nv_bfloat162 mul(__nv_bfloat162 a, __nv_bfloat162 b) {
    return __hmul2_rn(a, b);
  }
  __device__ static __forceinline__ __nv_bfloat162 fma(__nv_bfloat162 a, __nv_bfloat162 b, __nv_bfloat162 c) {
    return __hfma2(a, b, c);
  }
};

// `steps` terms of the seed's loop on E independent elements (registers):
// r += p; p *= x. E add chains, each fed by its own multiply chain.
template <class T, int E, int U = kPolyUnroll>
__device__ __forceinline__ void addmul_steps(T (&r)[E], T (&p)[E], const T (&x)[E], int steps) {
  using Op = PolyOp<T>;
  int s = 0;
  for (; s + U <= steps; s += U) {
#pragma unroll
    for (int u = 0; u < U; ++u) {
#pragma unroll
      for (int e = 0; e < E; ++e) {
        r[e] = Op::add(r[e], p[e]);
        p[e] = Op::mul(p[e], x[e]);
      }
    }
  }
  for (; s < steps; ++s) {
#pragma unroll
    for (int e = 0; e < E; ++e) {
      r[e] = Op::add(r[e], p[e]);
      p[e] = Op::mul(p[e], x[e]);
    }
  }
}

// `steps` terms of Horner's rule on E independent elements: r = r * x + one.
template <class T, int E, int U = kPolyUnroll>
__device__ __forceinline__ void horner_steps(T (&r)[E], const T (&x)[E], T one, int steps) {
  using Op = PolyOp<T>;
  int s = 0;
  for (; s + U <= steps; s += U) {
#pragma unroll
    for (int u = 0; u < U; ++u) {
#pragma unroll
      for (int e = 0; e < E; ++e) r[e] = Op::fma(r[e], x[e], one);
    }
  }
  for (; s < steps; ++s) {
#pragma unroll
    for (int e = 0; e < E; ++e) r[e] = Op::fma(r[e], x[e], one);
  }
}

}  // namespace roofline::kernels
#endif  // __CUDACC__

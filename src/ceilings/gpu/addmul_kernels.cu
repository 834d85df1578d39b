// CUDA-core add+multiply throughput: FP64 (DADD + DMUL), FP32 (FADD + FMUL),
// FP16 half2 (HADD2 + HMUL2) and BF16 bf16x2 (HADD2.BF16 + HMUL2.BF16). Each
// thread runs the sweep polynomial's own inner loop (kernels/poly_terms.cuh:
// r += p; p *= x on poly_elements<T>() independent elements) on registers
// only, so the ceiling is the rate of exactly the instructions, in exactly the
// dependency pattern, that the sweep's overlap kernels execute per term.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels/poly_terms.cuh"
#include "roofline/core/error.hpp"
#include "roofline/cuda/check.hpp"
#include "src/ceilings/gpu/kernels.hpp"
#include "src/ceilings/gpu/pattern.hpp"

namespace roofline::ceilings::gpu {

namespace {

// Four blocks of 256 (1024 threads) per SM at least, as the overlap kernels run.
constexpr int kMinBlocks = 4;

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
__device__ __forceinline__ uint32_t bits_of(T v) {
  if constexpr (sizeof(T) == 8) {
    const auto u = static_cast<unsigned long long>(__double_as_longlong(v));
    return static_cast<uint32_t>(u ^ (u >> 32));
  } else {
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    return u;
  }
}

// xs: the E multipliers (the same for every thread; arguments the compiler
// cannot see, so it can neither fold nor shorten the chains).
template <class T>
__global__ void __launch_bounds__(kAddmulThreads, kMinBlocks)
    addmul_kernel(int iters, const T* __restrict__ xs, T* __restrict__ out, int store_all, uint32_t sentinel,
                  ClockProbe* probe) {
  constexpr int E = kernels::poly_elements<T>();
  using Op = kernels::PolyOp<T>;
  const uint32_t tid = blockIdx.x * blockDim.x + threadIdx.x;
  T x[E], r[E], p[E];
#pragma unroll
  for (int e = 0; e < E; ++e) {
    x[e] = xs[e];
    r[e] = start_value<T>(tid, 2 * e);
    p[e] = start_value<T>(tid, 2 * e + 1);
  }
  kernels::probe_begin(probe);
  kernels::addmul_steps<T, E>(r, p, x, iters * kernels::kPolyUnroll);
  T s = r[0];
#pragma unroll
  for (int e = 1; e < E; ++e) s = Op::add(s, r[e]);
#pragma unroll
  for (int e = 0; e < E; ++e) s = Op::add(s, p[e]);
  const uint32_t bits = bits_of(s);
  kernels::probe_end(probe, bits);
  if (store_all) {
#pragma unroll
    for (int e = 0; e < E; ++e) {
      out[(static_cast<size_t>(tid) * E + e) * 2] = r[e];
      out[(static_cast<size_t>(tid) * E + e) * 2 + 1] = p[e];
    }
  } else if (bits == sentinel) {
    out[tid] = s;  // never, in practice: keeps the work without traffic
  }
}

template <class T>
int grid_of(int device) {
  int per_sm = 0, sms = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, addmul_kernel<T>, kAddmulThreads, 0));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  if (per_sm < 1) throw_device("the add+multiply kernel does not fit on an SM");
  return per_sm * sms;
}

template <class T>
void launch(int grid, int iters, const void* xs, void* out, bool store_all, uint32_t sentinel, ClockProbe* probe,
            cudaStream_t s) {
  addmul_kernel<T><<<grid, kAddmulThreads, 0, s>>>(iters, static_cast<const T*>(xs), static_cast<T*>(out),
                                                   store_all ? 1 : 0, sentinel, probe);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

int addmul_elements(FmaType t) {
  switch (t) {
    case FmaType::FP64: return kernels::poly_elements<double>();
    case FmaType::FP32: return kernels::poly_elements<float>();
    case FmaType::FP16x2:
    case FmaType::BF16x2: return kernels::poly_elements<uint32_t>();  // 4-byte pairs
  }
  return 0;
}

int addmul_grid(FmaType t, int device) {
  switch (t) {
    case FmaType::FP64: return grid_of<double>(device);
    case FmaType::FP32: return grid_of<float>(device);
    case FmaType::FP16x2: return grid_of<__half2>(device);
    case FmaType::BF16x2: return grid_of<__nv_bfloat162>(device);
  }
  return 0;
}

void launch_addmul(FmaType t, int grid, int iters, const void* xs, void* out, bool store_all, uint32_t sentinel,
                   ClockProbe* probe, cudaStream_t s) {
  switch (t) {
    case FmaType::FP64: return launch<double>(grid, iters, xs, out, store_all, sentinel, probe, s);
    case FmaType::FP32: return launch<float>(grid, iters, xs, out, store_all, sentinel, probe, s);
    case FmaType::FP16x2: return launch<__half2>(grid, iters, xs, out, store_all, sentinel, probe, s);
    case FmaType::BF16x2: return launch<__nv_bfloat162>(grid, iters, xs, out, store_all, sentinel, probe, s);
  }
}

}  // namespace roofline::ceilings::gpu

// FP64 tensor-core throughput (DMMA: mma.sync m8n8k4 f64, sm_80 and sm_90;
// m16n8k4, m16n8k8 and m16n8k16 f64, sm_90 only):
// each warp keeps independent 8x8 accumulators and multiplies the same A (8x4)
// and B (4x8) fragments into them over and over; registers only, no memory
// traffic in the loop.
#include <string>

#include "kernels/clock_probe.cuh"
#include "roofline/core/error.hpp"
#include "roofline/cuda/check.hpp"
#include "src/ceilings/gpu/kernels.hpp"
#include "src/ceilings/gpu/persistent_grid.cuh"

namespace roofline::ceilings::gpu {

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

// The sm_90 shapes. One mma.sync per call; K picks the shape.
template <int K>
__device__ __forceinline__ void mma16(double (&d)[4], const double (&a)[K / 2], const double (&b)[K / 4]);
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
template <>
__device__ __forceinline__ void mma16<4>(double (&d)[4], const double (&a)[2], const double (&b)[1]) {
  asm volatile("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5}, {%6}, {%0, %1, %2, %3};"
               : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
               : "d"(a[0]), "d"(a[1]), "d"(b[0]));
}
template <>
__device__ __forceinline__ void mma16<8>(double (&d)[4], const double (&a)[4], const double (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, "
      "%3};"
      : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
      : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
}
template <>
__device__ __forceinline__ void mma16<16>(double (&d)[4], const double (&a)[8], const double (&b)[4]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5, %6, %7, %8, %9, %10, %11}, {%12, "
      "%13, %14, %15}, {%0, %1, %2, %3};"
      : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
      : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]), "d"(a[7]), "d"(b[0]),
        "d"(b[1]), "d"(b[2]), "d"(b[3]));
}
#endif

template <int K>
__global__ void __launch_bounds__(kDmma16Threads)
    dmma16_kernel(int iters, const double* __restrict__ frag, double* __restrict__ out, int store_all,
                  ClockProbe* probe, int* error) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  constexpr int NA = K / 2, NB = K / 4;
  const int lane = threadIdx.x & 31;
  double a[NA], b[NB];
#pragma unroll
  for (int i = 0; i < NA; ++i) a[i] = frag[lane * NA + i];
#pragma unroll
  for (int i = 0; i < NB; ++i) b[i] = frag[32 * NA + lane * NB + i];
  double d[kDmma16Chains][4];
#pragma unroll
  for (int c = 0; c < kDmma16Chains; ++c) d[c][0] = d[c][1] = d[c][2] = d[c][3] = 0.0;
  kernels::probe_begin(probe);
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int c = 0; c < kDmma16Chains; ++c) mma16<K>(d[c], a, b);
  }
  double s = 0.0;
#pragma unroll
  for (int c = 0; c < kDmma16Chains; ++c) s += d[c][0] + d[c][1] + d[c][2] + d[c][3];
  const unsigned long long bits = static_cast<unsigned long long>(__double_as_longlong(s));
  kernels::probe_end(probe, static_cast<uint32_t>(bits ^ (bits >> 32)));
  const size_t tid = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (store_all) {
#pragma unroll
    for (int c = 0; c < kDmma16Chains; ++c)
#pragma unroll
      for (int i = 0; i < 4; ++i) out[(tid * kDmma16Chains + c) * 4 + i] = d[c][i];
  } else if (bits == 0xFFF8DEADBEEF0000ull + static_cast<unsigned>(iters)) {
    out[tid] = s;  // a NaN pattern: never, but the compiler cannot know
  }
#else
  if (threadIdx.x == 0 && blockIdx.x == 0) atomicExch(error, 2);
#endif
}

using Dmma16Fn = void (*)(int, const double*, double*, int, ClockProbe*, int*);
Dmma16Fn dmma16_fn(int k) {
  switch (k) {
    case 4: return dmma16_kernel<4>;
    case 8: return dmma16_kernel<8>;
    case 16: return dmma16_kernel<16>;
  }
  throw Error(ErrorKind::Internal, "DMMA m16n8k" + std::to_string(k) + " is not a shape (k is 4, 8 or 16)");
}

}  // namespace

int dmma16_grid(int k, int device) {
  return persistent_grid(dmma16_fn(k), kDmma16Threads, 0, device,
                         "the DMMA m16n8k" + std::to_string(k) + " kernel does not fit on an SM");
}

void launch_dmma16(int k, int grid, int iters, const double* frag, double* out, bool store_all, ClockProbe* probe,
                   int* error, cudaStream_t s) {
  dmma16_fn(k)<<<grid, kDmma16Threads, 0, s>>>(iters, frag, out, store_all ? 1 : 0, probe, error);
  CUDA_CHECK_LAUNCH();
}

int dmma_grid(int device) {
  return persistent_grid(dmma_kernel, kDmmaThreads, 0, device, "the DMMA kernel does not fit on an SM");
}

void launch_dmma(int grid, int iters, const double* ab, double* out, bool store_all, ClockProbe* probe, int* error,
                 cudaStream_t s) {
  dmma_kernel<<<grid, kDmmaThreads, 0, s>>>(iters, ab, out, store_all ? 1 : 0, probe, error);
  CUDA_CHECK_LAUNCH();
}

}  // namespace roofline::ceilings::gpu

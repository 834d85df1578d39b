// 16-byte global loads and stores with explicit cache behaviour, and the
// grid-stride streaming loops built from them. Shared by the bandwidth
// benchmarks and by any kernel that streams a buffer once (copies, fills).
//
// Every load is an `asm volatile`, so the compiler can neither drop it nor hoist
// it out of a loop that re-reads the same addresses (the L2 benchmark does).
#pragma once
#include <cstddef>
#include <cstdint>

#if defined(__CUDACC__)
#include "kernels/warp_reduce.cuh"
#endif

namespace roofline::kernels {

enum class Load : int {
  Plain = 0,            // ld.global.v4 (what `*p` compiles to)
  NoAllocate = 1,       // ld.global.nc.L1::no_allocate: read-only path, no L1 line kept
  NoAllocatePf256 = 2,  // ... plus .L2::256B: the L2 fetches 256-byte sectors groups ahead
  NoAllocateEvict = 3,  // ... plus an L2::evict_first cache policy: streamed data leaves L2 first
  L2Only = 4,           // ld.global.cg: cached in L2 only (L1 bypassed)
};

enum class Store : int {
  Plain = 0,      // st.global.v4
  Streaming = 1,  // st.global.cs: evict-first, streaming
  Evict = 2,      // st.global.L1::no_allocate with an L2::evict_first cache policy
};

#if defined(__CUDACC__)
// An L2 cache policy that evicts the lines it touches first (for the
// .L2::cache_hint forms; 128-bit accesses take no direct .L2::evict_first).
__device__ __forceinline__ uint64_t evict_first_policy() {
  uint64_t pol;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol));
  return pol;
}

// `pol` is used by the Evict forms only (from evict_first_policy()).
template <Load L>
__device__ __forceinline__ uint4 load16(const uint4* p, uint64_t pol = 0) {
  uint4 v;
  if constexpr (L == Load::Plain) {
    asm volatile("ld.global.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p));
  } else if constexpr (L == Load::NoAllocate) {
    asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p));
  } else if constexpr (L == Load::NoAllocatePf256) {
    asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p));
  } else if constexpr (L == Load::NoAllocateEvict) {
    asm volatile("ld.global.nc.L1::no_allocate.L2::cache_hint.v4.u32 {%0, %1, %2, %3}, [%4], %5;"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p), "l"(pol));
  } else {
    asm volatile("ld.global.cg.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p));
  }
  return v;
}

template <Store S>
__device__ __forceinline__ void store16(uint4* p, uint4 v, uint64_t pol = 0) {
  if constexpr (S == Store::Plain) {
    asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
                 : "memory");
  } else if constexpr (S == Store::Streaming) {
    asm volatile("st.global.cs.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
                 : "memory");
  } else {
    asm volatile("st.global.L1::no_allocate.L2::cache_hint.v4.u32 [%0], {%1, %2, %3, %4}, %5;" ::"l"(p), "r"(v.x),
                 "r"(v.y), "r"(v.z), "r"(v.w), "l"(pol)
                 : "memory");
  }
}

__device__ __forceinline__ uint32_t sum4(uint4 v) { return v.x + v.y + v.z + v.w; }

// Grid-stride copy of n 16-byte vectors with U independent loads in flight per
// thread before the first store (the loads of one step are all issued first).
template <Load L, Store S, int U>
__device__ __forceinline__ void stream_copy(const uint4* __restrict__ in, uint4* __restrict__ out, size_t n) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const uint64_t pol = (L == Load::NoAllocateEvict || S == Store::Evict) ? evict_first_policy() : 0;
  for (; i + (U - 1) * stride < n; i += U * stride) {
    uint4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) v[u] = load16<L>(in + i + u * stride, pol);
#pragma unroll
    for (int u = 0; u < U; ++u) store16<S>(out + i + u * stride, v[u], pol);
  }
  for (; i < n; i += stride) store16<S>(out + i, load16<L>(in + i, pol), pol);
}

// Grid-stride read of n vectors; returns this thread's 32-bit sum of every word
// it read (wrapping), so that the reads have a checkable result.
template <Load L, int U>
__device__ __forceinline__ uint32_t stream_read(const uint4* __restrict__ in, size_t n) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  uint32_t acc = 0;
  const uint64_t pol = L == Load::NoAllocateEvict ? evict_first_policy() : 0;
  for (; i + (U - 1) * stride < n; i += U * stride) {
    uint4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) v[u] = load16<L>(in + i + u * stride, pol);
#pragma unroll
    for (int u = 0; u < U; ++u) acc += sum4(v[u]);
  }
  for (; i < n; i += stride) acc += sum4(load16<L>(in + i, pol));
  return acc;
}

// Sum of `v` over the block, written by thread 0 to out[blockIdx.x]. Needs
// blockDim.x to be a multiple of 32 and at most 1024.
__device__ __forceinline__ void block_sum_to(uint32_t v, uint32_t* out) {
  __shared__ uint32_t partial[32];
  v = warp_sum(v);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < static_cast<int>(blockDim.x / 32) ? partial[lane] : 0u;
    v = warp_sum(v);
    if (lane == 0) out[blockIdx.x] = v;
  }
}
#endif

}  // namespace roofline::kernels

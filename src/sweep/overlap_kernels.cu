// The sweep's "overlap" kernels: the same function as the seed's kernels (the
// same FLOPs per element, one read of a and one write of b per element),
// written so that memory and arithmetic run at the same time.
//
// * A persistent grid: every block loops over chunks of kVecs x kThreads
//   16-byte vectors (a warp reads 512 contiguous bytes per access).
// * A per-thread pipeline of cp.async copies into shared memory, kStages
//   chunks deep: a thread computes chunk c while its copies of chunks c+1 ...
//   c+kStages are in flight. Each thread reads back only what it copied
//   itself, so no block barrier is needed, and the bytes in flight cost no
//   registers (Little's law wants ~10 KiB per SM at the unloaded DRAM
//   latency; this keeps several times that, for the loaded latency).
// * kVecs x (16 / sizeof(T)) independent elements per thread: enough chains
//   for the FP pipes, and a per-chunk overhead (copies, stores, index
//   arithmetic) small next to 2k FLOPs per element from k of about 50 on.
//
// extern "C" keeps the names plain in SASS, where the build counts their
// instructions (src/sweep/sass.cpp).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

#include "kernels/poly_terms.cuh"
#include "roofline/core/error.hpp"
#include "roofline/cuda/check.hpp"
#include "src/sweep/kernels.hpp"
#include "src/sweep/poly_device.cuh"

namespace roofline::sweep::gpu {

namespace {

constexpr int kThreads = kOverlapThreads;
constexpr int kVecs = kOverlapVecs;
constexpr int kStages = kOverlapStages;

__device__ __forceinline__ uint32_t smem_u32(const void* p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }
// 16 bytes global -> shared, cached in L2 only (the data is used once).
__device__ __forceinline__ void cp_async16(uint32_t dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(src) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}

// Copies this thread's vectors of one chunk (pa: its first vector, a + first)
// into its slot; `whole`: every vector of the chunk lies below nvec (all
// chunks but the last).
__device__ __forceinline__ void issue_chunk(const uint4* pa, bool whole, const uint4* a, size_t nvec, uint32_t slot) {
  if (whole) {
#pragma unroll
    for (int j = 0; j < kVecs; ++j) cp_async16(slot + j * kThreads * 16, pa + j * kThreads);
  } else {
    const auto first = static_cast<size_t>(pa - a);
#pragma unroll
    for (int j = 0; j < kVecs; ++j)
      if (first + static_cast<size_t>(j) * kThreads < nvec) cp_async16(slot + j * kThreads * 16, pa + j * kThreads);
  }
  cp_async_commit();  // always: one group per chunk (an empty group completes at once)
}

template <class T, bool Horner>
__device__ __forceinline__ void overlap_body(const uint4* __restrict__ a, uint4* __restrict__ b, size_t nvec, int k) {
  constexpr int L = static_cast<int>(sizeof(uint4) / sizeof(T));  // T values per vector
  constexpr int E = kVecs * L;
  constexpr uint32_t kSlotBytes = kVecs * kThreads * 16;
  __shared__ __align__(16) uint4 stage[kStages][kVecs][kThreads];  // [slot][j][thread]
  const int t = threadIdx.x;
  constexpr size_t per_chunk = static_cast<size_t>(kVecs) * kThreads;
  // Chunk indices fit 32 bits up to 2^32 x 12 KiB of input.
  const auto chunks = static_cast<uint32_t>((nvec + per_chunk - 1) / per_chunk);
  const auto whole = static_cast<uint32_t>(nvec / per_chunk);
  const uint32_t step = gridDim.x;
  const size_t stride = static_cast<size_t>(step) * per_chunk;  // vectors from one of a block's chunks to its next
  const uint32_t slot0 = smem_u32(&stage[0][0][t]);
  uint32_t c = blockIdx.x;
  const size_t first = static_cast<size_t>(c) * per_chunk + t;  // this thread's vector 0 of chunk c
  // The copies run kStages chunks ahead of the arithmetic.
  const uint4* pa = a + first;
#pragma unroll
  for (int s = 0; s < kStages; ++s, pa += stride) issue_chunk(pa, c + s * step < whole, a, nvec, slot0 + s * kSlotBytes);
  uint4* pb = b + first;
  uint32_t slot = slot0;
  for (; c < chunks; c += step, pa += stride, pb += stride) {
    cp_async_wait<kStages - 1>();  // this thread's copies of chunk c have landed
    T x[E];
#pragma unroll
    for (int j = 0; j < kVecs; ++j) unpack<T, L>(lds16(slot + j * kThreads * 16), &x[j * L]);
    // Orders the reads above before the copy that refills the slot (a thread
    // only ever touches its own slots, so the warp's barrier is enough).
    __syncwarp();
    issue_chunk(pa, c + kStages * step < whole, a, nvec, slot);
    T r[E];
    poly<T, Horner, E>(x, r, k);
    if (c < whole) {
#pragma unroll
      for (int j = 0; j < kVecs; ++j) __stcs(pb + j * kThreads, pack<T, L>(&r[j * L]));
    } else {
      const auto fb = static_cast<size_t>(pb - b);
#pragma unroll
      for (int j = 0; j < kVecs; ++j)
        if (fb + static_cast<size_t>(j) * kThreads < nvec) __stcs(pb + j * kThreads, pack<T, L>(&r[j * L]));
    }
    slot = slot + kSlotBytes == slot0 + kStages * kSlotBytes ? slot0 : slot + kSlotBytes;
  }
  cp_async_wait<0>();  // no copy may outlive the block's shared memory
}

}  // namespace

}  // namespace roofline::sweep::gpu

using roofline::sweep::gpu::kOverlapThreads;
namespace ov = roofline::sweep::gpu;

// a, b: n elements (16-byte aligned); nvec = n / (values per vector).
extern "C" __global__ void __launch_bounds__(kOverlapThreads, 4)
    overlap_k_terms(const uint4* __restrict__ a, uint4* __restrict__ b, size_t nvec, int64_t n, int k) {
  ov::overlap_body<float, false>(a, b, nvec, k);
  ov::tail<float>(a, b, n, k, false);
}

extern "C" __global__ void __launch_bounds__(kOverlapThreads, 4)
    overlap_k_terms_fma(const uint4* __restrict__ a, uint4* __restrict__ b, size_t nvec, int64_t n, int k) {
  ov::overlap_body<float, true>(a, b, nvec, k);
  ov::tail<float>(a, b, n, k, true);
}

extern "C" __global__ void __launch_bounds__(kOverlapThreads, 4)
    overlap_k_terms_fp64(const uint4* __restrict__ a, uint4* __restrict__ b, size_t nvec, int64_t n, int k) {
  ov::overlap_body<double, false>(a, b, nvec, k);
  ov::tail<double>(a, b, n, k, false);
}

extern "C" __global__ void __launch_bounds__(kOverlapThreads, 4)
    overlap_k_terms_fp16(const uint4* __restrict__ a, uint4* __restrict__ b, size_t nvec, int64_t n, int k) {
  ov::overlap_body<__half2, false>(a, b, nvec, k);
  ov::tail<__half>(a, b, n, k, false);
}

extern "C" __global__ void __launch_bounds__(kOverlapThreads, 4)
    overlap_k_terms_bf16(const uint4* __restrict__ a, uint4* __restrict__ b, size_t nvec, int64_t n, int k) {
  ov::overlap_body<__nv_bfloat162, false>(a, b, nvec, k);
  ov::tail<__nv_bfloat16>(a, b, n, k, false);
}

namespace roofline::sweep::gpu {

namespace {

using OverlapFn = void (*)(const uint4*, uint4*, size_t, int64_t, int);

OverlapFn overlap_fn(Variant v) {
  switch (v) {
    case Variant::Fp32: return overlap_k_terms;
    case Variant::Fma: return overlap_k_terms_fma;
    case Variant::Fp64: return overlap_k_terms_fp64;
    case Variant::Fp16: return overlap_k_terms_fp16;
    case Variant::Bf16: return overlap_k_terms_bf16;
  }
  return nullptr;
}

}  // namespace

PersistentConfig overlap_config(Variant v, int device) {
  PersistentConfig c = persistent_config(reinterpret_cast<const void*>(overlap_fn(v)), kThreads, 0, v, "overlap",
                                         "use --kernel seed on this GPU", device);
  c.bytes_in_flight_per_thread = static_cast<double>(kStages) * kVecs * 16;
  return c;
}

void launch_overlap(Variant v, const void* a, void* b, std::int64_t n, int k, int grid, cudaStream_t s) {
  const VariantInfo& vi = info(v);
  const std::int64_t per_vec = 16 / vi.element_bytes;
  const size_t nvec = static_cast<size_t>(n / per_vec);
  const size_t per_chunk = static_cast<size_t>(kVecs) * kThreads;
  const size_t chunks = (nvec + per_chunk - 1) / per_chunk;
  // No more blocks than chunks (small n), but at least one for the tail.
  const int g = static_cast<int>(std::max<size_t>(1, std::min<size_t>(static_cast<size_t>(grid), chunks)));
  overlap_fn(v)<<<g, kThreads, 0, s>>>(static_cast<const uint4*>(a), static_cast<uint4*>(b), nvec, n, k);
  CUDA_CHECK_LAUNCH();
}

}  // namespace roofline::sweep::gpu

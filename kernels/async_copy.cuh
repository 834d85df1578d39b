// Global → shared copies that do not wait for each other (cp.async, sm_80+).
//
// A block that stages its tile with plain loads issues `ld.global` then
// `st.shared` per element: each store waits for its load, so a thread's
// share of the tile costs one L2/DRAM round trip per element unless the
// compiler batches them. cp.async puts every copy in flight at once and one
// wait covers them all (ece408's convolutions spent 5–10 µs of a 24 µs
// forward staging tiles this way; docs/perf-notes.md). Elsewhere (older
// archs, the host emulation in tests/cpu) the copy is a plain assignment.
#pragma once
#include <cuda_runtime.h>

namespace roofline::kernels {

// *dst = valid ? *src : 0, asynchronously; `src` must be a valid address even
// when !valid (nothing is read then: the source size is 0, the rest zero-filled).
__device__ inline void copy_async_f32(float* dst, const float* src, bool valid) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(d), "l"(src), "r"(valid ? 4 : 0) : "memory");
#else
  *dst = valid ? *src : 0.f;
#endif
}

// 16 bytes (dst and src 16-byte aligned) through L2 only: cp.async.cg never
// reads a stale L1 line, so it may copy what another SM wrote earlier in the
// same launch (after a grid barrier).
__device__ inline void copy_async_16(float* dst, const float* src) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(d), "l"(src) : "memory");
#elif defined(__CUDA_ARCH__)
  *reinterpret_cast<float4*>(dst) = __ldcg(reinterpret_cast<const float4*>(src));
#else
  for (int i = 0; i < 4; ++i) dst[i] = src[i];
#endif
}

// Waits for this thread's copies; a __syncthreads must follow before other
// threads read them.
__device__ inline void copy_async_wait_all() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
}

// ---- Bulk copies (the tensor memory accelerator, sm_90+) ---------------------------
// One thread starts contiguous copies of any multiple of 16 bytes; an mbarrier
// in shared memory counts their bytes and releases the block when all have
// landed: no registers, no per-thread requests (fused-mlp stages 133 KB of
// weights per block this way; docs/perf-notes.md compares cp.async). Use: bulk_init once (one thread, then __syncthreads); per
// batch bulk_fence, bulk_expect(total bytes), bulk_copy…, all threads
// bulk_wait(parity), parity = the batch's number mod 2. Device code for
// sm_90 and later only.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
__device__ inline unsigned smem_addr(const void* p) { return static_cast<unsigned>(__cvta_generic_to_shared(p)); }

__device__ inline void bulk_init(unsigned long long* bar) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(smem_addr(bar)) : "memory");
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

// Orders this thread's earlier accesses (shared memory the copies overwrite,
// global memory other SMs wrote before a grid barrier) before its bulk copies.
__device__ inline void bulk_fence() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  asm volatile("fence.proxy.async.global;\n" ::: "memory");
}

__device__ inline void bulk_expect(unsigned long long* bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(bytes)
               : "memory");
}

__device__ inline void bulk_copy(void* dst, const void* src, unsigned bytes, unsigned long long* bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
                   smem_addr(dst)),
               "l"(src), "r"(bytes), "r"(smem_addr(bar))
               : "memory");
}

__device__ inline void bulk_wait(unsigned long long* bar, unsigned parity) {
  unsigned done = 0;
  while (!done)
    asm volatile(
        "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(smem_addr(bar)), "r"(parity)
        : "memory");
}
#endif

}  // namespace roofline::kernels

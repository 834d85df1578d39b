// Global → shared copies that do not wait for each other (cp.async, sm_80+).
//
// A block that stages its tile with plain loads issues `ld.global` then
// `st.shared` per element: each store waits for its load, so a thread's
// share of the tile costs one L2/DRAM round trip per element unless the
// compiler batches them. cp.async puts every copy in flight at once and one
// wait covers them all (ece408's convolutions spent 5–10 µs of a 24 µs
// forward staging tiles this way; docs/perf-notes.md). Elsewhere (older
// archs, the host emulation in tests/cpu) the copy is a plain assignment.
// Bulk copies (TMA) and mbarriers: kernels/mbarrier.cuh.
#pragma once
#include <cuda_runtime.h>

namespace roofline::kernels {

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
// A shared-memory pointer as the shared state space's 32-bit address (what
// cp.async and the mbarrier/bulk instructions of kernels/mbarrier.cuh take).
__device__ __forceinline__ unsigned smem_addr(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
#endif

// *dst = valid ? *src : 0, asynchronously; `src` must be a valid address even
// when !valid (nothing is read then: the source size is 0, the rest zero-filled).
__device__ inline void copy_async_f32(float* dst, const float* src, bool valid) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(smem_addr(dst)), "l"(src), "r"(valid ? 4 : 0)
               : "memory");
#else
  *dst = valid ? *src : 0.f;
#endif
}

// 16 bytes (dst and src 16-byte aligned) through L2 only: cp.async.cg never
// reads a stale L1 line, so it may copy what another SM wrote earlier in the
// same launch (after a grid barrier).
__device__ inline void copy_async_16(float* dst, const float* src) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem_addr(dst)), "l"(src) : "memory");
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

}  // namespace roofline::kernels

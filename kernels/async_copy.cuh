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

// Waits for this thread's copies; a __syncthreads must follow before other
// threads read them.
__device__ inline void copy_async_wait_all() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
}

}  // namespace roofline::kernels

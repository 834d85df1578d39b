// mbarriers and bulk copies (the tensor memory accelerator), sm_90 and later:
// the one home of these primitives for the DRAM ceilings' bulk kernels
// (src/ceilings/gpu/bulk_kernels.cu), the sweep's warp-specialized kernels
// (src/sweep/ws_kernels.cu) and fused-mlp's weight staging
// (src/engine/fused/fused_mlp.cu). Addresses are shared-state-space ones
// (smem_addr); every copy and transfer count is a multiple of 16 bytes, 16-byte
// aligned. Device code for sm_90 and later only (guard with __CUDA_ARCH__).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/async_copy.cuh"  // smem_addr
#include "kernels/clock_probe.cuh"  // global_ns

namespace roofline::kernels {

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
__device__ __forceinline__ void mbar_init(std::uint32_t bar, std::uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}
// Makes initialised barriers visible (before the __syncthreads that precedes their use).
__device__ __forceinline__ void fence_mbarrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}
// An arrival that adds `bytes` to the phase's expected transfer count.
__device__ __forceinline__ void mbar_arrive_expect_tx(std::uint32_t bar, std::uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_arrive(std::uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}
__device__ __forceinline__ bool mbar_try_wait(std::uint32_t bar, std::uint32_t parity) {
  std::uint32_t done;
  asm volatile(
      "{\n\t.reg .pred p;\n\t"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
      "selp.u32 %0, 1, 0, p;\n\t}"
      : "=r"(done)
      : "r"(bar), "r"(parity)
      : "memory");
  return done != 0;
}
// Waits for the phase of parity `parity` (try_wait suspends the thread for a
// while in hardware, so the spin costs few issue slots); false after
// `limit_ns`, which can only be a bug (a lost arrival or copy): the caller
// reports it or traps, and the GPU does not hang.
__device__ __forceinline__ bool mbar_wait_for(std::uint32_t bar, std::uint32_t parity, std::uint64_t limit_ns) {
  if (mbar_try_wait(bar, parity)) return true;
  const std::uint64_t t0 = global_ns();
  while (!mbar_try_wait(bar, parity))
    if (global_ns() - t0 > limit_ns) return false;
  return true;
}
// Global → shared through the TMA engine; completes `bytes` of the barrier's
// transfer count when the data has landed.
__device__ __forceinline__ void bulk_g2s(std::uint32_t dst, const void* src, std::uint32_t bytes, std::uint32_t bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(dst),
      "l"(src), "r"(bytes), "r"(bar)
      : "memory");
}
// Orders this thread's ordinary shared-memory accesses before later bulk-copy
// (async proxy) accesses of shared memory.
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }
// … and its (and, after a grid barrier, other SMs') global-memory writes
// before later bulk reads of them.
__device__ __forceinline__ void fence_proxy_async_global() {
  asm volatile("fence.proxy.async.global;" ::: "memory");
}
#endif

}  // namespace roofline::kernels

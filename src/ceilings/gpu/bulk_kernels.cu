// DRAM streaming with the bulk-copy engine (cp.async.bulk, sm_90): one thread
// per block moves 16 KiB chunks between global and shared memory; loads
// complete on an mbarrier per stage, stores in bulk groups. Reads are summed by
// the block's warp (so every byte is used and checkable); copies go global ->
// shared -> global without touching registers; writes store one pattern chunk.
//
// Waits are bounded (2 s of %globaltimer): a broken wait sets *error and ends
// the block instead of hanging the benchmark.
#include <string>

#include "kernels/clock_probe.cuh"
#include "kernels/mbarrier.cuh"
#include "kernels/stream_access.cuh"
#include "roofline/core/error.hpp"
#include "roofline/cuda/check.hpp"
#include "src/ceilings/gpu/bulk_kernels.hpp"
#include "src/ceilings/gpu/persistent_grid.cuh"

namespace roofline::ceilings::gpu {

namespace {

constexpr int kStages = 4;
constexpr uint32_t kChunk = static_cast<uint32_t>(kBulkChunkBytes);
constexpr int kThreads = 32;
constexpr size_t kStagedSmem = kStages * kChunk + kStages * sizeof(unsigned long long);
constexpr size_t kWriteSmem = kChunk;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define ROOFLINE_BULK 1
constexpr unsigned long long kTimeoutNs = 2000000000ull;
using kernels::bulk_g2s;
using kernels::fence_mbarrier_init;
using kernels::fence_proxy_async;
using kernels::mbar_arrive_expect_tx;
using kernels::mbar_init;
using kernels::smem_addr;
__device__ __forceinline__ bool mbar_wait(uint32_t bar, uint32_t parity) {
  const unsigned long long t0 = kernels::global_ns();
  for (;;) {
    if (kernels::mbar_try_wait(bar, parity)) return true;
    if (kernels::global_ns() - t0 > kTimeoutNs) return false;
  }
}
__device__ __forceinline__ void bulk_store(void* dst, uint32_t src, uint32_t bytes) {
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(dst), "r"(src), "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }
// Until at most N committed store groups are still reading shared memory.
template <int N>
__device__ __forceinline__ void bulk_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}
template <int N>
__device__ __forceinline__ void bulk_wait_all() {
  asm volatile("cp.async.bulk.wait_group %0;" ::"n"(N) : "memory");
}
// Stage s of the staged kernels: data at stage0 + s * kChunk, its barrier at bar0 + 8 s.
__device__ __forceinline__ void init_stages(uint32_t bar0) {
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) mbar_init(bar0 + 8 * s, 1);
    fence_mbarrier_init();
    fence_proxy_async();
  }
  __syncthreads();
}
__device__ __forceinline__ void issue_load(uint32_t stage0, uint32_t bar0, int s, const uint8_t* src) {
  mbar_arrive_expect_tx(bar0 + 8 * s, kChunk);
  bulk_g2s(stage0 + s * kChunk, src, kChunk, bar0 + 8 * s);
}
#endif

__global__ void __launch_bounds__(kThreads) bulk_read_kernel(const uint8_t* __restrict__ in, size_t chunks,
                                                             uint32_t* __restrict__ block_sums, int* error) {
#ifdef ROOFLINE_BULK
  extern __shared__ __align__(128) uint8_t smem[];
  const uint32_t stage0 = smem_addr(smem);
  const uint32_t bar0 = stage0 + kStages * kChunk;
  init_stages(bar0);
  const size_t first = blockIdx.x, step = gridDim.x;
  const int lane = threadIdx.x;
  if (lane == 0)
    for (int s = 0; s < kStages; ++s)
      if (first + s * step < chunks) issue_load(stage0, bar0, s, in + (first + s * step) * kChunk);
  uint32_t acc = 0;
  bool ok = true;
  for (size_t k = 0;; ++k) {
    const size_t c = first + k * step;
    if (c >= chunks) break;
    const int s = static_cast<int>(k % kStages);
    if (!mbar_wait(bar0 + 8 * s, static_cast<uint32_t>((k / kStages) & 1))) {
      ok = false;
      break;
    }
    const uint4* data = reinterpret_cast<const uint4*>(smem + s * kChunk);
#pragma unroll 8
    for (int j = lane; j < static_cast<int>(kChunk / 16); j += kThreads) acc += kernels::sum4(data[j]);
    __syncwarp();  // every lane is done reading stage s before it is refilled
    const size_t next = c + kStages * step;
    if (lane == 0 && next < chunks) {
      fence_proxy_async();
      issue_load(stage0, bar0, s, in + next * kChunk);
    }
  }
  if (!ok) atomicExch(error, 1);
  kernels::block_sum_to(acc, block_sums);
#else
  if (threadIdx.x == 0) atomicExch(error, 2);
#endif
}

__global__ void __launch_bounds__(kThreads) bulk_copy_kernel(const uint8_t* __restrict__ in, uint8_t* __restrict__ out,
                                                             size_t chunks, int* error) {
#ifdef ROOFLINE_BULK
  extern __shared__ __align__(128) uint8_t smem[];
  const uint32_t stage0 = smem_addr(smem);
  const uint32_t bar0 = stage0 + kStages * kChunk;
  init_stages(bar0);
  if (threadIdx.x != 0) return;  // one thread drives the copy engine
  const size_t first = blockIdx.x, step = gridDim.x;
  for (int s = 0; s < kStages; ++s)
    if (first + s * step < chunks) issue_load(stage0, bar0, s, in + (first + s * step) * kChunk);
  for (size_t k = 0;; ++k) {
    const size_t c = first + k * step;
    if (c >= chunks) break;
    const int s = static_cast<int>(k % kStages);
    if (!mbar_wait(bar0 + 8 * s, static_cast<uint32_t>((k / kStages) & 1))) {
      atomicExch(error, 1);
      break;
    }
    fence_proxy_async();
    bulk_store(out + c * kChunk, stage0 + s * kChunk, kChunk);
    bulk_commit();
    // Refill the previous stage once its store (the group before this one) has
    // finished reading it: one store stays in flight while the loads run ahead.
    if (k >= 1) {
      const int sp = static_cast<int>((k - 1) % kStages);
      const size_t next = first + (k - 1 + kStages) * step;
      if (next < chunks) {
        bulk_wait_read<1>();
        issue_load(stage0, bar0, sp, in + next * kChunk);
      }
    }
  }
  bulk_wait_all<0>();
#else
  if (threadIdx.x == 0) atomicExch(error, 2);
#endif
}

__global__ void __launch_bounds__(kThreads) bulk_write_kernel(uint8_t* __restrict__ out, size_t chunks, uint32_t seed,
                                                              int* error) {
#ifdef ROOFLINE_BULK
  extern __shared__ __align__(128) uint8_t smem[];
  uint32_t* words = reinterpret_cast<uint32_t*>(smem);
  // write_word(seed, w) depends on w mod 4096 only: one chunk serves every chunk.
  for (int j = threadIdx.x; j < static_cast<int>(kChunk / 4); j += kThreads) words[j] = seed ^ static_cast<uint32_t>(j);
  fence_proxy_async();
  __syncthreads();
  if (threadIdx.x != 0) return;
  const uint32_t src = smem_addr(smem);
  for (size_t c = blockIdx.x; c < chunks; c += gridDim.x) {
    bulk_store(out + c * kChunk, src, kChunk);
    bulk_commit();
    bulk_wait_read<8>();  // bound the stores in flight per block
  }
  bulk_wait_all<0>();
#else
  if (threadIdx.x == 0) atomicExch(error, 2);
#endif
}

template <class Fn>
int grid_for(Fn fn, size_t smem, int device) {
  CUDA_CHECK(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  return persistent_grid(
      fn, kThreads, smem, device,
      "the bulk-copy kernel does not fit on an SM (" + std::to_string(smem) + " bytes of shared memory)");
}

size_t chunks_of(size_t bytes) {
  if (bytes == 0 || bytes % kChunk != 0)
    throw Error(ErrorKind::Internal,
                "bulk copy: " + std::to_string(bytes) + " bytes is not a multiple of " + std::to_string(kChunk));
  return bytes / kChunk;
}

}  // namespace

StreamVariant bulk_variant(StreamKind kind) {
  StreamVariant v;
  v.threads = kThreads;
  v.bulk = true;
  switch (kind) {
    case StreamKind::Read:
      v.id = "bulk.16k";
      v.method = "cp.async.bulk global->shared (16 KiB chunks, 4 stages, mbarrier), summed by one warp per block";
      break;
    case StreamKind::Write:
      v.id = "bulk.16k";
      v.method = "cp.async.bulk shared->global (16 KiB chunks, up to 8 in flight per block)";
      break;
    case StreamKind::Copy:
      v.id = "bulk.16k";
      v.method = "cp.async.bulk global->shared->global (16 KiB chunks, 4 stages)";
      break;
  }
  return v;
}

int bulk_grid(StreamKind kind, int device) {
  switch (kind) {
    case StreamKind::Read: return grid_for(bulk_read_kernel, kStagedSmem, device);
    case StreamKind::Write: return grid_for(bulk_write_kernel, kWriteSmem, device);
    case StreamKind::Copy: return grid_for(bulk_copy_kernel, kStagedSmem, device);
  }
  return 0;
}

void launch_bulk_read(int grid, const void* in, size_t bytes, uint32_t* block_sums, int* error, cudaStream_t s) {
  const size_t chunks = chunks_of(bytes);
  CUDA_CHECK(cudaFuncSetAttribute(bulk_read_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  static_cast<int>(kStagedSmem)));
  bulk_read_kernel<<<grid, kThreads, kStagedSmem, s>>>(static_cast<const uint8_t*>(in), chunks, block_sums, error);
  CUDA_CHECK_LAUNCH();
}

void launch_bulk_write(int grid, void* out, size_t bytes, uint32_t seed, int* error, cudaStream_t s) {
  const size_t chunks = chunks_of(bytes);
  bulk_write_kernel<<<grid, kThreads, kWriteSmem, s>>>(static_cast<uint8_t*>(out), chunks, seed, error);
  CUDA_CHECK_LAUNCH();
}

void launch_bulk_copy(int grid, const void* in, void* out, size_t bytes, int* error, cudaStream_t s) {
  const size_t chunks = chunks_of(bytes);
  CUDA_CHECK(cudaFuncSetAttribute(bulk_copy_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  static_cast<int>(kStagedSmem)));
  bulk_copy_kernel<<<grid, kThreads, kStagedSmem, s>>>(static_cast<const uint8_t*>(in), static_cast<uint8_t*>(out),
                                                        chunks, error);
  CUDA_CHECK_LAUNCH();
}

}  // namespace roofline::ceilings::gpu

// Launchers of the sweep kernels (kernels.cu: the seed's; overlap_kernels.cu:
// the overlapped ones; ws_kernels.cu: the warp-specialized ones). Only for .cu and _gpu.cpp files.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kernels/poly_terms.cuh"
#include "roofline/sweep/sweep.hpp"

namespace roofline::sweep::gpu {

// Fills a[0..n) with the variant's inputs (input_value rounded to its type).
void launch_init(Variant v, void* a, std::int64_t n, std::uint32_t seed, cudaStream_t s);
// One run of the seed's kernel: b = poly_k(a) over n elements, `block` threads per block.
void launch_sweep(Variant v, const void* a, void* b, std::int64_t n, int k, int block, cudaStream_t s);
// Blocks of the seed's kernel resident per SM at this block size (for Little's law).
int seed_blocks_per_sm(Variant v, int block);
// Counts non-finite outputs into *count (device memory, zeroed here first).
void launch_count_nonfinite(Variant v, const void* b, std::int64_t n, unsigned long long* count, cudaStream_t s);
// out[j] = raw bits of b[idx[j]] (2, 4 or 8 bytes, zero-extended).
void launch_gather(Variant v, const void* b, const std::int64_t* idx, std::int64_t m, std::uint64_t* out,
                   cudaStream_t s);

// ---------------------------------------------------------------- persistent kernels
// How a persistent sweep kernel (overlap or ws) runs on a device.
struct PersistentConfig {
  int threads = 0;        // per block (ws: the producer warp included)
  int blocks_per_sm = 0;  // resident (occupancy)
  int sms = 0;
  int grid = 0;               // blocks_per_sm x sms: a persistent grid
  int registers = 0;          // per thread
  size_t smem_per_block = 0;  // static (ws: and the ring)
  size_t local_bytes = 0;     // stack frame per thread (0 unless registers spilled)
  // Bytes in flight per resident thread while a chunk is computed (Little's
  // law): the overlap kernel's own copies; the ws kernel's ring (every stage
  // can be in flight at once) spread over its block's threads.
  double bytes_in_flight_per_thread = 0;
};
// The config of kernel `fn` of variant v (`kernel`: "overlap" or "ws") with
// `threads` a block and `ring_bytes` of dynamic shared memory, which it may
// then take; its shared memory is preferred over L1 (the data bypasses L1).
// Throws Error(Device) with `hint` when not one block fits on an SM. Leaves
// bytes_in_flight_per_thread to the caller. (sweep_gpu.cpp)
PersistentConfig persistent_config(const void* fn, int threads, size_t ring_bytes, Variant v, const char* kernel,
                                   const char* hint, int device);

// ---------------------------------------------------------------- overlap kernels
// Each thread owns kOverlapVecs 16-byte vectors of every chunk and keeps
// kOverlapStages chunks of copies in flight (cp.async into shared memory).
constexpr int kOverlapThreads = 256;
constexpr int kOverlapVecs = kernels::kPolyVecs;
constexpr int kOverlapStages = 4;

PersistentConfig overlap_config(Variant v, int device);
// One run of the overlap kernel over n elements (any n; 16-byte aligned a, b).
void launch_overlap(Variant v, const void* a, void* b, std::int64_t n, int k, int grid, cudaStream_t s);

// ---------------------------------------------------------------- ws kernels
// Warp-specialized: warp 0 of each block streams chunks of kWsVecs x 16 bytes
// per consumer thread into a kWsStages-deep shared-memory ring with bulk
// copies (TMA) and mbarriers; kWsConsumerWarps warps compute and store.
constexpr int kWsConsumerWarps = 8;
constexpr int kWsThreads = 32 * (1 + kWsConsumerWarps);
constexpr int kWsVecs = kernels::kPolyVecs;
constexpr int kWsStages = 6;
constexpr size_t kWsChunkBytes = static_cast<size_t>(kWsVecs) * kWsConsumerWarps * 32 * 16;  // 12 KiB
constexpr size_t kWsRingBytes = kWsStages * kWsChunkBytes;                                   // 72 KiB

// Throws Unsupported below compute capability 9.0 (no bulk copies).
PersistentConfig ws_config(Variant v, int device);
// One run of the ws kernel over n elements (any n; 16-byte aligned a, b).
// Call ws_config for the variant on this device first: it raises the kernel's
// dynamic shared-memory limit to the ring's 72 KiB (kept out of the timed launch).
void launch_ws(Variant v, const void* a, void* b, std::int64_t n, int k, int grid, cudaStream_t s);

}  // namespace roofline::sweep::gpu

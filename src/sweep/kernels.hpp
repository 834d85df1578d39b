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

// ---------------------------------------------------------------- overlap kernels
// Each thread owns kOverlapVecs 16-byte vectors of every chunk and keeps
// kOverlapStages chunks of copies in flight (cp.async into shared memory).
constexpr int kOverlapThreads = 256;
constexpr int kOverlapVecs = kernels::kPolyVecs;
constexpr int kOverlapStages = 4;

struct OverlapConfig {
  int threads = 0;         // per block
  int blocks_per_sm = 0;   // resident (occupancy)
  int sms = 0;
  int grid = 0;            // blocks_per_sm x sms: a persistent grid
  int registers = 0;       // per thread
  size_t smem_per_block = 0;
  size_t local_bytes = 0;  // stack frame per thread (0 unless registers spilled)
  double bytes_in_flight_per_thread = 0;  // copies in flight while a chunk is computed
};
OverlapConfig overlap_config(Variant v, int device);
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

struct WsConfig {
  int threads = 0;           // per block, producer warp included
  int consumer_threads = 0;  // per block
  int blocks_per_sm = 0;
  int sms = 0;
  int grid = 0;  // blocks_per_sm x sms: a persistent grid
  int registers = 0;
  size_t smem_per_block = 0;  // static + the ring
  size_t local_bytes = 0;
  double bytes_in_flight_per_block = 0;  // the ring: every stage can be in flight at once
};
// Throws Unsupported below compute capability 9.0 (no bulk copies).
WsConfig ws_config(Variant v, int device);
// One run of the ws kernel over n elements (any n; 16-byte aligned a, b).
// Call ws_config for the variant on this device first: it raises the kernel's
// dynamic shared-memory limit to the ring's 72 KiB (kept out of the timed launch).
void launch_ws(Variant v, const void* a, void* b, std::int64_t n, int k, int grid, cudaStream_t s);

}  // namespace roofline::sweep::gpu

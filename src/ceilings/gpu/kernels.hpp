// Launchers of the GPU ceiling kernels (src/ceilings/gpu/*.cu, *_sm90a.cu), used by
// the host code in src/ceilings/gpu/*_gpu.cpp and by the GPU tests. Every launcher
// checks the launch (CUDA_CHECK_LAUNCH) and throws roofline::Error on failure.
// CUDA builds only.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/clock_probe.cuh"
#include "src/ceilings/gpu/tensor_tiles.hpp"

namespace roofline::ceilings::gpu {

using kernels::ClockProbe;

// ---------------------------------------------------------------- buffers
// Fills `bytes` (a multiple of 16) with random_word(seed, i) for word i.
void fill_random(void* p, size_t bytes, uint32_t seed, cudaStream_t s);
// Fills `count` elements of type t with random values in [-1, 1) (INT8: [-64, 64)),
// rounded to the type (TF32: FP32 storage).
void fill_values(void* p, size_t count, TensorType t, uint32_t seed, cudaStream_t s);

// ---------------------------------------------------------------- DRAM streaming
// One way to stream a buffer; the DRAM figures try several and keep the best.
struct StreamVariant {
  int index = 0;        // into the kernel table of its kind
  std::string id;       // short, stable: "nc.pf256.x8"
  std::string method;   // for people: "ld.global.nc.L1::no_allocate.L2::256B (16 B), 8 in flight/thread"
  int threads = 0;      // per block
  bool bulk = false;    // cp.async.bulk through shared memory (compute capability 9.0+)
};
enum class StreamKind { Read, Write, Copy };
std::vector<StreamVariant> stream_variants(StreamKind kind);
// Bulk variants move 16 KiB chunks: their buffers must be a multiple of this.
constexpr size_t kBulkChunkBytes = 16384;
// A persistent grid: as many blocks as fit on every SM at once.
int stream_grid(StreamKind kind, const StreamVariant& v, int device);

// in: `bytes` of input; block_sums: grid words, each block's 32-bit wrapping sum
// of the words it read; error: set nonzero by the bulk variants on a timeout.
void launch_read(const StreamVariant& v, int grid, const void* in, size_t bytes, uint32_t* block_sums, int* error,
                 cudaStream_t s);
// Writes write_word(seed, w) to every word w of out.
void launch_write(const StreamVariant& v, int grid, void* out, size_t bytes, uint32_t seed, int* error,
                  cudaStream_t s);
void launch_copy(const StreamVariant& v, int grid, const void* in, void* out, size_t bytes, int* error,
                 cudaStream_t s);

// ---------------------------------------------------------------- L2
// Every thread re-reads its share of `bytes` (resident in L2) `passes` times
// with ld.global.cg (L1 bypassed). block_sums as for launch_read.
constexpr int kL2Threads = 512;
constexpr int kL2Unroll = 4;
int l2_grid(int device);
void launch_l2_read(int grid, const void* in, size_t bytes, int passes, uint32_t* block_sums, cudaStream_t s);

// ---------------------------------------------------------------- shared memory
// Each block fills kSmemVecs 16-byte vectors of shared memory with
// random_word(seed, .) and then reads kSmemUnroll of them per thread and trip
// (ld.shared.v4, a warp's 32 vectors contiguous: no bank conflicts); the start
// index advances by `step` (a multiple of 32) each trip.
constexpr int kSmemThreads = 256;
constexpr int kSmemVecs = 1024;  // 16 KiB per block
constexpr int kSmemUnroll = 4;   // kSmemUnroll * kSmemThreads == kSmemVecs: each trip reads the whole buffer
int smem_grid(int device);
void launch_smem_read(int grid, int iters, uint32_t step, uint32_t seed, uint32_t* block_sums, ClockProbe* probe,
                      cudaStream_t s);

// ---------------------------------------------------------------- CUDA-core FMA
enum class FmaType { FP64, FP32, FP16x2, BF16x2 };
struct FmaConfig {
  int threads = 256;  // per block
  int chains = 0;     // independent accumulators per thread
  int unroll = 0;     // FMAs per chain and loop trip
  int flops_per_fma = 0;
  int bytes_per_result = 0;  // size of one thread's result in `out`
};
FmaConfig fma_config(FmaType t);
int fma_grid(FmaType t, int device);
// Each thread runs iters x unroll x chains FMAs x = x * a + b (a, b rounded to
// the type; both lanes alike for packed types) from fma_start(); then stores the
// in-order sum of its chains to out[thread] when store_all, else only when its
// bits equal `sentinel` (never, in practice: keeps the work without traffic).
void launch_fma(FmaType t, int grid, int iters, double a, double b, void* out, bool store_all, uint32_t sentinel,
                ClockProbe* probe, cudaStream_t s);

// ---------------------------------------------------------------- CUDA-core add + multiply
// Each thread runs the sweep polynomial's inner loop, r += p; p *= x, on
// addmul_elements(t) independent elements for iters x kernels::kPolyUnroll
// terms, from r = fma_start(tid, 2e), p = fma_start(tid, 2e + 1) (lanes 0 and 1
// for packed types), x[e] = xs[e] (device memory, addmul_elements values of the
// type). store_all: out receives per thread and element r then p (2 values);
// otherwise one value per thread when the chains' sum has the bits `sentinel`.
constexpr int kAddmulThreads = 256;
int addmul_elements(FmaType t);
int addmul_grid(FmaType t, int device);
void launch_addmul(FmaType t, int grid, int iters, const void* xs, void* out, bool store_all, uint32_t sentinel,
                   ClockProbe* probe, cudaStream_t s);

// ---------------------------------------------------------------- FP64 tensor cores (DMMA)
// Each warp applies D += A . B (mma.sync m8n8k4 f64) `iters` times to each of
// kDmmaChains independent accumulators. ab: A's 32 elements (lane l: A[l/4][l%4],
// A 8x4) then B's 32 (lane l: B[l%4][l/4], B 4x8). store_all: out receives per
// thread and accumulator the two D elements it holds (D[l/4][2(l%4) + i]);
// otherwise nothing (a never-true guard). error: set to 2 when the device code
// is missing (compute capability below 8.0).
constexpr int kDmmaThreads = 256;
constexpr int kDmmaChains = 8;
int dmma_grid(int device);
void launch_dmma(int grid, int iters, const double* ab, double* out, bool store_all, ClockProbe* probe, int* error,
                 cudaStream_t s);

// The sm_90 shapes mma.sync m16n8k{4,8,16} f64 (k = 4, 8, 16): each warp applies
// D += A . B to kDmma16Chains independent accumulators, `iters` times. frag:
// the A fragments, k/2 values per lane (lane-major), then the B fragments, k/4
// per lane (dmma_layout.hpp says which element each value is).
// store_all: out receives per thread and accumulator its 4 D values; else
// nothing. error: 2 when the device code is missing (below compute capability 9.0).
constexpr int kDmma16Threads = 256;
constexpr int kDmma16Chains = 4;
int dmma16_grid(int k, int device);
void launch_dmma16(int k, int grid, int iters, const double* frag, double* out, bool store_all, ClockProbe* probe,
                   int* error, cudaStream_t s);

// ---------------------------------------------------------------- latency
void launch_empty(cudaStream_t s);
// The fused engine kernels' launch shape: one cooperative kernel of `blocks`
// blocks x 256 threads with `smem` bytes of dynamic shared memory each, which
// crosses `syncs` grid barriers (cg::grid_group::sync) and does nothing else.
// cooperative_smem_limit: the most dynamic shared memory one such block may
// take (set as the kernel's attribute).
int cooperative_smem_limit(int device);
void launch_grid_syncs(int blocks, int smem, int syncs, cudaStream_t s);
// next[n * stride_words] = succ[n] * stride_words for every node n.
void build_chase(uint32_t* next, const uint32_t* succ, size_t nodes, uint32_t stride_words, cudaStream_t s);
// One thread follows `hops` links from word `start` with ld.global.cg; writes the
// word it ends on to *end, and (when trace is not null) the word of each hop.
void launch_chase(const uint32_t* next, uint32_t start, long long hops, uint32_t* trace, uint32_t* end,
                  ClockProbe* probe, cudaStream_t s);

// ---------------------------------------------------------------- tensor cores (wgmma)
// One block: W warpgroups, each computing D (64 x 256) += A (64 x K) . B (256 x K)^T
// with K = 128 bytes of elements, as 4 wgmma.mma_async m64n256k{8,16,32} steps of
// 32 bytes each, A and B in shared memory (K-major canonical layout, no swizzle
// or 128-byte swizzle), D in registers (FP32, or INT32 for INT8).
struct WgmmaInfo {
  int m = 64, n = 256;
  int k_per_instruction = 0;  // 8 (tf32), 16 (fp16, bf16), 32 (fp8, int8)
  int k_tile = 0;             // K of A and B: 4 x k_per_instruction
  int elem_bytes = 0;
  int warpgroups = 0;         // per block
  int threads = 0;
  size_t smem_bytes = 0;
  double flops_per_iteration_per_block = 0;  // 2 x 64 x 256 x k_tile x warpgroups
};
WgmmaInfo wgmma_info(TensorType t);
// a: 64 rows x 128 bytes, b: 256 rows x 128 bytes, both row-major (K contiguous).
// check: d receives, for each block and warpgroup, D (64 x 256, row-major) after
// `iters` passes over K (use iters = 1 to compare with A . B^T); otherwise d
// receives at most one word per thread (the never-true guard). Throws
// Unsupported unless the device is compute capability 9.0 (sm_90a code).
void launch_wgmma(TensorType t, bool swizzle128, int grid, int iters, const void* a, const void* b, void* d,
                  bool check, ClockProbe* probe, cudaStream_t s);

}  // namespace roofline::ceilings::gpu

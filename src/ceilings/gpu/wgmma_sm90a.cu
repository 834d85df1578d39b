// Dense tensor-core throughput with Hopper's warpgroup MMA (wgmma.mma_async,
// sm_90a): TF32, FP16, BF16 and FP8 E4M3 into FP32, INT8 into INT32.
//
// Each block holds one A tile (64 x 128 bytes of K) and one B tile (256 x 128
// bytes of K) in shared memory and its warpgroups multiply them over and over:
// no global-memory traffic in the timed loop, so the figure is the tensor unit's
// own rate. The same kernel in check mode multiplies real tiles once and writes
// D, which the tests and `roofline ceilings` compare with a CPU product: that
// validates the shared-memory layout, the descriptors and the accumulator map.
//
// Shared-memory layout (K-major, the canonical layouts of the PTX ISA, "Matrix
// Descriptor" and "Shared Memory Matrix Layout"), for a tile of `rows` rows:
//  - 128-byte swizzle: row r's 128 bytes at (r/8)*1024 + (r%8)*128, its 16-byte
//    chunk c stored at chunk c ^ (r%8); the tile 1024-byte aligned. Descriptor:
//    start = tile + 32*step, LBO = 16 (unused), SBO = 1024 (8-row groups), mode 1.
//  - no swizzle: core matrices of 8 rows x 16 bytes (128 contiguous bytes); per K
//    step (32 bytes) the two 16-byte halves are 128 B apart (LBO) and 8-row groups
//    256 B apart (SBO); steps follow each other (rows*32 bytes). Mode 0.
#include <string>

#include "kernels/clock_probe.cuh"
#include "roofline/core/error.hpp"
#include "roofline/cuda/check.hpp"
#include "src/ceilings/gpu/kernels.hpp"
#include "src/ceilings/gpu/wgmma_operands.cuh"

namespace roofline::ceilings::gpu {

namespace {

constexpr int kM = 64;                           // rows of A (one warpgroup's D)
constexpr int kN = 256;                          // rows of B (columns of D)
constexpr int kRowBytes = 128;                   // K extent of each row of A and B
constexpr int kStepBytes = 32;                   // K bytes one instruction consumes
constexpr int kSteps = kRowBytes / kStepBytes;   // 4 instructions per pass over K
constexpr int kWarpgroups = 2;                   // each with its own accumulators
constexpr int kThreads = 128 * kWarpgroups;
constexpr int kABytes = kM * kRowBytes;          // 8 KiB
constexpr int kBBytes = kN * kRowBytes;          // 32 KiB
constexpr size_t kSmem = kABytes + kBBytes + 1024;  // + room to align the tiles to 1024 B

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// Byte offset of 16-byte chunk `chunk` (0..7 along K) of row `row` in a tile.
template <bool SWIZZLE>
__device__ __forceinline__ uint32_t tile_offset(int row, int chunk, int rows) {
  if constexpr (SWIZZLE) return (row >> 3) * 1024 + (row & 7) * 128 + ((chunk ^ (row & 7)) << 4);
  return (chunk >> 1) * (rows * kStepBytes) + (row >> 3) * 256 + (chunk & 1) * 128 + (row & 7) * 16;
}

// Matrix descriptor of K step `step` of a tile at shared address `tile`:
// bits 0-13 start >> 4, 16-29 LBO >> 4, 32-45 SBO >> 4, 62-63 swizzle mode.
template <bool SWIZZLE>
__device__ __forceinline__ uint64_t descriptor(uint32_t tile, int step, int rows) {
  uint32_t start;
  uint64_t lbo, sbo, mode;
  if constexpr (SWIZZLE) {
    start = tile + step * kStepBytes, lbo = 16, sbo = 1024, mode = 1;
  } else {
    start = tile + step * rows * kStepBytes, lbo = 128, sbo = 256, mode = 0;
  }
  return static_cast<uint64_t>((start & 0x3FFFFu) >> 4) | ((lbo >> 4) << 16) | ((sbo >> 4) << 32) | (mode << 62);
}

__device__ __forceinline__ uint32_t bits_of(float x) { return __float_as_uint(x); }
__device__ __forceinline__ uint32_t bits_of(int x) { return static_cast<uint32_t>(x); }

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}
// Keeps the compiler from moving accumulator accesses across the asynchronous
// region (the registers are in use by the tensor cores until the wait).
__device__ __forceinline__ void fence_operands(float (&d)[128]) {
#pragma unroll
  for (int i = 0; i < 128; ++i) asm volatile("" : "+f"(d[i])::"memory");
}
__device__ __forceinline__ void fence_operands(int (&d)[128]) {
#pragma unroll
  for (int i = 0; i < 128; ++i) asm volatile("" : "+r"(d[i])::"memory");
}

// D (64 x 256) += A . B^T for one 32-byte K step; the predicate (scale-d) is
// true: accumulate. FP16/BF16 take scale-a, scale-b and the two transpose
// immediates (0: K-major); TF32 and FP8 have no transpose; INT8 no scales.
template <TensorType T>
struct Mma;

template <>
struct Mma<TensorType::BF16> {
  using Acc = float;
  __device__ static __forceinline__ void run(float (&d)[128], uint64_t a, uint64_t b) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 " ROOFLINE_WGMMA_D128 ", %128, %129, p, 1, 1, 0, 0;\n}\n"
        : ROOFLINE_WGMMA_F128(d)
        : "l"(a), "l"(b), "r"(1));
  }
};

template <>
struct Mma<TensorType::FP16> {
  using Acc = float;
  __device__ static __forceinline__ void run(float (&d)[128], uint64_t a, uint64_t b) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 " ROOFLINE_WGMMA_D128 ", %128, %129, p, 1, 1, 0, 0;\n}\n"
        : ROOFLINE_WGMMA_F128(d)
        : "l"(a), "l"(b), "r"(1));
  }
};

template <>
struct Mma<TensorType::TF32> {
  using Acc = float;
  __device__ static __forceinline__ void run(float (&d)[128], uint64_t a, uint64_t b) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 " ROOFLINE_WGMMA_D128 ", %128, %129, p, 1, 1;\n}\n"
        : ROOFLINE_WGMMA_F128(d)
        : "l"(a), "l"(b), "r"(1));
  }
};

template <>
struct Mma<TensorType::FP8> {
  using Acc = float;
  __device__ static __forceinline__ void run(float (&d)[128], uint64_t a, uint64_t b) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3 " ROOFLINE_WGMMA_D128 ", %128, %129, p, 1, 1;\n}\n"
        : ROOFLINE_WGMMA_F128(d)
        : "l"(a), "l"(b), "r"(1));
  }
};

template <>
struct Mma<TensorType::INT8> {
  using Acc = int;
  __device__ static __forceinline__ void run(int (&d)[128], uint64_t a, uint64_t b) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k32.s32.s8.s8 " ROOFLINE_WGMMA_D128 ", %128, %129, p;\n}\n"
        : ROOFLINE_WGMMA_R128(d)
        : "l"(a), "l"(b), "r"(1));
  }
};

template <TensorType T, bool SWIZZLE>
__global__ void __launch_bounds__(kThreads, 1)
    wgmma_kernel(const uint4* __restrict__ a, const uint4* __restrict__ b, int iters,
                 typename Mma<T>::Acc* __restrict__ d_out, int check, ClockProbe* probe) {
  using Acc = typename Mma<T>::Acc;
  extern __shared__ uint8_t smem_raw[];
  const uint32_t raw = smem_addr(smem_raw);
  const uint32_t pad = ((raw + 1023u) & ~1023u) - raw;
  uint8_t* tiles = smem_raw + pad;
  const uint32_t a_tile = raw + pad, b_tile = a_tile + kABytes;

  // Global rows are 128 bytes = 8 chunks of 16 bytes; chunk j is row j/8, chunk j%8.
  for (int j = threadIdx.x; j < kM * 8; j += kThreads)
    *reinterpret_cast<uint4*>(tiles + tile_offset<SWIZZLE>(j >> 3, j & 7, kM)) = a[j];
  for (int j = threadIdx.x; j < kN * 8; j += kThreads)
    *reinterpret_cast<uint4*>(tiles + kABytes + tile_offset<SWIZZLE>(j >> 3, j & 7, kN)) = b[j];
  // Ordinary stores that the tensor cores (async proxy) read next.
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();

  uint64_t da[kSteps], db[kSteps];
#pragma unroll
  for (int s = 0; s < kSteps; ++s) {
    da[s] = descriptor<SWIZZLE>(a_tile, s, kM);
    db[s] = descriptor<SWIZZLE>(b_tile, s, kN);
  }
  Acc d[128];
#pragma unroll
  for (int i = 0; i < 128; ++i) d[i] = Acc(0);

  kernels::probe_begin(probe);
  fence_operands(d);
  for (int it = 0; it < iters; ++it) {
    wgmma_fence();
#pragma unroll
    for (int s = 0; s < kSteps; ++s) Mma<T>::run(d, da[s], db[s]);
    wgmma_commit();
    wgmma_wait<1>();  // keep one group in flight while the next is issued
    fence_operands(d);
  }
  wgmma_wait<0>();
  fence_operands(d);

  const int wg = threadIdx.x / 128, t = threadIdx.x % 128, warp = t / 32, lane = t % 32;
  Acc sum = Acc(0);
#pragma unroll
  for (int i = 0; i < 128; ++i) sum += d[i];
  const uint32_t sum_bits = bits_of(sum);
  kernels::probe_end(probe, sum_bits);
  if (check) {
    // Accumulator i of a thread: row 16*warp + lane/4 + 8*((i%4)/2), column 8*(i/4) + 2*(lane%4) + i%2.
    Acc* out = d_out + (static_cast<size_t>(blockIdx.x) * kWarpgroups + wg) * (kM * kN);
#pragma unroll
    for (int i = 0; i < 128; ++i) {
      const int row = 16 * warp + lane / 4 + 8 * ((i % 4) / 2);
      const int col = 8 * (i / 4) + 2 * (lane % 4) + (i % 2);
      out[row * kN + col] = d[i];
    }
  } else if (sum_bits == 0xFFFFFFFFu - static_cast<uint32_t>(iters)) {
    // A NaN pattern for FP32 and a 1-in-2^32 chance for INT32: keeps the work
    // observable to the compiler without memory traffic.
    d_out[static_cast<size_t>(blockIdx.x) * kThreads + threadIdx.x] = sum;
  }
}

template <TensorType T, bool SWIZZLE>
void launch_typed(int grid, int iters, const void* a, const void* b, void* d, bool check, ClockProbe* probe,
                  cudaStream_t s) {
  using Acc = typename Mma<T>::Acc;
  auto fn = wgmma_kernel<T, SWIZZLE>;
  CUDA_CHECK(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(kSmem)));
  fn<<<grid, kThreads, kSmem, s>>>(static_cast<const uint4*>(a), static_cast<const uint4*>(b), iters,
                                   static_cast<Acc*>(d), check ? 1 : 0, probe);
  CUDA_CHECK_LAUNCH();
}

template <bool SWIZZLE>
void dispatch(TensorType t, int grid, int iters, const void* a, const void* b, void* d, bool check, ClockProbe* probe,
              cudaStream_t s) {
  switch (t) {
    case TensorType::TF32: return launch_typed<TensorType::TF32, SWIZZLE>(grid, iters, a, b, d, check, probe, s);
    case TensorType::FP16: return launch_typed<TensorType::FP16, SWIZZLE>(grid, iters, a, b, d, check, probe, s);
    case TensorType::BF16: return launch_typed<TensorType::BF16, SWIZZLE>(grid, iters, a, b, d, check, probe, s);
    case TensorType::FP8: return launch_typed<TensorType::FP8, SWIZZLE>(grid, iters, a, b, d, check, probe, s);
    case TensorType::INT8: return launch_typed<TensorType::INT8, SWIZZLE>(grid, iters, a, b, d, check, probe, s);
  }
}

}  // namespace

WgmmaInfo wgmma_info(TensorType t) {
  WgmmaInfo w;
  w.elem_bytes = t == TensorType::TF32 ? 4 : (t == TensorType::FP8 || t == TensorType::INT8) ? 1 : 2;
  w.k_per_instruction = kStepBytes / w.elem_bytes;
  w.k_tile = kRowBytes / w.elem_bytes;
  w.warpgroups = kWarpgroups;
  w.threads = kThreads;
  w.smem_bytes = kSmem;
  w.flops_per_iteration_per_block = 2.0 * kM * kN * w.k_tile * kWarpgroups;
  return w;
}

void launch_wgmma(TensorType t, bool swizzle128, int grid, int iters, const void* a, const void* b, void* d,
                  bool check, ClockProbe* probe, cudaStream_t s) {
  int device = 0, major = 0, minor = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  if (major != 9 || minor != 0)
    throw_unsupported("the wgmma kernels are built for sm_90a (H100, H200); GPU " + std::to_string(device) +
                          " is compute capability " + std::to_string(major) + "." + std::to_string(minor),
                      "the tensor-core ceiling comes from cuBLASLt on this GPU");
  if (swizzle128)
    dispatch<true>(t, grid, iters, a, b, d, check, probe, s);
  else
    dispatch<false>(t, grid, iters, a, b, d, check, probe, s);
}

}  // namespace roofline::ceilings::gpu

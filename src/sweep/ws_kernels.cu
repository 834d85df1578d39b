// The sweep's warp-specialized ("ws") kernels: the same function, FLOPs and
// bytes per element as the seed's and the overlap kernels, with the work of
// moving memory taken off the warps that compute.
//
// * One producer warp per block: its lane 0 streams the block's chunks of `a`
//   into a ring of kWsStages shared-memory stages with 1D bulk copies
//   (cp.async.bulk, the TMA engine: one instruction per 12 KiB chunk), each
//   completing on the stage's "full" mbarrier (expect_tx / complete_tx).
// * kWsConsumerWarps consumer warps per block: wait on "full", read their
//   three 16-byte vectors per thread (LDS.128, conflict-free), release the
//   stage on its "empty" mbarrier (one arrive per warp), compute the
//   polynomial in registers (the same code as the overlap kernels:
//   poly_device.cuh) and store with 16-byte streaming stores.
// * A persistent grid (blocks resident per SM x SMs), chunks dealt round-robin.
//
// Why: in the overlap kernel every warp issues its own copies between two
// polynomials, so at the ridge the copies of the next chunks wait on the
// arithmetic of this one and DRAM idles in bursts. Here the producer refills
// a stage as soon as the last warp has read it, independently of how far the
// arithmetic is: up to kWsStages x 12 KiB per block stay in flight at all
// times, and the consumers' issue slots go to FP work, LDS and STG only.
//
// cp.async.bulk and mbarrier tx-counts exist from sm_90 on; on older GPUs the
// kernel traps, and the host refuses to launch it first (ws_config).
//
// extern "C" keeps the names plain in SASS, where the build counts their
// instructions (src/sweep/sass.cpp).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

#include "kernels/mbarrier.cuh"
#include "kernels/poly_terms.cuh"
#include "roofline/core/error.hpp"
#include "roofline/cuda/check.hpp"
#include "src/sweep/kernels.hpp"
#include "src/sweep/poly_device.cuh"

namespace roofline::sweep::gpu {

namespace {

constexpr int kConsumers = kWsConsumerWarps * 32;
constexpr int kVecs = kWsVecs;
constexpr uint32_t kPerChunk = static_cast<uint32_t>(kVecs) * kConsumers;  // 16-byte vectors per chunk

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
constexpr int kStages = kWsStages;
constexpr uint32_t kStageBytes = kPerChunk * 16;

using kernels::bulk_g2s;
using kernels::mbar_arrive;
using kernels::mbar_arrive_expect_tx;
using kernels::mbar_init;
using kernels::smem_addr;
// A wait longer than `limit_ns` can only be a bug (a lost arrival or copy):
// the kernel traps, and the launch fails with an error instead of hanging.
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity, uint64_t limit_ns) {
  if (kernels::mbar_try_wait(bar, parity)) return;
  const uint64_t t0 = kernels::global_ns();
  while (!kernels::mbar_try_wait(bar, parity))
    if (kernels::global_ns() - t0 > limit_ns) __trap();
}
#endif

template <class T, bool Horner>
__device__ __forceinline__ void ws_body(const uint4* __restrict__ a, uint4* __restrict__ b, size_t nvec, int k) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  constexpr int L = static_cast<int>(sizeof(uint4) / sizeof(T));  // T values per vector
  constexpr int E = kVecs * L;
  extern __shared__ __align__(128) uint4 ring[];  // kStages x kPerChunk vectors
  __shared__ __align__(8) uint64_t full[kStages], empty[kStages];
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  // Chunk indices fit 32 bits up to 2^32 x 12 KiB of input.
  const auto chunks = static_cast<uint32_t>((nvec + kPerChunk - 1) / kPerChunk);
  const auto whole = static_cast<uint32_t>(nvec / kPerChunk);
  const uint32_t step = gridDim.x;
  const uint32_t ring0 = smem_addr(ring);
  const uint32_t full0 = smem_addr(&full[0]), empty0 = smem_addr(&empty[0]);
  // No wait lasts longer than a chunk's arithmetic (about 75 ns per term on
  // the H100) plus a DRAM latency: 1 s + 1 us per term is a bug, not a wait.
  const uint64_t limit_ns = 1000000000ull + 1000ull * static_cast<uint64_t>(k);
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      mbar_init(full0 + 8 * s, 1);                  // the producer's arrive.expect_tx
      mbar_init(empty0 + 8 * s, kWsConsumerWarps);  // one arrive per consumer warp
    }
    // Makes the initialised barriers visible to the async proxy (the TMA engine).
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();

  if (warp == 0) {  // producer
    if (lane != 0) return;
    uint32_t s = 0, phase = 0, i = 0;
    for (uint32_t c = blockIdx.x; c < chunks; c += step, ++i) {
      // Stage s was last filled kStages chunks ago: wait until every consumer warp has read it.
      if (i >= static_cast<uint32_t>(kStages)) mbar_wait(empty0 + 8 * s, phase ^ 1, limit_ns);
      const size_t first = static_cast<size_t>(c) * kPerChunk;
      const auto bytes = static_cast<uint32_t>(std::min<size_t>(kPerChunk, nvec - first) * 16);
      mbar_arrive_expect_tx(full0 + 8 * s, bytes);
      bulk_g2s(ring0 + s * kStageBytes, a + first, bytes, full0 + 8 * s);
      if (++s == static_cast<uint32_t>(kStages)) s = 0, phase ^= 1;
    }
    return;  // the copies complete on the barriers; the consumers keep the block (and its ring) alive
  }

  // consumers: thread t reads vectors j x kConsumers + t of each stage
  const int t = static_cast<int>(threadIdx.x) - 32;
  uint32_t s = 0, phase = 0;
  for (uint32_t c = blockIdx.x; c < chunks; c += step) {
    mbar_wait(full0 + 8 * s, phase, limit_ns);  // this chunk has landed
    const uint32_t base = ring0 + s * kStageBytes + static_cast<uint32_t>(t) * 16;
    const size_t first = static_cast<size_t>(c) * kPerChunk + static_cast<size_t>(t);
    T x[E];
    if (c < whole) {
#pragma unroll
      for (int j = 0; j < kVecs; ++j) unpack<T, L>(lds16(base + j * kConsumers * 16), &x[j * L]);
    } else {  // the last chunk: only the vectors below nvec were copied
#pragma unroll
      for (int j = 0; j < kVecs; ++j)
        unpack<T, L>(first + static_cast<size_t>(j) * kConsumers < nvec ? lds16(base + j * kConsumers * 16)
                                                                               : make_uint4(0, 0, 0, 0),
                         &x[j * L]);
    }
    // Every lane's reads are done (values in registers) before the warp
    // releases the stage; the arrive has release semantics, the producer's
    // wait acquire ones, and only then does it issue the copy that refills it.
    __syncwarp();
    if (lane == 0) mbar_arrive(empty0 + 8 * s);
    T r[E];
    poly<T, Horner, E>(x, r, k);
    uint4* pb = b + first;
    if (c < whole) {
#pragma unroll
      for (int j = 0; j < kVecs; ++j) __stcs(pb + j * kConsumers, pack<T, L>(&r[j * L]));
    } else {
#pragma unroll
      for (int j = 0; j < kVecs; ++j)
        if (first + static_cast<size_t>(j) * kConsumers < nvec) __stcs(pb + j * kConsumers, pack<T, L>(&r[j * L]));
    }
    if (++s == static_cast<uint32_t>(kStages)) s = 0, phase ^= 1;
  }
#else
  (void)a, (void)b, (void)nvec, (void)k;
  __trap();  // no bulk copies before sm_90; ws_config refuses such GPUs
#endif
}

}  // namespace

}  // namespace roofline::sweep::gpu

using roofline::sweep::gpu::kWsThreads;
namespace ws = roofline::sweep::gpu;

// a, b: n elements (16-byte aligned); nvec = n / (values per vector). The
// last n mod (values per vector) elements are done by block 0 first (they lie
// past every chunk).
extern "C" __global__ void __launch_bounds__(kWsThreads, 2)
    ws_k_terms(const uint4* __restrict__ a, uint4* __restrict__ b, size_t nvec, int64_t n, int k) {
  ws::tail<float>(a, b, n, k, false);
  ws::ws_body<float, false>(a, b, nvec, k);
}

extern "C" __global__ void __launch_bounds__(kWsThreads, 2)
    ws_k_terms_fma(const uint4* __restrict__ a, uint4* __restrict__ b, size_t nvec, int64_t n, int k) {
  ws::tail<float>(a, b, n, k, true);
  ws::ws_body<float, true>(a, b, nvec, k);
}

extern "C" __global__ void __launch_bounds__(kWsThreads, 2)
    ws_k_terms_fp64(const uint4* __restrict__ a, uint4* __restrict__ b, size_t nvec, int64_t n, int k) {
  ws::tail<double>(a, b, n, k, false);
  ws::ws_body<double, false>(a, b, nvec, k);
}

extern "C" __global__ void __launch_bounds__(kWsThreads, 2)
    ws_k_terms_fp16(const uint4* __restrict__ a, uint4* __restrict__ b, size_t nvec, int64_t n, int k) {
  ws::tail<__half>(a, b, n, k, false);
  ws::ws_body<__half2, false>(a, b, nvec, k);
}

extern "C" __global__ void __launch_bounds__(kWsThreads, 2)
    ws_k_terms_bf16(const uint4* __restrict__ a, uint4* __restrict__ b, size_t nvec, int64_t n, int k) {
  ws::tail<__nv_bfloat16>(a, b, n, k, false);
  ws::ws_body<__nv_bfloat162, false>(a, b, nvec, k);
}

namespace roofline::sweep::gpu {

namespace {

using WsFn = void (*)(const uint4*, uint4*, size_t, int64_t, int);

WsFn ws_fn(Variant v) {
  switch (v) {
    case Variant::Fp32: return ws_k_terms;
    case Variant::Fma: return ws_k_terms_fma;
    case Variant::Fp64: return ws_k_terms_fp64;
    case Variant::Fp16: return ws_k_terms_fp16;
    case Variant::Bf16: return ws_k_terms_bf16;
  }
  return nullptr;
}

}  // namespace

PersistentConfig ws_config(Variant v, int device) {
  int major = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  if (major < 9)
    throw Error(ErrorKind::Unsupported,
                std::string("the ws sweep kernel needs bulk copies and mbarrier transaction counts (compute "
                            "capability 9.0 or newer); GPU ") +
                    std::to_string(device) + " is " + std::to_string(major) + ".x",
                "use --kernel seed,overlap on this GPU");
  PersistentConfig c = persistent_config(reinterpret_cast<const void*>(ws_fn(v)), kWsThreads, kWsRingBytes, v, "ws",
                                         "use --kernel seed,overlap on this GPU", device);
  c.bytes_in_flight_per_thread = static_cast<double>(kWsRingBytes) / c.threads;
  return c;
}

void launch_ws(Variant v, const void* a, void* b, std::int64_t n, int k, int grid, cudaStream_t s) {
  const VariantInfo& vi = info(v);
  const std::int64_t per_vec = 16 / vi.element_bytes;
  const size_t nvec = static_cast<size_t>(n / per_vec);
  const size_t chunks = (nvec + kPerChunk - 1) / kPerChunk;
  // No more blocks than chunks (small n), but at least one for the tail.
  const int g = static_cast<int>(std::max<size_t>(1, std::min<size_t>(static_cast<size_t>(grid), chunks)));
  ws_fn(v)<<<g, kWsThreads, kWsRingBytes, s>>>(static_cast<const uint4*>(a), static_cast<uint4*>(b), nvec, n, k);
  CUDA_CHECK_LAUNCH();
}

}  // namespace roofline::sweep::gpu

// Bandwidth kernels: DRAM read/write/copy through the SM load/store path (the
// bulk-copy variants are in bulk_kernels.cu), L2 re-reads, shared-memory reads,
// and the random fill of input buffers.
#include <string>

#include "kernels/stream_access.cuh"
#include "roofline/core/error.hpp"
#include "roofline/cuda/check.hpp"
#include "src/ceilings/gpu/bulk_kernels.hpp"
#include "src/ceilings/gpu/kernels.hpp"
#include "src/ceilings/gpu/pattern.hpp"
#include "src/ceilings/gpu/persistent_grid.cuh"

namespace roofline::ceilings::gpu {

using kernels::Load;
using kernels::Store;

namespace {

__global__ void fill_random_kernel(uint4* p, size_t n, uint32_t seed) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const uint64_t w = 4 * static_cast<uint64_t>(i);
    p[i] = make_uint4(random_word(seed, w), random_word(seed, w + 1), random_word(seed, w + 2),
                      random_word(seed, w + 3));
  }
}

template <Load L, int U>
__global__ void read_kernel(const uint4* __restrict__ in, size_t n, uint32_t* __restrict__ block_sums) {
  kernels::block_sum_to(kernels::stream_read<L, U>(in, n), block_sums);
}

// The value of vector i is {write_word(seed, 4i + k)}: two integer ops per
// store, far below what the store path needs to be the limit.
__device__ __forceinline__ uint4 write_vector(uint32_t seed, size_t i) {
  const uint32_t t = static_cast<uint32_t>(i & 1023u) << 2;
  return make_uint4(seed ^ t, seed ^ (t | 1u), seed ^ (t | 2u), seed ^ (t | 3u));
}

template <Store S, int U>
__global__ void write_kernel(uint4* __restrict__ out, size_t n, uint32_t seed) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const uint64_t pol = S == Store::Evict ? kernels::evict_first_policy() : 0;
  for (; i + (U - 1) * stride < n; i += U * stride) {
#pragma unroll
    for (int u = 0; u < U; ++u) kernels::store16<S>(out + i + u * stride, write_vector(seed, i + u * stride), pol);
  }
  for (; i < n; i += stride) kernels::store16<S>(out + i, write_vector(seed, i), pol);
}

template <Load L, Store S, int U>
__global__ void copy_kernel(const uint4* __restrict__ in, uint4* __restrict__ out, size_t n) {
  kernels::stream_copy<L, S, U>(in, out, n);
}

template <int U>
__global__ void __launch_bounds__(kL2Threads) l2_read_kernel(const uint4* __restrict__ in, size_t n, int passes,
                                                             uint32_t* __restrict__ block_sums) {
  uint32_t acc = 0;
  for (int p = 0; p < passes; ++p) acc += kernels::stream_read<Load::L2Only, U>(in, n);
  kernels::block_sum_to(acc, block_sums);
}

__global__ void __launch_bounds__(kSmemThreads) smem_read_kernel(int iters, uint32_t step, uint32_t seed,
                                                                 uint32_t* __restrict__ block_sums,
                                                                 ClockProbe* probe) {
  __shared__ uint4 buf[kSmemVecs];
  for (int j = threadIdx.x; j < kSmemVecs; j += blockDim.x) {
    const uint64_t w = 4 * static_cast<uint64_t>(j);
    buf[j] = make_uint4(random_word(seed, w), random_word(seed, w + 1), random_word(seed, w + 2),
                        random_word(seed, w + 3));
  }
  __syncthreads();
  kernels::probe_begin(probe);
  uint32_t idx = threadIdx.x;
  uint32_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int u = 0; u < kSmemUnroll; ++u) {
      const uint4 v = buf[(idx + u * kSmemThreads) & (kSmemVecs - 1)];
      a0 += v.x;
      a1 += v.y;
      a2 += v.z;
      a3 += v.w;
    }
    idx = (idx + step) & (kSmemVecs - 1);
  }
  const uint32_t acc = a0 + a1 + a2 + a3;
  kernels::probe_end(probe, acc);
  kernels::block_sum_to(acc, block_sums);
}

// ---- the variant tables: one entry per instantiated kernel

struct ReadEntry {
  void (*fn)(const uint4*, size_t, uint32_t*);
  int threads;
  const char* id;
  const char* method;
};
const ReadEntry kReads[] = {
    {read_kernel<Load::Plain, 4>, 512, "plain.x4", "ld.global.v4 (16 B), 4 loads per thread and step"},
    {read_kernel<Load::NoAllocate, 8>, 512, "nc.x8", "ld.global.nc.L1::no_allocate.v4, 8 loads per thread and step"},
    {read_kernel<Load::NoAllocatePf256, 8>, 512, "nc.pf256.x8",
     "ld.global.nc.L1::no_allocate.L2::256B.v4 (L2 prefetch 256 B), 8 loads per thread and step"},
    {read_kernel<Load::NoAllocateEvict, 8>, 512, "nc.evict.x8",
     "ld.global.nc.L1::no_allocate.L2::cache_hint.v4 (evict_first policy), 8 loads per thread and step"},
    {read_kernel<Load::NoAllocatePf256, 16>, 256, "nc.pf256.x16",
     "ld.global.nc.L1::no_allocate.L2::256B.v4, 16 loads per thread and step, 256-thread blocks"},
};

struct WriteEntry {
  void (*fn)(uint4*, size_t, uint32_t);
  int threads;
  const char* id;
  const char* method;
};
const WriteEntry kWrites[] = {
    {write_kernel<Store::Plain, 4>, 512, "plain.x4", "st.global.v4 (16 B), 4 stores per thread and step"},
    {write_kernel<Store::Streaming, 8>, 512, "cs.x8", "st.global.cs.v4 (streaming), 8 stores per thread and step"},
    {write_kernel<Store::Evict, 8>, 512, "evict.x8",
     "st.global.L1::no_allocate.L2::cache_hint.v4 (evict_first policy), 8 stores per thread and step"},
};

struct CopyEntry {
  void (*fn)(const uint4*, uint4*, size_t);
  int threads;
  const char* id;
  const char* method;
};
const CopyEntry kCopies[] = {
    {copy_kernel<Load::Plain, Store::Plain, 4>, 512, "plain.x4", "ld/st.global.v4 (16 B), 4 loads per thread and step"},
    {copy_kernel<Load::NoAllocate, Store::Streaming, 8>, 512, "nc.cs.x8",
     "ld.global.nc.L1::no_allocate.v4 + st.global.cs.v4, 8 loads per thread and step"},
    {copy_kernel<Load::NoAllocatePf256, Store::Streaming, 8>, 512, "nc.pf256.cs.x8",
     "ld.global.nc.L1::no_allocate.L2::256B.v4 + st.global.cs.v4, 8 loads per thread and step"},
    {copy_kernel<Load::NoAllocateEvict, Store::Evict, 8>, 512, "nc.evict.x8",
     "ld.nc/st with an L2 evict_first cache policy, 8 loads per thread and step"},
};

template <class Table, size_t N>
std::vector<StreamVariant> list(const Table (&t)[N]) {
  std::vector<StreamVariant> out;
  for (size_t i = 0; i < N; ++i) out.push_back({static_cast<int>(i), t[i].id, t[i].method, t[i].threads, false});
  return out;
}

template <class Fn>
int bandwidth_grid(Fn fn, int threads, int device) {
  return persistent_grid(fn, threads, 0, device,
                         "a bandwidth kernel cannot run with " + std::to_string(threads) + " threads per block");
}

void check_bytes(size_t bytes, const char* what) {
  if (bytes == 0 || bytes % 16 != 0)
    throw Error(ErrorKind::Internal,
                std::string(what) + ": " + std::to_string(bytes) + " bytes is not a positive multiple of 16");
}

}  // namespace

void fill_random(void* p, size_t bytes, uint32_t seed, cudaStream_t s) {
  check_bytes(bytes, "fill_random");
  fill_random_kernel<<<1024, 256, 0, s>>>(static_cast<uint4*>(p), bytes / 16, seed);
  CUDA_CHECK_LAUNCH();
}

std::vector<StreamVariant> stream_variants(StreamKind kind) {
  std::vector<StreamVariant> v = kind == StreamKind::Read    ? list(kReads)
                                 : kind == StreamKind::Write ? list(kWrites)
                                                             : list(kCopies);
  StreamVariant bulk = bulk_variant(kind);
  bulk.index = static_cast<int>(v.size());
  v.push_back(bulk);
  return v;
}

int stream_grid(StreamKind kind, const StreamVariant& v, int device) {
  if (v.bulk) return bulk_grid(kind, device);
  switch (kind) {
    case StreamKind::Read:
      return bandwidth_grid(kReads[v.index].fn, v.threads, device);
    case StreamKind::Write:
      return bandwidth_grid(kWrites[v.index].fn, v.threads, device);
    case StreamKind::Copy:
      return bandwidth_grid(kCopies[v.index].fn, v.threads, device);
  }
  return 0;
}

void launch_read(const StreamVariant& v, int grid, const void* in, size_t bytes, uint32_t* block_sums, int* error,
                 cudaStream_t s) {
  check_bytes(bytes, "launch_read");
  if (v.bulk) return launch_bulk_read(grid, in, bytes, block_sums, error, s);
  kReads[v.index].fn<<<grid, v.threads, 0, s>>>(static_cast<const uint4*>(in), bytes / 16, block_sums);
  CUDA_CHECK_LAUNCH();
}

void launch_write(const StreamVariant& v, int grid, void* out, size_t bytes, uint32_t seed, int* error,
                  cudaStream_t s) {
  check_bytes(bytes, "launch_write");
  if (v.bulk) return launch_bulk_write(grid, out, bytes, seed, error, s);
  kWrites[v.index].fn<<<grid, v.threads, 0, s>>>(static_cast<uint4*>(out), bytes / 16, seed);
  CUDA_CHECK_LAUNCH();
}

void launch_copy(const StreamVariant& v, int grid, const void* in, void* out, size_t bytes, int* error,
                 cudaStream_t s) {
  check_bytes(bytes, "launch_copy");
  if (v.bulk) return launch_bulk_copy(grid, in, out, bytes, error, s);
  kCopies[v.index].fn<<<grid, v.threads, 0, s>>>(static_cast<const uint4*>(in), static_cast<uint4*>(out),
                                                  bytes / 16);
  CUDA_CHECK_LAUNCH();
}

int l2_grid(int device) { return bandwidth_grid(l2_read_kernel<kL2Unroll>, kL2Threads, device); }

void launch_l2_read(int grid, const void* in, size_t bytes, int passes, uint32_t* block_sums, cudaStream_t s) {
  check_bytes(bytes, "launch_l2_read");
  l2_read_kernel<kL2Unroll><<<grid, kL2Threads, 0, s>>>(static_cast<const uint4*>(in), bytes / 16, passes, block_sums);
  CUDA_CHECK_LAUNCH();
}

int smem_grid(int device) { return bandwidth_grid(smem_read_kernel, kSmemThreads, device); }

void launch_smem_read(int grid, int iters, uint32_t step, uint32_t seed, uint32_t* block_sums, ClockProbe* probe,
                      cudaStream_t s) {
  if (step % 32 != 0) throw Error(ErrorKind::Internal, "launch_smem_read: step must be a multiple of 32");
  smem_read_kernel<<<grid, kSmemThreads, 0, s>>>(iters, step, seed, block_sums, probe);
  CUDA_CHECK_LAUNCH();
}

}  // namespace roofline::ceilings::gpu

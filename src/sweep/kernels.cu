// The sweep kernels. compute_k_terms is seed 004's kernel as the course wrote
// it (one element per thread, int indexing); the others change one thing each:
// the instruction mix (Horner's rule: one FFMA per term), the precision
// (double; half2 and bfloat162 with two elements per thread). extern "C"
// keeps their names plain in SASS, where the build counts their instructions.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "roofline/sweep/input.hpp"
#include "roofline/cuda/check.hpp"
#include "src/sweep/kernels.hpp"

extern "C" __global__ void compute_k_terms(const float* __restrict__ a, float* __restrict__ b, int n, int k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float x = a[i];
    float result = 0.0f;
    float power = x;
    for (int j = 0; j < k; ++j) {
      result += power;
      power *= x;
    }
    b[i] = result;
  }
}

// 1 + x + ... + x^k: one fused multiply-add per term.
extern "C" __global__ void compute_k_terms_fma(const float* __restrict__ a, float* __restrict__ b, int n, int k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float x = a[i];
    float r = 1.0f;
    for (int j = 0; j < k; ++j) r = fmaf(r, x, 1.0f);
    b[i] = r;
  }
}

extern "C" __global__ void compute_k_terms_fp64(const double* __restrict__ a, double* __restrict__ b, int n, int k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    double x = a[i];
    double result = 0.0;
    double power = x;
    for (int j = 0; j < k; ++j) {
      result += power;
      power *= x;
    }
    b[i] = result;
  }
}

// n2 pairs of halves; the _rn forms are never contracted into an FMA, so the
// mix stays one add and one multiply per term, as in the seed.
extern "C" __global__ void compute_k_terms_fp16(const __half2* __restrict__ a, __half2* __restrict__ b, int n2,
                                                int k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n2) {
    __half2 x = a[i];
    __half2 result = __float2half2_rn(0.0f);
    __half2 power = x;
    for (int j = 0; j < k; ++j) {
      result = __hadd2_rn(result, power);
      power = __hmul2_rn(power, x);
    }
    b[i] = result;
  }
}

extern "C" __global__ void compute_k_terms_bf16(const __nv_bfloat162* __restrict__ a, __nv_bfloat162* __restrict__ b,
                                                int n2, int k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n2) {
    __nv_bfloat162 x = a[i];
    __nv_bfloat162 result = __float2bfloat162_rn(0.0f);
    __nv_bfloat162 power = x;
    for (int j = 0; j < k; ++j) {
      result = __hadd2_rn(result, power);
      power = __hmul2_rn(power, x);
    }
    b[i] = result;
  }
}

namespace roofline::sweep::gpu {

namespace {

template <class T>
__device__ T convert_input(float x);
template <>
__device__ float convert_input<float>(float x) { return x; }
template <>
__device__ double convert_input<double>(float x) { return x; }
template <>
__device__ __half convert_input<__half>(float x) { return __float2half_rn(x); }
template <>
__device__ __nv_bfloat16 convert_input<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }

template <class T>
__global__ void init_kernel(T* a, std::int64_t n, std::uint32_t seed) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x)
    a[i] = convert_input<T>(input_value(static_cast<std::uint64_t>(i), seed));
}

__device__ bool finite_value(float v) { return isfinite(v); }
__device__ bool finite_value(double v) { return isfinite(v); }
__device__ bool finite_value(__half v) { return isfinite(__half2float(v)); }
__device__ bool finite_value(__nv_bfloat16 v) { return isfinite(__bfloat162float(v)); }

template <class T>
__global__ void count_nonfinite_kernel(const T* b, std::int64_t n, unsigned long long* count) {
  unsigned long long local = 0;
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x)
    local += !finite_value(b[i]);
  // One atomic per warp.
  for (int off = 16; off > 0; off /= 2) local += __shfl_down_sync(0xffffffffu, local, off);
  if ((threadIdx.x & 31) == 0 && local) atomicAdd(count, local);
}

template <class Bits>
__global__ void gather_kernel(const Bits* b, const std::int64_t* idx, std::int64_t m, std::uint64_t* out) {
  std::int64_t j = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (j < m) out[j] = static_cast<std::uint64_t>(b[idx[j]]);
}

constexpr int kThreads = 256;
// Grid-stride kernels: enough blocks to fill any current GPU, no more.
unsigned grid_for(std::int64_t n) {
  std::int64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < 4096 ? (blocks > 0 ? blocks : 1) : 4096);
}

}  // namespace

void launch_init(Variant v, void* a, std::int64_t n, std::uint32_t seed, cudaStream_t s) {
  switch (v) {
    case Variant::Fp32:
    case Variant::Fma: init_kernel<<<grid_for(n), kThreads, 0, s>>>(static_cast<float*>(a), n, seed); break;
    case Variant::Fp64: init_kernel<<<grid_for(n), kThreads, 0, s>>>(static_cast<double*>(a), n, seed); break;
    case Variant::Fp16: init_kernel<<<grid_for(n), kThreads, 0, s>>>(static_cast<__half*>(a), n, seed); break;
    case Variant::Bf16: init_kernel<<<grid_for(n), kThreads, 0, s>>>(static_cast<__nv_bfloat16*>(a), n, seed); break;
  }
  CUDA_CHECK_LAUNCH();
}

void launch_sweep(Variant v, const void* a, void* b, std::int64_t n, int k, int block, cudaStream_t s) {
  const VariantInfo& vi = info(v);
  std::int64_t threads = n / vi.elements_per_thread;  // callers ensure n is a multiple
  auto grid = static_cast<unsigned>((threads + block - 1) / block);
  int nt = static_cast<int>(threads);
  switch (v) {
    case Variant::Fp32:
      compute_k_terms<<<grid, block, 0, s>>>(static_cast<const float*>(a), static_cast<float*>(b), nt, k);
      break;
    case Variant::Fma:
      compute_k_terms_fma<<<grid, block, 0, s>>>(static_cast<const float*>(a), static_cast<float*>(b), nt, k);
      break;
    case Variant::Fp64:
      compute_k_terms_fp64<<<grid, block, 0, s>>>(static_cast<const double*>(a), static_cast<double*>(b), nt, k);
      break;
    case Variant::Fp16:
      compute_k_terms_fp16<<<grid, block, 0, s>>>(static_cast<const __half2*>(a), static_cast<__half2*>(b), nt, k);
      break;
    case Variant::Bf16:
      compute_k_terms_bf16<<<grid, block, 0, s>>>(static_cast<const __nv_bfloat162*>(a),
                                                  static_cast<__nv_bfloat162*>(b), nt, k);
      break;
  }
  CUDA_CHECK_LAUNCH();
}

int seed_blocks_per_sm(Variant v, int block) {
  int per_sm = 0;
  switch (v) {
    case Variant::Fp32: CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, compute_k_terms, block, 0)); break;
    case Variant::Fma:
      CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, compute_k_terms_fma, block, 0));
      break;
    case Variant::Fp64:
      CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, compute_k_terms_fp64, block, 0));
      break;
    case Variant::Fp16:
      CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, compute_k_terms_fp16, block, 0));
      break;
    case Variant::Bf16:
      CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, compute_k_terms_bf16, block, 0));
      break;
  }
  return per_sm;
}

void launch_count_nonfinite(Variant v, const void* b, std::int64_t n, unsigned long long* count, cudaStream_t s) {
  CUDA_CHECK(cudaMemsetAsync(count, 0, sizeof *count, s));
  switch (v) {
    case Variant::Fp32:
    case Variant::Fma:
      count_nonfinite_kernel<<<grid_for(n), kThreads, 0, s>>>(static_cast<const float*>(b), n, count);
      break;
    case Variant::Fp64:
      count_nonfinite_kernel<<<grid_for(n), kThreads, 0, s>>>(static_cast<const double*>(b), n, count);
      break;
    case Variant::Fp16:
      count_nonfinite_kernel<<<grid_for(n), kThreads, 0, s>>>(static_cast<const __half*>(b), n, count);
      break;
    case Variant::Bf16:
      count_nonfinite_kernel<<<grid_for(n), kThreads, 0, s>>>(static_cast<const __nv_bfloat16*>(b), n, count);
      break;
  }
  CUDA_CHECK_LAUNCH();
}

void launch_gather(Variant v, const void* b, const std::int64_t* idx, std::int64_t m, std::uint64_t* out,
                   cudaStream_t s) {
  auto grid = static_cast<unsigned>((m + kThreads - 1) / kThreads);
  if (grid == 0) return;
  switch (info(v).element_bytes) {
    case 2: gather_kernel<<<grid, kThreads, 0, s>>>(static_cast<const std::uint16_t*>(b), idx, m, out); break;
    case 4: gather_kernel<<<grid, kThreads, 0, s>>>(static_cast<const std::uint32_t*>(b), idx, m, out); break;
    default: gather_kernel<<<grid, kThreads, 0, s>>>(static_cast<const std::uint64_t*>(b), idx, m, out); break;
  }
  CUDA_CHECK_LAUNCH();
}

}  // namespace roofline::sweep::gpu

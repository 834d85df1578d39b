// Kernels over activations in F32, BF16 or F16 and in NCHW or NHWC: the
// bias + ReLU epilogue where a library did not fuse it, the per-channel
// (bias-gradient) sums, and conversions to and from fp32. See lowp.hpp.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "roofline/core/error.hpp"
#include "src/engine/cuda/cnn_common.cuh"
#include "src/engine/cuda/launch.cuh"
#include "src/engine/cuda/lowp.hpp"

namespace roofline::engine::cuda_ops {

namespace {

__device__ __forceinline__ float load(const float* p, std::int64_t i) { return p[i]; }
__device__ __forceinline__ float load(const __nv_bfloat16* p, std::int64_t i) { return __bfloat162float(p[i]); }
__device__ __forceinline__ float load(const __half* p, std::int64_t i) { return __half2float(p[i]); }
__device__ __forceinline__ void store(float* p, std::int64_t i, float v) { p[i] = v; }
__device__ __forceinline__ void store(__nv_bfloat16* p, std::int64_t i, float v) { p[i] = __float2bfloat16_rn(v); }
__device__ __forceinline__ void store(__half* p, std::int64_t i, float v) { p[i] = __float2half_rn(v); }

template <class T>
__global__ void bias_act_any_kernel(std::int64_t total, std::int64_t k, std::int64_t plane, bool nhwc, T* out,
                                const float* __restrict__ b, bool relu) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < total;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    float v = load(out, i);
    if (b) {
      // 32-bit where it fits: 64-bit division is a long software sequence.
      const std::int64_t ch = total <= std::int64_t(0xffffffffu)
                                  ? std::int64_t(nhwc ? std::uint32_t(i) % std::uint32_t(k)
                                                      : (std::uint32_t(i) / std::uint32_t(plane)) % std::uint32_t(k))
                                  : (nhwc ? i % k : (i / plane) % k);
      v += b[ch];
    }
    store(out, i, relu ? (v <= 0.f ? 0.f : v) : v);  // v <= 0 ? 0 : v keeps NaN
  }
}

constexpr int kSumThreads = 256;

// NCHW: block (channel, chunk of images) sums its channel's planes in those
// images; the block's threads then add their sums in a fixed tree order.
template <class T>
__global__ void channel_partials_nchw(std::int64_t n, std::int64_t k, std::int64_t plane, std::int64_t per_chunk,
                                      const T* __restrict__ x, float* __restrict__ partial) {
  __shared__ float red[kSumThreads];
  const std::int64_t ch = blockIdx.x, chunk = blockIdx.y;
  const std::int64_t i0 = chunk * per_chunk, i1 = min(n, i0 + per_chunk);
  float acc = 0.f;
  for (std::int64_t img = i0; img < i1; ++img) {
    const T* row = x + (img * k + ch) * plane;
    for (std::int64_t p = threadIdx.x; p < plane; p += kSumThreads) acc += load(row, p);
  }
  red[threadIdx.x] = acc;
  __syncthreads();
  for (int half = kSumThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) red[threadIdx.x] += red[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) partial[chunk * k + ch] = red[0];
}

// NHWC: block (32 channels, chunk of rows), 8 row lanes per channel, the
// lanes' sums added in order.
template <class T>
__global__ void channel_partials_nhwc(std::int64_t rows, std::int64_t k, std::int64_t per_chunk,
                                      const T* __restrict__ x, float* __restrict__ partial) {
  __shared__ float part[8][33];
  const std::int64_t col = blockIdx.x * 32 + threadIdx.x, chunk = blockIdx.y;
  const std::int64_t r0 = chunk * per_chunk, r1 = min(rows, r0 + per_chunk);
  float acc = 0.f;
  if (col < k)
    for (std::int64_t r = r0 + threadIdx.y; r < r1; r += 8) acc += load(x, r * k + col);
  part[threadIdx.y][threadIdx.x] = acc;
  __syncthreads();
  if (threadIdx.y == 0 && col < k) {
    float s = 0.f;
    for (int j = 0; j < 8; ++j) s += part[j][threadIdx.x];
    partial[chunk * k + col] = s;
  }
}

__global__ void sum_partials(std::int64_t chunks, std::int64_t k, float* __restrict__ sums,
                             const float* __restrict__ partial) {
  for (std::int64_t ch = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; ch < k;
       ch += std::int64_t(gridDim.x) * blockDim.x) {
    float s = 0.f;
    for (std::int64_t c = 0; c < chunks; ++c) s += partial[c * k + ch];
    sums[ch] = s;
  }
}

template <class T>
__global__ void to_f32_kernel(std::int64_t count, float* __restrict__ out, const T* __restrict__ in) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < count;
       i += std::int64_t(gridDim.x) * blockDim.x)
    out[i] = load(in, i);
}

template <class T>
__global__ void from_f32_kernel(std::int64_t count, T* __restrict__ out, const float* __restrict__ in) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < count;
       i += std::int64_t(gridDim.x) * blockDim.x)
    store(out, i, in[i]);
}

// Calls f with a null pointer of the element type of t.

// Chunks of the reduction: enough blocks for a few per SM, each with at least
// one image (NCHW) or eight rows (NHWC), at most 65535 (grid y).
std::int64_t sum_chunks(const CudaState* st, MemoryFormat f, std::int64_t n, std::int64_t k, std::int64_t plane) {
  const std::int64_t want = 4 * std::int64_t(std::max(st->sm_count, 1));
  if (f == MemoryFormat::NCHW) return std::clamp<std::int64_t>((want + k - 1) / k, 1, std::min<std::int64_t>(n, 65535));
  const std::int64_t col_blocks = (k + 31) / 32, rows = n * plane;
  return std::clamp<std::int64_t>((want + col_blocks - 1) / col_blocks, 1,
                                  std::min<std::int64_t>((rows + 7) / 8, 65535));
}

}  // namespace

void launch_bias_act_any(const CudaState* st, DType t, MemoryFormat f, std::int64_t n, std::int64_t k,
                         std::int64_t plane, void* out, const float* b, bool relu) {
  if (!b && !relu) return;
  const std::int64_t total = n * k * plane;
  with_dtype(t, [&](auto* type) {
    using T = std::remove_pointer_t<decltype(type)>;
    bias_act_any_kernel<T><<<blocks_for(total, st), kThreads, 0, stream_of(st)>>>(
        total, k, plane, f == MemoryFormat::NHWC, static_cast<T*>(out), b, relu);
  });
  CUDA_CHECK_LAUNCH();
}

std::int64_t channel_sums_scratch(const CudaState* st, MemoryFormat f, std::int64_t n, std::int64_t k,
                                  std::int64_t plane) {
  return sum_chunks(st, f, n, k, plane) * k;
}

void launch_channel_sums(const CudaState* st, DType t, MemoryFormat f, std::int64_t n, std::int64_t k,
                         std::int64_t plane, float* sums, const void* x, float* scratch) {
  const std::int64_t chunks = sum_chunks(st, f, n, k, plane);
  with_dtype(t, [&](auto* type) {
    using T = std::remove_pointer_t<decltype(type)>;
    const T* xt = static_cast<const T*>(x);
    if (f == MemoryFormat::NCHW) {
      const std::int64_t per = (n + chunks - 1) / chunks;
      channel_partials_nchw<T><<<dim3(static_cast<unsigned>(k), static_cast<unsigned>(chunks)), kSumThreads, 0,
                                 stream_of(st)>>>(n, k, plane, per, xt, scratch);
    } else {
      const std::int64_t rows = n * plane, per = (rows + chunks - 1) / chunks;
      channel_partials_nhwc<T><<<dim3(static_cast<unsigned>((k + 31) / 32), static_cast<unsigned>(chunks)),
                                 dim3(32, 8), 0, stream_of(st)>>>(rows, k, per, xt, scratch);
    }
  });
  CUDA_CHECK_LAUNCH();
  sum_partials<<<blocks_for(k, st), kThreads, 0, stream_of(st)>>>(chunks, k, sums, scratch);
  CUDA_CHECK_LAUNCH();
}

void launch_to_f32(const CudaState* st, DType t, std::int64_t count, float* out, const void* in) {
  with_dtype(t, [&](auto* type) {
    using T = std::remove_pointer_t<decltype(type)>;
    to_f32_kernel<T><<<blocks_for(count, st), kThreads, 0, stream_of(st)>>>(count, out, static_cast<const T*>(in));
  });
  CUDA_CHECK_LAUNCH();
}

void launch_from_f32(const CudaState* st, DType t, std::int64_t count, void* out, const float* in) {
  with_dtype(t, [&](auto* type) {
    using T = std::remove_pointer_t<decltype(type)>;
    from_f32_kernel<T><<<blocks_for(count, st), kThreads, 0, stream_of(st)>>>(count, static_cast<T*>(out), in);
  });
  CUDA_CHECK_LAUNCH();
}

}  // namespace roofline::engine::cuda_ops

// Device helpers of the CNN ops' kernels (batchnorm.cu, pool_cnn.cu,
// eltwise_cnn.cu): the activation types and their fp32 conversions, loads and
// stores of V elements as one vector access, deterministic block sums, and the
// last block of a grid-wide reduction.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>

#include "roofline/core/error.hpp"
#include "roofline/engine/tensor.hpp"

namespace roofline::engine::cuda_ops::cnn {

using bf16 = __nv_bfloat16;
using f16 = __half;

template <class T>
__device__ __forceinline__ float to_f(T v);
template <>
__device__ __forceinline__ float to_f<float>(float v) {
  return v;
}
template <>
__device__ __forceinline__ float to_f<bf16>(bf16 v) {
  return __bfloat162float(v);
}
template <>
__device__ __forceinline__ float to_f<f16>(f16 v) {
  return __half2float(v);
}

// Round to nearest even, as the host's half.hpp.
template <class T>
__device__ __forceinline__ T from_f(float v);
template <>
__device__ __forceinline__ float from_f<float>(float v) {
  return v;
}
template <>
__device__ __forceinline__ bf16 from_f<bf16>(float v) {
  return __float2bfloat16_rn(v);
}
template <>
__device__ __forceinline__ f16 from_f<f16>(float v) {
  return __float2half_rn(v);
}

// The unsigned type of B bytes: V elements of T move as one access of it.
template <int B>
struct Word;
template <>
struct Word<16> {
  using type = uint4;
};
template <>
struct Word<8> {
  using type = uint2;
};
template <>
struct Word<4> {
  using type = unsigned;
};
template <>
struct Word<2> {
  using type = unsigned short;
};

// f (V) = the V elements at p (aligned to V·sizeof(T)), in fp32.
template <class T, int V>
__device__ __forceinline__ void load(const T* p, float (&f)[V]) {
  using W = typename Word<int(sizeof(T)) * V>::type;
  const W w = *reinterpret_cast<const W*>(p);
  T t[V];
  memcpy(t, &w, sizeof(W));
#pragma unroll
  for (int k = 0; k < V; ++k) f[k] = to_f(t[k]);
}

template <class T, int V>
__device__ __forceinline__ void store(T* p, const float (&f)[V]) {
  using W = typename Word<int(sizeof(T)) * V>::type;
  T t[V];
#pragma unroll
  for (int k = 0; k < V; ++k) t[k] = from_f<T>(f[k]);
  W w;
  memcpy(&w, t, sizeof(W));
  *reinterpret_cast<W*>(p) = w;
}

__device__ __forceinline__ float relu(float v) { return v <= 0.f ? 0.f : v; }  // keeps NaN, as torch.relu

// The block's sums of (a, b) in thread 0, in a fixed order (deterministic).
// Every thread of the block must call it.
__device__ __forceinline__ float2 block_sum2(float a, float b) {
  __shared__ float2 warps[32];
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    a += __shfl_xor_sync(0xffffffffu, a, o);
    b += __shfl_xor_sync(0xffffffffu, b, o);
  }
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, nwarps = (blockDim.x + 31) / 32;
  if (lane == 0) warps[warp] = make_float2(a, b);
  __syncthreads();
  float2 r = make_float2(0.f, 0.f);
  if (warp == 0) {
    r = lane < nwarps ? warps[lane] : make_float2(0.f, 0.f);
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
      r.x += __shfl_xor_sync(0xffffffffu, r.x, o);
      r.y += __shfl_xor_sync(0xffffffffu, r.y, o);
    }
  }
  __syncthreads();  // warps[] may be reused by the caller's next call
  return r;
}

// Called by every thread of every block once its partial results are written:
// true in the one block that arrives last (it then reads everyone's partials,
// bypassing L1 with __ldcg), which also sets the counter back to 0 for the next
// launch (a context's kernels run in its stream's order, so one counter serves).
__device__ __forceinline__ bool last_block_done(unsigned* counter) {
  __shared__ bool is_last;
  __threadfence();  // this block's partials visible to the whole device before it is counted
  __syncthreads();
  if (threadIdx.x == 0) {
    const unsigned total = gridDim.x * gridDim.y * gridDim.z;
    is_last = atomicAdd(counter, 1u) == total - 1;
    if (is_last) *counter = 0u;
  }
  __syncthreads();
  if (is_last) __threadfence();
  return is_last;
}

}  // namespace roofline::engine::cuda_ops::cnn

namespace roofline::engine::cuda_ops {

// Calls f with a null pointer of the activations' element type (float,
// __nv_bfloat16 or __half) for dtype.
template <class F>
void with_dtype(DType dtype, F&& f) {
  switch (dtype) {
    case DType::F32:
      return f(static_cast<float*>(nullptr));
    case DType::BF16:
      return f(static_cast<cnn::bf16*>(nullptr));
    case DType::F16:
      return f(static_cast<cnn::f16*>(nullptr));
    default:
      throw Error(ErrorKind::Internal, "CNN op: activations must be F32, BF16 or F16");
  }
}

// Whether every pointer is aligned to `bytes` (nulls count as aligned).
template <class... P>
bool aligned_to(std::size_t bytes, const P*... p) {
  return ((reinterpret_cast<std::uintptr_t>(p) % bytes == 0) && ...);
}

}  // namespace roofline::engine::cuda_ops

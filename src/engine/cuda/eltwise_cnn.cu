// Element-wise CNN ops on the GPU: the residual add (+ReLU), ReLU forward and
// backward in bf16/fp16 (fp32 keeps elementwise.cu's kernels), and Dropout.
// A thread takes V elements (16 bytes) as one vector access where every
// pointer is aligned to it, the last n mod V elements one by one; grid-stride
// loops. Bytes: the add 3N·E, ReLU 2N·E forward and 3N·E backward, Dropout 2N·E
// each way (its mask is a hash of the index, kernels/dropout_hash.cuh, never stored).
#include <type_traits>

#include "kernels/dropout_hash.cuh"
#include "src/engine/cuda/cnn_common.cuh"
#include "src/engine/cuda/launch.cuh"
#include "src/engine/cuda/ops_cuda_cnn.hpp"

namespace roofline::engine::cuda_ops {

using namespace cnn;

namespace {

// vec(v) over the vectors [0, n/V) of V elements (a grid-stride loop), then
// one(i) over the n mod V elements after them.
template <int V, class FV, class F1>
__device__ __forceinline__ void vec_loop(std::int64_t n, FV&& vec, F1&& one) {
  const std::int64_t nv = n / V, stride = std::int64_t(gridDim.x) * blockDim.x;
  const std::int64_t tid = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  for (std::int64_t v = tid; v < nv; v += stride) vec(v);
  for (std::int64_t i = nv * V + tid; i < n; i += stride) one(i);
}

template <class T, int V>
__global__ void add_kernel(std::int64_t n, bool relu_on, T* out, const T* a, const T* b) {
  vec_loop<V>(
      n,
      [&](std::int64_t v) {
        float x[V], y[V];
        load<T, V>(a + v * V, x);
        load<T, V>(b + v * V, y);
#pragma unroll
        for (int k = 0; k < V; ++k) x[k] = relu_on ? relu(x[k] + y[k]) : x[k] + y[k];
        store<T, V>(out + v * V, x);
      },
      [&](std::int64_t i) {
        const float t = to_f(a[i]) + to_f(b[i]);
        out[i] = from_f<T>(relu_on ? relu(t) : t);
      });
}

template <class T, int V>
__global__ void relu_half_forward_kernel(std::int64_t n, T* out, const T* in) {
  vec_loop<V>(
      n,
      [&](std::int64_t v) {
        float x[V];
        load<T, V>(in + v * V, x);
#pragma unroll
        for (int k = 0; k < V; ++k) x[k] = relu(x[k]);
        store<T, V>(out + v * V, x);
      },
      [&](std::int64_t i) { out[i] = from_f<T>(relu(to_f(in[i]))); });
}

template <class T, int V>
__global__ void relu_half_backward_kernel(std::int64_t n, T* din, const T* dout, const T* out) {
  vec_loop<V>(
      n,
      [&](std::int64_t v) {
        float g[V], y[V];
        load<T, V>(dout + v * V, g);
        load<T, V>(out + v * V, y);
#pragma unroll
        for (int k = 0; k < V; ++k) g[k] = y[k] > 0.f ? g[k] : 0.f;
        store<T, V>(din + v * V, g);
      },
      [&](std::int64_t i) { din[i] = to_f(out[i]) > 0.f ? dout[i] : from_f<T>(0.f); });
}

// out = kept ? in·scale : 0, the mask from (seed, *step, index).
template <class T, int V>
__global__ void dropout_kernel(std::int64_t n, T* out, const T* in, std::uint64_t seed,
                               const std::int32_t* __restrict__ step, std::uint64_t threshold, float scale) {
  const std::uint64_t key = kernels::dropout_key(seed, step ? *step : 0);
  vec_loop<V>(
      n,
      [&](std::int64_t v) {
        float x[V];
        load<T, V>(in + v * V, x);
        if constexpr (V % 2 == 0) {
#pragma unroll
          for (int k = 0; k < V; k += 2) {  // one hash per pair of elements (dropout_hash.cuh)
            const std::uint64_t h = kernels::dropout_pair(key, (std::uint64_t(v) * V + k) >> 1);
            x[k] = std::uint64_t(std::uint32_t(h)) >= threshold ? x[k] * scale : 0.f;
            x[k + 1] = (h >> 32) >= threshold ? x[k + 1] * scale : 0.f;
          }
        } else {
#pragma unroll
          for (int k = 0; k < V; ++k)
            x[k] = kernels::dropout_kept(key, threshold, std::uint64_t(v) * V + k) ? x[k] * scale : 0.f;
        }
        store<T, V>(out + v * V, x);
      },
      [&](std::int64_t i) {
        const bool kept = kernels::dropout_kept(key, threshold, std::uint64_t(i));
        out[i] = from_f<T>(kept ? to_f(in[i]) * scale : 0.f);
      });
}

// Runs f.template operator()<T, V>() with V = 16 bytes of T where every pointer
// is aligned to 16 bytes, else 1.
template <class F>
void eltwise_dispatch(DType dtype, std::initializer_list<const void*> ptrs, F&& f) {
  with_dtype(dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    constexpr int VW = int(16 / sizeof(T));
    bool vec = true;
    for (const void* p : ptrs) vec = vec && aligned_to(16, p);
    if (vec)
      f.template operator()<T, VW>();
    else
      f.template operator()<T, 1>();
  });
}

}  // namespace

void add_forward(const CudaState* st, const ops::EltwiseShape& s, void* out, const void* a, const void* b) {
  eltwise_dispatch(s.dtype, {out, a, b}, [&]<class T, int V>() {
    add_kernel<T, V><<<blocks_for(s.n / V + 1, st), kThreads, 0, stream_of(st)>>>(
        s.n, s.act == ops::Activation::ReLU, static_cast<T*>(out), static_cast<const T*>(a), static_cast<const T*>(b));
    CUDA_CHECK_LAUNCH();
  });
}

void activation_forward_half(const CudaState* st, const ops::EltwiseShape& s, void* out, const void* in) {
  if (s.act != ops::Activation::ReLU) {
    if (out != in)
      CUDA_CHECK(
          cudaMemcpyAsync(out, in, std::size_t(s.n) * dtype_size(s.dtype), cudaMemcpyDeviceToDevice, stream_of(st)));
    return;
  }
  eltwise_dispatch(s.dtype, {out, in}, [&]<class T, int V>() {
    relu_half_forward_kernel<T, V><<<blocks_for(s.n / V + 1, st), kThreads, 0, stream_of(st)>>>(s.n, static_cast<T*>(out),
                                                                                           static_cast<const T*>(in));
    CUDA_CHECK_LAUNCH();
  });
}

void activation_backward_half(const CudaState* st, const ops::EltwiseShape& s, void* din, const void* dout,
                              const void* out) {
  if (s.act != ops::Activation::ReLU) {
    if (din != dout)
      CUDA_CHECK(
          cudaMemcpyAsync(din, dout, std::size_t(s.n) * dtype_size(s.dtype), cudaMemcpyDeviceToDevice, stream_of(st)));
    return;
  }
  eltwise_dispatch(s.dtype, {din, dout, out}, [&]<class T, int V>() {
    relu_half_backward_kernel<T, V><<<blocks_for(s.n / V + 1, st), kThreads, 0, stream_of(st)>>>(
        s.n, static_cast<T*>(din), static_cast<const T*>(dout), static_cast<const T*>(out));
    CUDA_CHECK_LAUNCH();
  });
}

namespace {
void dropout_launch(const CudaState* st, const ops::DropoutShape& s, void* out, const void* in, std::uint64_t seed,
                    const std::int32_t* step) {
  const std::uint64_t threshold = kernels::dropout_threshold(s.p);
  const float scale = kernels::dropout_scale(s.p);
  eltwise_dispatch(s.dtype, {out, in}, [&]<class T, int V>() {
    dropout_kernel<T, V><<<blocks_for(s.n / V + 1, st), kThreads, 0, stream_of(st)>>>(
        s.n, static_cast<T*>(out), static_cast<const T*>(in), seed, step, threshold, scale);
    CUDA_CHECK_LAUNCH();
  });
}
}  // namespace

void dropout_forward(const CudaState* st, const ops::DropoutShape& s, void* out, const void* in, std::uint64_t seed,
                     const std::int32_t* step) {
  dropout_launch(st, s, out, in, seed, step);
}

void dropout_backward(const CudaState* st, const ops::DropoutShape& s, void* din, const void* dout, std::uint64_t seed,
                      const std::int32_t* step) {
  dropout_launch(st, s, din, dout, seed, step);
}

}  // namespace roofline::engine::cuda_ops

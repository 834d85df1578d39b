// MaxPool2d (padded, NHWC, bf16/fp16: what the small models' kernel in
// conv_pool.cu does not take) and AdaptiveAvgPool2d on the GPU. One thread per
// output (forward) or input (backward) element, the backward passes gathering
// from the windows or bins that hold their element (no atomics: deterministic,
// in the reference's window order). In NHWC a thread takes V consecutive
// channels (16 bytes of activations) where the channels split into them, so a
// warp's loads are whole lines; NCHW threads walk consecutive output columns.
//
// Bytes (N inputs, M outputs of E bytes): max-pool forward N·E + M·(E + 4)
// (argmax int32), backward M·(E + 4) + N·E; the windows' overlap (3/2: each
// input read by up to 4 windows) comes from L1/L2. Average pool: N·E + M·E
// each way.
#include <algorithm>
#include <type_traits>

#include "src/engine/cuda/cnn_common.cuh"
#include "src/engine/cuda/launch.cuh"
#include "src/engine/cuda/ops_cuda_cnn.hpp"

namespace roofline::engine::cuda_ops {

using namespace cnn;

namespace {

struct PoolGeo {
  int n, C, h, w, oh, ow, kernel, stride, pad;
};

// Element (n, c, y, x) of an (n, C, H, W) batch; in NHWC c is the first of V.
template <bool NHWC>
__device__ __forceinline__ std::size_t at(int C, int H, int W, int n, int c, int y, int x) {
  return NHWC ? ((std::size_t(n) * H + y) * W + x) * C + c : ((std::size_t(n) * C + c) * H + y) * W + x;
}

// Splits a flat index over (n, C/V, H, W) in the format's order. In 32-bit
// arithmetic where the index fits (every tensor of the two networks): 64-bit
// division is a long software sequence on the GPU, and with four of them per
// element it made ResNet-18's max-pool backward compute-bound (360 us for
// 0.36 GB at batch 128 in bf16, H200, 2026-11-27).
template <bool NHWC, int V, class I>
__device__ __forceinline__ void split_as(I i, int C, int H, int W, int& n, int& c, int& y, int& x) {
  if (NHWC) {
    const I G = I(C / V);
    c = int(i % G) * V;
    i /= G;
    x = int(i % I(W));
    i /= I(W);
    y = int(i % I(H));
    n = int(i / I(H));
  } else {
    x = int(i % I(W));
    i /= I(W);
    y = int(i % I(H));
    i /= I(H);
    c = int(i % I(C));
    n = int(i / I(C));
  }
}
template <bool NHWC, int V>
__device__ __forceinline__ void split(std::int64_t i, int C, int H, int W, int& n, int& c, int& y, int& x) {
  if (i <= std::int64_t(0xffffffffu))
    split_as<NHWC, V, std::uint32_t>(std::uint32_t(i), C, H, W, n, c, y, x);
  else
    split_as<NHWC, V, std::int64_t>(i, C, H, W, n, c, y, x);
}

template <int V>
__device__ __forceinline__ void load_ints(const std::int32_t* p, int (&a)[V]) {
  if constexpr (V % 4 == 0) {
#pragma unroll
    for (int k = 0; k < V; k += 4) {
      const int4 q = reinterpret_cast<const int4*>(p)[k / 4];
      a[k] = q.x;
      a[k + 1] = q.y;
      a[k + 2] = q.z;
      a[k + 3] = q.w;
    }
  } else {
#pragma unroll
    for (int k = 0; k < V; ++k) a[k] = p[k];
  }
}

template <int V>
__device__ __forceinline__ void store_ints(std::int32_t* p, const int (&a)[V]) {
  if constexpr (V % 4 == 0) {
#pragma unroll
    for (int k = 0; k < V; k += 4) reinterpret_cast<int4*>(p)[k / 4] = make_int4(a[k], a[k + 1], a[k + 2], a[k + 3]);
  } else {
#pragma unroll
    for (int k = 0; k < V; ++k) p[k] = a[k];
  }
}

// Each output's window (padding excluded): the first maximum in row-major
// order wins, NaN wins (as the reference and PyTorch); argmax = iy·w + ix.
template <class T, int V, bool NHWC>
__global__ void maxpool_forward_any_kernel(PoolGeo g, T* __restrict__ out, std::int32_t* __restrict__ argmax,
                                           const T* __restrict__ in) {
  const std::int64_t total = std::int64_t(g.n) * g.C / V * g.oh * g.ow;
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < total;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    int n, c, y, x;
    split<NHWC, V>(i, g.C, g.oh, g.ow, n, c, y, x);
    const int y0 = y * g.stride - g.pad, x0 = x * g.stride - g.pad;
    const int r0 = max(0, -y0), r1 = min(g.kernel, g.h - y0), q0 = max(0, -x0), q1 = min(g.kernel, g.w - x0);
    float m[V];
    int best[V];
    bool first = true;
    for (int r = r0; r < r1; ++r)
      for (int q = q0; q < q1; ++q) {
        const int iy = y0 + r, ix = x0 + q, idx = iy * g.w + ix;
        float v[V];
        load<T, V>(in + at<NHWC>(g.C, g.h, g.w, n, c, iy, ix), v);
#pragma unroll
        for (int k = 0; k < V; ++k)
          if (first || v[k] > m[k] || isnan(v[k])) {
            m[k] = v[k];
            best[k] = idx;
          }
        first = false;
      }
    const std::size_t o = at<NHWC>(g.C, g.oh, g.ow, n, c, y, x);
    store<T, V>(out + o, m);
    if (argmax) store_ints<V>(argmax + o, best);  // null: inference
  }
}

// Each input element: the sum of dout over the windows whose argmax is it,
// windows in row-major order. Windows y hold row iy when
// y·stride − pad ≤ iy < y·stride − pad + kernel.
template <class T, int V, bool NHWC>
__global__ void maxpool_backward_any_kernel(PoolGeo g, T* __restrict__ din, const T* __restrict__ dout,
                                            const std::int32_t* __restrict__ argmax) {
  const std::int64_t total = std::int64_t(g.n) * g.C / V * g.h * g.w;
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < total;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    int n, c, iy, ix;
    split<NHWC, V>(i, g.C, g.h, g.w, n, c, iy, ix);
    const int ty = iy + g.pad - g.kernel + 1, tx = ix + g.pad - g.kernel + 1;
    const int y_lo = ty <= 0 ? 0 : (ty + g.stride - 1) / g.stride, y_hi = min((iy + g.pad) / g.stride, g.oh - 1);
    const int x_lo = tx <= 0 ? 0 : (tx + g.stride - 1) / g.stride, x_hi = min((ix + g.pad) / g.stride, g.ow - 1);
    const int idx = iy * g.w + ix;
    float acc[V];
#pragma unroll
    for (int k = 0; k < V; ++k) acc[k] = 0.f;
    for (int y = y_lo; y <= y_hi; ++y)
      for (int x = x_lo; x <= x_hi; ++x) {
        const std::size_t o = at<NHWC>(g.C, g.oh, g.ow, n, c, y, x);
        int a[V];
        load_ints<V>(argmax + o, a);
        bool any = false;
#pragma unroll
        for (int k = 0; k < V; ++k) any |= a[k] == idx;
        if (!any) continue;
        float d[V];
        load<T, V>(dout + o, d);
#pragma unroll
        for (int k = 0; k < V; ++k) acc[k] += a[k] == idx ? d[k] : 0.f;
      }
    store<T, V>(din + at<NHWC>(g.C, g.h, g.w, n, c, iy, ix), acc);
  }
}

__device__ __forceinline__ int bin_start(int i, int in, int out) { return int((std::int64_t(i) * in) / out); }
__device__ __forceinline__ int bin_end(int i, int in, int out) {
  return int(((std::int64_t(i) + 1) * in + out - 1) / out);
}

// Each output: the mean of its bin, summed in fp32.
template <class T, int V, bool NHWC>
__global__ void avgpool_forward_kernel(PoolGeo g, T* __restrict__ out, const T* __restrict__ in) {
  const std::int64_t total = std::int64_t(g.n) * g.C / V * g.oh * g.ow;
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < total;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    int n, c, oy, ox;
    split<NHWC, V>(i, g.C, g.oh, g.ow, n, c, oy, ox);
    const int y0 = bin_start(oy, g.h, g.oh), y1 = bin_end(oy, g.h, g.oh);
    const int x0 = bin_start(ox, g.w, g.ow), x1 = bin_end(ox, g.w, g.ow);
    float acc[V];
#pragma unroll
    for (int k = 0; k < V; ++k) acc[k] = 0.f;
    for (int y = y0; y < y1; ++y)
      for (int x = x0; x < x1; ++x) {
        float v[V];
        load<T, V>(in + at<NHWC>(g.C, g.h, g.w, n, c, y, x), v);
#pragma unroll
        for (int k = 0; k < V; ++k) acc[k] += v[k];
      }
    const float area = float((y1 - y0) * (x1 - x0));
#pragma unroll
    for (int k = 0; k < V; ++k) acc[k] /= area;
    store<T, V>(out + at<NHWC>(g.C, g.oh, g.ow, n, c, oy, ox), acc);
  }
}

// Each input element: Σ dout/area over the bins that hold it. Bins i hold row
// y for floor(y·oh/h) ≤ i ≤ ceil((y+1)·oh/h) − 1.
template <class T, int V, bool NHWC>
__global__ void avgpool_backward_kernel(PoolGeo g, T* __restrict__ din, const T* __restrict__ dout) {
  const std::int64_t total = std::int64_t(g.n) * g.C / V * g.h * g.w;
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < total;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    int n, c, y, x;
    split<NHWC, V>(i, g.C, g.h, g.w, n, c, y, x);
    const int i0 = int((std::int64_t(y) * g.oh) / g.h), i1 = int(((std::int64_t(y) + 1) * g.oh + g.h - 1) / g.h) - 1;
    const int j0 = int((std::int64_t(x) * g.ow) / g.w), j1 = int(((std::int64_t(x) + 1) * g.ow + g.w - 1) / g.w) - 1;
    float acc[V];
#pragma unroll
    for (int k = 0; k < V; ++k) acc[k] = 0.f;
    for (int oy = i0; oy <= min(i1, g.oh - 1); ++oy)
      for (int ox = j0; ox <= min(j1, g.ow - 1); ++ox) {
        const float area = float((bin_end(oy, g.h, g.oh) - bin_start(oy, g.h, g.oh)) *
                                 (bin_end(ox, g.w, g.ow) - bin_start(ox, g.w, g.ow)));
        float d[V];
        load<T, V>(dout + at<NHWC>(g.C, g.oh, g.ow, n, c, oy, ox), d);
#pragma unroll
        for (int k = 0; k < V; ++k) acc[k] += d[k] / area;
      }
    store<T, V>(din + at<NHWC>(g.C, g.h, g.w, n, c, y, x), acc);
  }
}

void check_int_sizes(std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w, const char* op) {
  if (n * c * h * w >= (std::int64_t{1} << 31) || h * w >= (std::int64_t{1} << 31))
    throw_unsupported(std::string(op) + ": the GPU kernels take tensors of fewer than 2^31 elements",
                      "split the batch");
}

// Runs f(tag, V, nhwc) with the widest channel vector the shape and pointers
// allow (NHWC: 16 bytes where C splits into them and the pointers are aligned).
template <class F>
void pool_dispatch(DType dtype, MemoryFormat format, std::int64_t C, std::initializer_list<const void*> ptrs, F&& f) {
  with_dtype(dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    constexpr int VW = int(16 / sizeof(T));
    bool vec = format == MemoryFormat::NHWC && C % VW == 0;
    for (const void* p : ptrs) vec = vec && aligned_to(16, p);
    if (format == MemoryFormat::NCHW)
      f.template operator()<T, 1, false>();
    else if (vec)
      f.template operator()<T, VW, true>();
    else
      f.template operator()<T, 1, true>();
  });
}

}  // namespace

void maxpool2d_forward_any(const CudaState* st, const ops::Pool2dShape& s, void* out, std::int32_t* argmax,
                           const void* in) {
  check_int_sizes(s.n, s.c, s.h + 2 * s.pad, s.w + 2 * s.pad, "maxpool2d");
  const PoolGeo g{int(s.n),    int(s.c),      int(s.h),      int(s.w),  int(s.oh()),
                  int(s.ow()), int(s.kernel), int(s.stride), int(s.pad)};
  pool_dispatch(s.dtype, s.format, s.c, {out, in, argmax}, [&]<class T, int V, bool NHWC>() {
    const std::int64_t total = s.n * s.c / V * s.oh() * s.ow();
    maxpool_forward_any_kernel<T, V, NHWC><<<blocks_for(total, st), kThreads, 0, stream_of(st)>>>(
        g, static_cast<T*>(out), argmax, static_cast<const T*>(in));
    CUDA_CHECK_LAUNCH();
  });
}

void maxpool2d_backward_any(const CudaState* st, const ops::Pool2dShape& s, void* din, const void* dout,
                            const std::int32_t* argmax) {
  check_int_sizes(s.n, s.c, s.h + 2 * s.pad, s.w + 2 * s.pad, "maxpool2d");
  const PoolGeo g{int(s.n),    int(s.c),      int(s.h),      int(s.w),  int(s.oh()),
                  int(s.ow()), int(s.kernel), int(s.stride), int(s.pad)};
  pool_dispatch(s.dtype, s.format, s.c, {din, dout, argmax}, [&]<class T, int V, bool NHWC>() {
    const std::int64_t total = s.n * s.c / V * s.h * s.w;
    maxpool_backward_any_kernel<T, V, NHWC><<<blocks_for(total, st), kThreads, 0, stream_of(st)>>>(
        g, static_cast<T*>(din), static_cast<const T*>(dout), argmax);
    CUDA_CHECK_LAUNCH();
  });
}

void adaptive_avgpool2d_forward(const CudaState* st, const ops::AvgPoolShape& s, void* out, const void* in) {
  check_int_sizes(s.n, s.c, std::max(s.h, s.oh), std::max(s.w, s.ow), "adaptive_avgpool2d");
  const PoolGeo g{int(s.n), int(s.c), int(s.h), int(s.w), int(s.oh), int(s.ow), 0, 0, 0};
  pool_dispatch(s.dtype, s.format, s.c, {out, in}, [&]<class T, int V, bool NHWC>() {
    const std::int64_t total = s.n * s.c / V * s.oh * s.ow;
    avgpool_forward_kernel<T, V, NHWC>
        <<<blocks_for(total, st), kThreads, 0, stream_of(st)>>>(g, static_cast<T*>(out), static_cast<const T*>(in));
    CUDA_CHECK_LAUNCH();
  });
}

void adaptive_avgpool2d_backward(const CudaState* st, const ops::AvgPoolShape& s, void* din, const void* dout) {
  check_int_sizes(s.n, s.c, std::max(s.h, s.oh), std::max(s.w, s.ow), "adaptive_avgpool2d");
  const PoolGeo g{int(s.n), int(s.c), int(s.h), int(s.w), int(s.oh), int(s.ow), 0, 0, 0};
  pool_dispatch(s.dtype, s.format, s.c, {din, dout}, [&]<class T, int V, bool NHWC>() {
    const std::int64_t total = s.n * s.c / V * s.h * s.w;
    avgpool_backward_kernel<T, V, NHWC>
        <<<blocks_for(total, st), kThreads, 0, stream_of(st)>>>(g, static_cast<T*>(din), static_cast<const T*>(dout));
    CUDA_CHECK_LAUNCH();
  });
}

}  // namespace roofline::engine::cuda_ops

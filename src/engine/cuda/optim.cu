// The optimizers, casts and loss scaling on the GPU (ops_optim.hpp).
//
// SGD and AdamW are one grid-stride pass each over the parameters, gradients,
// state and the low-precision copy: 4 elements a thread per iteration (16-byte
// loads and stores) where every buffer is aligned for it, one at a time
// otherwise. Every scalar they depend on (the step counter, inv_scale,
// found_inf, the skipped count) is read from device memory by the kernel, so
// one captured CUDA graph replays any number of steps, and an overflowing
// fp16 step is skipped by the kernel itself. The arithmetic is the CPU
// paths' float operations in their order, written with round-to-nearest
// intrinsics so that nvcc contracts nothing into FMAs (SGD matches the CPU
// backends bit for bit; AdamW up to the rounding of its bias corrections'
// double pow).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "src/engine/cpu/ref_optim.hpp"
#include "src/engine/cuda/launch.cuh"
#include "src/engine/cuda/ops_cuda_optim.hpp"

namespace roofline::engine::cuda_ops {

namespace {

using std::int64_t;

// The type of the low-precision copy an update writes (a template argument,
// so the loop carries no per-element branch on it).
enum class Copy : int { None, F32, BF16, F16 };

Copy copy_kind(const ops::ParamCopy& c) {
  if (!c.data) return Copy::None;
  switch (c.dtype) {
    case DType::BF16:
      return Copy::BF16;
    case DType::F16:
      return Copy::F16;
    default:
      return Copy::F32;
  }
}

bool aligned(const void* p, std::uintptr_t a) { return reinterpret_cast<std::uintptr_t>(p) % a == 0; }

// Whether the copy can take 4 elements in one store.
bool copy_aligned(const ops::ParamCopy& c) { return !c.data || aligned(c.data, c.dtype == DType::F32 ? 16 : 8); }

// Four values of one type, aligned for one vector load or store.
template <class T>
struct alignas(4 * sizeof(T)) Vec4 {
  T v[4];
};

__device__ __forceinline__ float to_float(float x) { return x; }
__device__ __forceinline__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
__device__ __forceinline__ float to_float(__half x) { return __half2float(x); }
template <class T>
__device__ __forceinline__ T from_float(float x);
template <>
__device__ __forceinline__ float from_float<float>(float x) {
  return x;
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}
template <>
__device__ __forceinline__ __half from_float<__half>(float x) {
  return __float2half_rn(x);
}

template <Copy C>
struct CopyType {
  using T = float;
};
template <>
struct CopyType<Copy::BF16> {
  using T = __nv_bfloat16;
};
template <>
struct CopyType<Copy::F16> {
  using T = __half;
};

template <Copy C>
__device__ __forceinline__ void store_copy1(void* base, int64_t i, float v) {
  if constexpr (C != Copy::None) {
    using T = typename CopyType<C>::T;
    static_cast<T*>(base)[i] = from_float<T>(v);
  }
}
template <Copy C>
__device__ __forceinline__ void store_copy4(void* base, int64_t q, float4 v) {
  if constexpr (C != Copy::None) {
    using T = typename CopyType<C>::T;
    Vec4<T> o;
    o.v[0] = from_float<T>(v.x);
    o.v[1] = from_float<T>(v.y);
    o.v[2] = from_float<T>(v.z);
    o.v[3] = from_float<T>(v.w);
    static_cast<Vec4<T>*>(base)[q] = o;
  }
}

// ---- SGD ------------------------------------------------------------------------------
struct SgdArgs {
  float lr, mom, wd;
  int mode;  // 0: no momentum, 1: momentum, 2: Nesterov
};

// One parameter's update (ref::sgd_update<float>'s operations); b: its momentum.
__device__ __forceinline__ float sgd1(float p, float g, float& b, const SgdArgs& a, float inv) {
  const float d = __fadd_rn(__fmul_rn(g, inv), __fmul_rn(a.wd, p));
  if (a.mode == 0) return __fsub_rn(p, __fmul_rn(a.lr, d));
  const float m = __fadd_rn(__fmul_rn(a.mom, b), d);
  b = m;
  const float s = a.mode == 2 ? __fadd_rn(d, __fmul_rn(a.mom, m)) : m;
  return __fsub_rn(p, __fmul_rn(a.lr, s));
}

// p, g, buf (n); copy (n) in C's type. advance: the loop's step counter (+1,
// by one thread: no thread of this kernel reads it), also when skipped.
template <Copy C>
__global__ void __launch_bounds__(kThreads)
    sgd_kernel(int64_t n, float* __restrict__ p, const float* __restrict__ g, float* __restrict__ buf,
               void* __restrict__ copy, SgdArgs a, const float* inv_scale, const std::int32_t* found_inf,
               std::int32_t* advance, bool vec) {
  if (advance && blockIdx.x == 0 && threadIdx.x == 0) *advance += 1;
  if (found_inf && *found_inf != 0) return;
  const float inv = inv_scale ? *inv_scale : 1.0f;
  const int64_t tid = blockIdx.x * int64_t(blockDim.x) + threadIdx.x, stride = int64_t(gridDim.x) * blockDim.x;
  int64_t done = 0;
  if (vec) {
    const int64_t nq = n / 4;
    for (int64_t q = tid; q < nq; q += stride) {
      float4 pv = reinterpret_cast<const float4*>(p)[q];
      const float4 gv = reinterpret_cast<const float4*>(g)[q];
      float4 bv = a.mode ? reinterpret_cast<const float4*>(buf)[q] : make_float4(0.f, 0.f, 0.f, 0.f);
      pv.x = sgd1(pv.x, gv.x, bv.x, a, inv);
      pv.y = sgd1(pv.y, gv.y, bv.y, a, inv);
      pv.z = sgd1(pv.z, gv.z, bv.z, a, inv);
      pv.w = sgd1(pv.w, gv.w, bv.w, a, inv);
      reinterpret_cast<float4*>(p)[q] = pv;
      if (a.mode) reinterpret_cast<float4*>(buf)[q] = bv;
      store_copy4<C>(copy, q, pv);
    }
    done = nq * 4;
  }
  for (int64_t i = done + tid; i < n; i += stride) {
    float b = a.mode ? buf[i] : 0.f;
    const float pn = sgd1(p[i], g[i], b, a, inv);
    p[i] = pn;
    if (a.mode) buf[i] = b;
    store_copy1<C>(copy, i, pn);
  }
}

// ---- AdamW ----------------------------------------------------------------------------
struct AdamWArgs {
  double lr, beta1, beta2;                // for the bias corrections, in double as torch's Python floats
  float decay, w1, w1c, beta2f, w2, eps;  // ref::AdamWScalars<float>'s (w1c = 1 − w1 in float, ATen's lerp)
  bool w1_small;
};

// One parameter's update (ref::adamw_update<float>'s operations).
__device__ __forceinline__ void adamw1(float& p, float g, float& m, float& v, const AdamWArgs& a, float ss, float bc2s,
                                       float inv) {
  const float gi = __fmul_rn(g, inv);
  const float pi = __fmul_rn(p, a.decay);
  const float mi =
      a.w1_small ? __fadd_rn(m, __fmul_rn(a.w1, __fsub_rn(gi, m))) : __fsub_rn(gi, __fmul_rn(__fsub_rn(gi, m), a.w1c));
  const float vi = __fadd_rn(__fmul_rn(v, a.beta2f), __fmul_rn(__fmul_rn(a.w2, gi), gi));
  const float denom = __fadd_rn(__fdiv_rn(__fsqrt_rn(vi), bc2s), a.eps);
  m = mi;
  v = vi;
  p = __fsub_rn(pi, __fmul_rn(ss, __fdiv_rn(mi, denom)));
}

// p, g, m, v (n); copy (n) in C's type. t = *step − *skipped + 1, read by every
// block; `advance` (+1 by one thread) is never the step counter itself (the
// launcher then advances it in a kernel of its own, after this one).
template <Copy C>
__global__ void __launch_bounds__(kThreads)
    adamw_kernel(int64_t n, float* __restrict__ p, const float* __restrict__ g, float* __restrict__ m,
                 float* __restrict__ v, void* __restrict__ copy, AdamWArgs a, const std::int32_t* step,
                 const std::int32_t* skipped, const float* inv_scale, const std::int32_t* found_inf,
                 std::int32_t* advance, bool vec) {
  if (advance && blockIdx.x == 0 && threadIdx.x == 0) *advance += 1;
  if (found_inf && *found_inf != 0) return;
  __shared__ float bias[2];  // lr / (1 − β1^t), √(1 − β2^t): one double pow per block
  if (threadIdx.x == 0) {
    const double t = double((step ? *step : 0) - (skipped ? *skipped : 0) + 1);
    bias[0] = float(a.lr / (1.0 - pow(a.beta1, t)));
    bias[1] = float(sqrt(1.0 - pow(a.beta2, t)));
  }
  __syncthreads();
  const float ss = bias[0], bc2s = bias[1];
  const float inv = inv_scale ? *inv_scale : 1.0f;
  const int64_t tid = blockIdx.x * int64_t(blockDim.x) + threadIdx.x, stride = int64_t(gridDim.x) * blockDim.x;
  int64_t done = 0;
  if (vec) {
    const int64_t nq = n / 4;
    for (int64_t q = tid; q < nq; q += stride) {
      float4 pv = reinterpret_cast<const float4*>(p)[q];
      const float4 gv = reinterpret_cast<const float4*>(g)[q];
      float4 mv = reinterpret_cast<const float4*>(m)[q];
      float4 vv = reinterpret_cast<const float4*>(v)[q];
      adamw1(pv.x, gv.x, mv.x, vv.x, a, ss, bc2s, inv);
      adamw1(pv.y, gv.y, mv.y, vv.y, a, ss, bc2s, inv);
      adamw1(pv.z, gv.z, mv.z, vv.z, a, ss, bc2s, inv);
      adamw1(pv.w, gv.w, mv.w, vv.w, a, ss, bc2s, inv);
      reinterpret_cast<float4*>(p)[q] = pv;
      reinterpret_cast<float4*>(m)[q] = mv;
      reinterpret_cast<float4*>(v)[q] = vv;
      store_copy4<C>(copy, q, pv);
    }
    done = nq * 4;
  }
  for (int64_t i = done + tid; i < n; i += stride) {
    float pi = p[i], mi = m[i], vi = v[i];
    adamw1(pi, g[i], mi, vi, a, ss, bc2s, inv);
    p[i] = pi;
    m[i] = mi;
    v[i] = vi;
    store_copy1<C>(copy, i, pi);
  }
}

__global__ void step_advance_kernel(std::int32_t* step) { *step += 1; }

// ---- casts and the finiteness check ---------------------------------------------------------
// out (n) = in (n) converted through fp32 (exact widening, one rounding).
template <class From, class To>
__global__ void __launch_bounds__(kThreads)
    cast_kernel(int64_t n, To* __restrict__ out, const From* __restrict__ in, bool vec) {
  const int64_t tid = blockIdx.x * int64_t(blockDim.x) + threadIdx.x, stride = int64_t(gridDim.x) * blockDim.x;
  int64_t done = 0;
  if (vec) {
    const int64_t nq = n / 4;
    for (int64_t q = tid; q < nq; q += stride) {
      const Vec4<From> x = reinterpret_cast<const Vec4<From>*>(in)[q];
      Vec4<To> y;
#pragma unroll
      for (int k = 0; k < 4; ++k) y.v[k] = from_float<To>(to_float(x.v[k]));
      reinterpret_cast<Vec4<To>*>(out)[q] = y;
    }
    done = nq * 4;
  }
  for (int64_t i = done + tid; i < n; i += stride) out[i] = from_float<To>(to_float(in[i]));
}

__device__ __forceinline__ bool nonfinite(float x) { return (__float_as_uint(x) & 0x7f800000u) == 0x7f800000u; }

// found_inf = 1 when any of g (n) is ±inf or NaN (nothing to do once it is set).
__global__ void __launch_bounds__(kThreads)
    finite_check_kernel(int64_t n, const float* __restrict__ g, std::int32_t* found_inf, bool vec) {
  __shared__ std::int32_t already;  // read once, so the whole block leaves before the barrier or none does
  if (threadIdx.x == 0) already = *found_inf;
  __syncthreads();
  if (already != 0) return;
  const int64_t tid = blockIdx.x * int64_t(blockDim.x) + threadIdx.x, stride = int64_t(gridDim.x) * blockDim.x;
  bool bad = false;
  int64_t done = 0;
  if (vec) {
    const int64_t nq = n / 4;
    for (int64_t q = tid; q < nq; q += stride) {
      const float4 x = reinterpret_cast<const float4*>(g)[q];
      bad |= nonfinite(x.x) | nonfinite(x.y) | nonfinite(x.z) | nonfinite(x.w);
    }
    done = nq * 4;
  }
  for (int64_t i = done + tid; i < n; i += stride) bad |= nonfinite(g[i]);
  if (__syncthreads_or(bad) && threadIdx.x == 0) *found_inf = 1;
}

// ---- the loss gradient times *scale (ref::scale_loss_grad) -------------------------------------
__global__ void loss_grad_scale_kernel(int64_t n, float* g, const float* scale) {
  const float s = *scale;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += stride) g[i] = __fmul_rn(g[i], s);
}

// ---- loss scaling: ref::loss_scale_init / loss_scale_update on one thread ---------------------
__global__ void loss_scale_init_kernel(ops::LossScaleConfig c, float* scale, float* inv_scale, std::int32_t* tracker,
                                       std::int32_t* found_inf, std::int32_t* skipped) {
  *scale = float(c.init);
  *inv_scale = float(1.0 / double(*scale));
  *tracker = *found_inf = *skipped = 0;
}

__global__ void loss_scale_update_kernel(ops::LossScaleConfig c, float* scale, float* inv_scale, std::int32_t* tracker,
                                         std::int32_t* found_inf, std::int32_t* skipped) {
  if (*found_inf != 0) {
    *scale = float(double(*scale) * c.backoff);
    *tracker = 0;
    *skipped += 1;
  } else {
    const std::int32_t successful = *tracker + 1;
    if (successful == c.interval) {
      const float grown = float(double(*scale) * c.growth);
      if (isfinite(grown)) *scale = grown;
      *tracker = 0;
    } else {
      *tracker = successful;
    }
  }
  *inv_scale = float(1.0 / double(*scale));
  *found_inf = 0;
}

template <class From, class To>
void launch_cast(const CudaState* st, int64_t n, void* out, const void* in) {
  const bool vec = aligned(in, 4 * sizeof(From)) && aligned(out, 4 * sizeof(To));
  cast_kernel<From, To><<<blocks_for(vec ? (n + 3) / 4 : n, st), kThreads, 0, stream_of(st)>>>(
      n, static_cast<To*>(out), static_cast<const From*>(in), vec);
  CUDA_CHECK_LAUNCH();
}

template <class From>
void launch_cast_from(const CudaState* st, DType to, int64_t n, void* out, const void* in) {
  switch (to) {
    case DType::BF16:
      return launch_cast<From, __nv_bfloat16>(st, n, out, in);
    case DType::F16:
      return launch_cast<From, __half>(st, n, out, in);
    default:
      return launch_cast<From, float>(st, n, out, in);
  }
}

}  // namespace

void sgd_update(const CudaState* st, const ops::SgdShape& s, float* p, const float* g, float* buf,
                const ops::SgdConfig& cfg, std::int32_t* advance_step, const ops::ParamCopy& copy,
                const ops::GradScale& scale) {
  const SgdArgs a{cfg.lr, cfg.momentum, cfg.weight_decay, !s.momentum ? 0 : cfg.nesterov ? 2 : 1};
  const bool vec = aligned(p, 16) && aligned(g, 16) && (!s.momentum || aligned(buf, 16)) && copy_aligned(copy);
  const unsigned blocks = blocks_for(vec ? (s.n + 3) / 4 : s.n, st);
  auto launch = [&](auto kernel) {
    kernel<<<blocks, kThreads, 0, stream_of(st)>>>(s.n, p, g, s.momentum ? buf : nullptr, copy.data, a, scale.inv_scale,
                                                   scale.found_inf, advance_step, vec);
  };
  switch (copy_kind(copy)) {
    case Copy::None:
      launch(sgd_kernel<Copy::None>);
      break;
    case Copy::F32:
      launch(sgd_kernel<Copy::F32>);
      break;
    case Copy::BF16:
      launch(sgd_kernel<Copy::BF16>);
      break;
    case Copy::F16:
      launch(sgd_kernel<Copy::F16>);
      break;
  }
  CUDA_CHECK_LAUNCH();
}

void adamw_update(const CudaState* st, const ops::AdamWShape& s, float* p, const float* g, float* m, float* v,
                  const ops::AdamWConfig& cfg, const std::int32_t* step, std::int32_t* advance_step,
                  const ops::ParamCopy& copy, const ops::GradScale& scale) {
  const auto f = ref::adamw_scalars<float>(cfg, 1, 1.0);  // the t-independent scalars
  const AdamWArgs a{cfg.lr, cfg.beta1, cfg.beta2, f.decay, f.w1, 1.0f - f.w1, f.beta2, f.w2, f.eps, f.w1_small};
  // The kernel's blocks read *step (and the GradScale counters) while it runs:
  // a counter among them is advanced after it, by a kernel of its own.
  const bool separate =
      advance_step && (advance_step == step || advance_step == scale.skipped || advance_step == scale.found_inf);
  const bool vec = aligned(p, 16) && aligned(g, 16) && aligned(m, 16) && aligned(v, 16) && copy_aligned(copy);
  const unsigned blocks = blocks_for(vec ? (s.n + 3) / 4 : s.n, st);
  std::int32_t* fused_advance = separate ? nullptr : advance_step;
  auto launch = [&](auto kernel) {
    kernel<<<blocks, kThreads, 0, stream_of(st)>>>(s.n, p, g, m, v, copy.data, a, step, scale.skipped, scale.inv_scale,
                                                   scale.found_inf, fused_advance, vec);
  };
  switch (copy_kind(copy)) {
    case Copy::None:
      launch(adamw_kernel<Copy::None>);
      break;
    case Copy::F32:
      launch(adamw_kernel<Copy::F32>);
      break;
    case Copy::BF16:
      launch(adamw_kernel<Copy::BF16>);
      break;
    case Copy::F16:
      launch(adamw_kernel<Copy::F16>);
      break;
  }
  CUDA_CHECK_LAUNCH();
  if (separate) {
    step_advance_kernel<<<1, 1, 0, stream_of(st)>>>(advance_step);
    CUDA_CHECK_LAUNCH();
  }
}

void cast(const CudaState* st, const ops::CastShape& s, void* out, const void* in) {
  if (s.from == s.to) {
    CUDA_CHECK(
        cudaMemcpyAsync(out, in, static_cast<size_t>(s.n) * dtype_size(s.to), cudaMemcpyDeviceToDevice, stream_of(st)));
    return;
  }
  switch (s.from) {
    case DType::BF16:
      return launch_cast_from<__nv_bfloat16>(st, s.to, s.n, out, in);
    case DType::F16:
      return launch_cast_from<__half>(st, s.to, s.n, out, in);
    default:
      return launch_cast_from<float>(st, s.to, s.n, out, in);
  }
}

void scale_loss_grad(const CudaState* st, std::int64_t n, float* g, const float* scale) {
  loss_grad_scale_kernel<<<blocks_for(n, st), kThreads, 0, stream_of(st)>>>(n, g, scale);
  CUDA_CHECK_LAUNCH();
}

void grads_check_finite(const CudaState* st, std::int64_t n, const float* g, std::int32_t* found_inf) {
  const bool vec = aligned(g, 16);
  finite_check_kernel<<<blocks_for(vec ? (n + 3) / 4 : n, st), kThreads, 0, stream_of(st)>>>(n, g, found_inf, vec);
  CUDA_CHECK_LAUNCH();
}

void loss_scale_init(const CudaState* st, const ops::LossScaleConfig& cfg, float* scale, float* inv_scale,
                     std::int32_t* tracker, std::int32_t* found_inf, std::int32_t* skipped) {
  loss_scale_init_kernel<<<1, 1, 0, stream_of(st)>>>(cfg, scale, inv_scale, tracker, found_inf, skipped);
  CUDA_CHECK_LAUNCH();
}

void loss_scale_update(const CudaState* st, const ops::LossScaleConfig& cfg, float* scale, float* inv_scale,
                       std::int32_t* tracker, std::int32_t* found_inf, std::int32_t* skipped) {
  loss_scale_update_kernel<<<1, 1, 0, stream_of(st)>>>(cfg, scale, inv_scale, tracker, found_inf, skipped);
  CUDA_CHECK_LAUNCH();
}

}  // namespace roofline::engine::cuda_ops

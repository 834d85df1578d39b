// BatchNorm2d on the GPU: two kernels each way, every one a single sweep over
// the activations with 16-byte vector loads (8 bf16/fp16 or 4 fp32 elements a
// thread; one element where the rows or planes do not split into them).
//
//   training forward  1. statistics: per-thread sums of d = x − K and d² in fp32
//                        (K: the channel's first element, a shift that keeps the
//                        variance from cancelling when |mean| ≫ std — never the
//                        naive E[x²] − E[x]²), a block's sums to the scratch, and
//                        the last block to finish adds every block's in double and
//                        writes the mean, 1/std and the running averages;
//                     2. out = act((x − mean)·gamma/std + beta [+ residual]).
//   backward          1. dpre = dout ⊙ act'(out) written in place, per-channel
//                        Σ dpre and Σ dpre·(x − mean) the same way, the last block
//                        writing dbeta and dgamma;
//                     2. din = A·(dpre − dbeta/count) + B·(x − mean).
//   eval forward      2. alone, with the running statistics.
//
// Layouts: NCHW, a block row per channel (blockIdx.y) and consecutive threads on
// consecutive vectors of its planes; NHWC, a thread keeps V consecutive channels
// (its registers hold their statistics and constants) and the block's rows of
// threads step through the pixels, so consecutive threads read consecutive
// channels and a warp whole 128-byte lines.
//
// Bytes per pass (N elements of E bytes): training forward 3N·E (+N·E residual)
// from DRAM — the statistics read x once and the normalisation again (from L2
// where the tensor fits in it, 2N·E then: ResNet-18's layers from 28×28 down at
// batch 128 in bf16); backward with ReLU 7N·E (dout, out, x; dpre written; dpre,
// x read; din written), 5N·E without; eval 2N·E (+N·E).
//
// The reduction scratch (per-block partial sums and the finishing counter) is
// CudaState::reduce_scratch: allocated by the first call of the context, of a
// fixed size (kPartials pairs; grids are sized to fit it), zeroed then, so no
// later call allocates or synchronises and a captured graph's pointers stay valid.
#include <algorithm>
#include <initializer_list>
#include <string>
#include <type_traits>

#include "src/engine/cuda/cnn_common.cuh"
#include "src/engine/cuda/launch.cuh"
#include "src/engine/cuda/ops_cuda_cnn.hpp"

namespace roofline::engine::cuda_ops {

using namespace cnn;

namespace {

constexpr int kBnThreads = 256;
constexpr std::int64_t kPartials = std::int64_t{1} << 16;  // (sum, sum) pairs in the scratch: 512 KB
constexpr int kStatsBlocksPerSm = 2;  // enough loads in flight (4 × 16 B a thread), few partials to add
constexpr int kNormBlocksPerSm = 8;

// The shape as the kernels see it: n images of hw pixels and C channels.
struct BnGeo {
  int n, C, hw;
  int Gb;  // NHWC: channel groups (V channels each) per block; 0 for NCHW
};

// ---- Walks: which elements a thread visits ------------------------------------------
// NCHW: block (s, c) walks channel c's vectors (V consecutive pixels of one
// plane), thread after thread; all V lanes are channel c.
template <int V>
struct NchwWalk {
  int C, hw, per, count, c, start, step;
  __device__ explicit NchwWalk(const BnGeo& g)
      : C(g.C),
        hw(g.hw),
        per(g.hw / V),
        count(g.n * (g.hw / V)),
        c(int(blockIdx.y)),
        start(int(blockIdx.x * blockDim.x + threadIdx.x)),
        step(int(gridDim.x * blockDim.x)) {}
  __device__ bool active() const { return true; }
  __device__ int channel(int) const { return c; }
  __device__ std::size_t offset(int v) const {
    const int img = v / per;
    return (std::size_t(img) * C + c) * hw + std::size_t(v - img * per) * V;
  }
  __device__ static std::size_t first(const BnGeo& g, int ch) { return std::size_t(ch) * g.hw; }

  // The block's sums of a1 and a2 over its threads and lanes: partial[blockIdx.x·C + c].
  __device__ void reduce(const float (&a1)[V], const float (&a2)[V], float2* partial) const {
    float t1 = 0.f, t2 = 0.f;
#pragma unroll
    for (int k = 0; k < V; ++k) {
      t1 += a1[k];
      t2 += a2[k];
    }
    const float2 r = block_sum2(t1, t2);
    if (threadIdx.x == 0) partial[std::size_t(blockIdx.x) * C + c] = r;
  }
};

// NHWC: thread (g, r) of block (s, cc) keeps channels (cc·Gb + g)·V … +V−1 and
// walks the pixels r + R·s, stepping by R·gridDim.x (R = blockDim.x / Gb).
template <int V>
struct NhwcWalk {
  int C, Gb, R, g, r, count, start, step;
  __device__ explicit NhwcWalk(const BnGeo& geo)
      : C(geo.C),
        Gb(geo.Gb),
        R(int(blockDim.x) / geo.Gb),
        g(int(blockIdx.y) * geo.Gb + int(threadIdx.x) % geo.Gb),
        r(int(threadIdx.x) / geo.Gb),
        count(geo.n * geo.hw),
        start(int(blockIdx.x) * R + r),
        step(int(gridDim.x) * R) {}
  __device__ bool active() const { return g < C / V; }
  __device__ int channel(int k) const { return g * V + k; }
  __device__ std::size_t offset(int m) const { return std::size_t(m) * C + std::size_t(g) * V; }
  __device__ static std::size_t first(const BnGeo&, int ch) { return std::size_t(ch); }

  // The block's sums over its R rows of threads, per channel (a tree in shared
  // memory, fixed order): partial[blockIdx.x·C + channel].
  __device__ void reduce(const float (&a1)[V], const float (&a2)[V], float2* partial) const {
    __shared__ float sh[2 * kBnThreads * 8];
    const int width = Gb * V, col = (int(threadIdx.x) % Gb) * V;
    float* s1 = sh;
    float* s2 = sh + R * width;
#pragma unroll
    for (int k = 0; k < V; ++k) {
      s1[r * width + col + k] = a1[k];
      s2[r * width + col + k] = a2[k];
    }
    __syncthreads();
    for (int len = R; len > 1;) {
      const int half = (len + 1) / 2;
      if (r < len - half)
#pragma unroll
        for (int k = 0; k < V; ++k) {
          s1[r * width + col + k] += s1[(r + half) * width + col + k];
          s2[r * width + col + k] += s2[(r + half) * width + col + k];
        }
      __syncthreads();
      len = half;
    }
    if (r == 0 && active())
#pragma unroll
      for (int k = 0; k < V; ++k)
        partial[std::size_t(blockIdx.x) * C + channel(k)] = make_float2(s1[col + k], s2[col + k]);
  }
};

// The last block's part: for every channel, the sums of the partials of the
// gridDim.x blocks in double, handed to fin(channel, s1, s2). Threads take
// consecutive channels (coalesced reads) and, where the block has more threads
// than channels, parts of the blocks, combined in order.
template <class Fin>
__device__ void finish_channels(int C, const float2* partial, Fin&& fin) {
  __shared__ double sh1[kBnThreads], sh2[kBnThreads];
  const int S = int(gridDim.x), cpr = min(C, int(blockDim.x)), parts = int(blockDim.x) / cpr;
  const int t = int(threadIdx.x), lane = t % cpr, part = t / cpr;
  for (int base = 0; base < C; base += cpr) {
    const int ch = base + lane;
    double s1 = 0, s2 = 0;
    // kFinishLoads partials in flight per thread, then added in block order
    // (the same order, so the same bits, as one at a time): a thread may add
    // hundreds of partials, and one dependent L2 round trip each made this
    // finish most of a small layer's time (ResNet-18's layer3 statistics:
    // 67 us for 13 MB, H200, 2026-11-27).
    constexpr int kFinishLoads = 16;
    if (part < parts && ch < C)
      for (int s0 = part; s0 < S; s0 += kFinishLoads * parts) {
        float2 p[kFinishLoads];
#pragma unroll
        for (int u = 0; u < kFinishLoads; ++u) {
          const int s = s0 + u * parts;
          p[u] = s < S ? __ldcg(partial + std::size_t(s) * C + ch) : make_float2(0.f, 0.f);
        }
#pragma unroll
        for (int u = 0; u < kFinishLoads; ++u) {
          s1 += p[u].x;
          s2 += p[u].y;
        }
      }
    sh1[t] = s1;
    sh2[t] = s2;
    __syncthreads();
    if (part == 0 && ch < C) {
      for (int q = 1; q < parts; ++q) {
        s1 += sh1[q * cpr + lane];
        s2 += sh2[q * cpr + lane];
      }
      fin(ch, s1, s2);
    }
    __syncthreads();
  }
}

template <int V>
constexpr int unroll_for() {
  return V == 1 ? 8 : 4;  // loads in flight per thread
}

struct TrainArgs {
  float eps, momentum;
  float *running_mean, *running_var, *save_mean, *save_invstd;
  float2* partial;
  unsigned* counter;
};

template <class T, int V, class Walk>
__global__ void __launch_bounds__(kBnThreads) bn_stats_kernel(BnGeo geo, const T* __restrict__ in, TrainArgs a) {
  constexpr int U = unroll_for<V>();
  const Walk w(geo);
  float K[V], a1[V], a2[V];
#pragma unroll
  for (int k = 0; k < V; ++k) {
    K[k] = w.active() ? to_f(in[Walk::first(geo, w.channel(k))]) : 0.f;
    a1[k] = a2[k] = 0.f;
  }
  if (w.active())
    for (int v0 = w.start; v0 < w.count; v0 += U * w.step) {
      float x[U][V];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int v = v0 + u * w.step;
        if (v < w.count)
          load<T, V>(in + w.offset(v), x[u]);
        else
#pragma unroll
          for (int k = 0; k < V; ++k) x[u][k] = K[k];  // contributes 0
      }
#pragma unroll
      for (int u = 0; u < U; ++u)
#pragma unroll
        for (int k = 0; k < V; ++k) {
          const float d = x[u][k] - K[k];
          a1[k] += d;
          a2[k] = fmaf(d, d, a2[k]);
        }
    }
  w.reduce(a1, a2, a.partial);
  if (!last_block_done(a.counter)) return;
  const double count = double(geo.n) * double(geo.hw), mom = a.momentum;
  finish_channels(geo.C, a.partial, [&](int ch, double s1, double s2) {
    const double m1 = s1 / count, var = fmax(0.0, s2 / count - m1 * m1);
    const double mean = double(to_f(in[Walk::first(geo, ch)])) + m1;
    const double invstd = 1.0 / sqrt(var + double(a.eps));
    a.save_mean[ch] = float(mean);
    a.save_invstd[ch] = float(invstd);
    a.running_mean[ch] = float((1.0 - mom) * double(a.running_mean[ch]) + mom * mean);
    a.running_var[ch] = float((1.0 - mom) * double(a.running_var[ch]) + mom * var * count / (count - 1.0));
  });
}

struct NormArgs {
  const float *mean, *stat, *gamma, *beta;  // stat: 1/std, or the running variance when from_var
  bool from_var, relu;
  float eps;
};

// out = act((x − mean)·gamma·invstd + beta [+ residual]); residual may be null;
// out may be in or residual (each element is read before it is written, by the
// same thread).
template <class T, int V, class Walk>
__global__ void __launch_bounds__(kBnThreads)
    bn_normalize_kernel(BnGeo geo, T* out, const T* in, const T* residual, NormArgs a) {
  constexpr int U = unroll_for<V>();
  const Walk w(geo);
  if (!w.active()) return;  // no barrier below
  float m[V], k[V], b[V];
#pragma unroll
  for (int j = 0; j < V; ++j) {
    const int ch = w.channel(j);
    const float inv = a.from_var ? 1.0f / sqrtf(a.stat[ch] + a.eps) : a.stat[ch];
    m[j] = a.mean[ch];
    k[j] = a.gamma[ch] * inv;
    b[j] = a.beta[ch];
  }
  for (int v0 = w.start; v0 < w.count; v0 += U * w.step) {
    float x[U][V], r[U][V];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int v = v0 + u * w.step;
      if (v < w.count) {
        load<T, V>(in + w.offset(v), x[u]);
        if (residual) load<T, V>(residual + w.offset(v), r[u]);
      }
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int v = v0 + u * w.step;
      if (v >= w.count) continue;
      float y[V];
#pragma unroll
      for (int j = 0; j < V; ++j) {
        float t = fmaf(x[u][j] - m[j], k[j], b[j]);
        if (residual) t += r[u][j];
        y[j] = a.relu ? relu(t) : t;
      }
      store<T, V>(out + w.offset(v), y);
    }
  }
}

struct BackArgs {
  const float *gamma, *save_mean, *save_invstd;
  float *dgamma, *dbeta;
  bool relu;
  float inv_count;  // 1/(n·h·w)
  float2* partial;
  unsigned* counter;
};

// dout → dpre in place (with ReLU), Σ dpre and Σ dpre·(x − mean); the last
// block writes dbeta and dgamma (= invstd · Σ dpre·(x − mean)).
template <class T, int V, class Walk>
__global__ void __launch_bounds__(kBnThreads)
    bn_backward_sums_kernel(BnGeo geo, T* __restrict__ dout, const T* __restrict__ out, const T* __restrict__ in,
                            BackArgs a) {
  constexpr int U = unroll_for<V>();
  const Walk w(geo);
  float m[V], a1[V], a2[V];
#pragma unroll
  for (int k = 0; k < V; ++k) {
    m[k] = w.active() ? a.save_mean[w.channel(k)] : 0.f;
    a1[k] = a2[k] = 0.f;
  }
  if (w.active())
    for (int v0 = w.start; v0 < w.count; v0 += U * w.step) {
      float g[U][V], x[U][V], y[U][V];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int v = v0 + u * w.step;
        if (v < w.count) {
          load<T, V>(dout + w.offset(v), g[u]);
          load<T, V>(in + w.offset(v), x[u]);
          if (a.relu) load<T, V>(out + w.offset(v), y[u]);
        }
      }
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int v = v0 + u * w.step;
        if (v >= w.count) continue;
        if (a.relu) {
#pragma unroll
          for (int k = 0; k < V; ++k) g[u][k] = y[u][k] > 0.f ? g[u][k] : 0.f;
          store<T, V>(dout + w.offset(v), g[u]);
        }
#pragma unroll
        for (int k = 0; k < V; ++k) {
          a1[k] += g[u][k];
          a2[k] = fmaf(g[u][k], x[u][k] - m[k], a2[k]);
        }
      }
    }
  w.reduce(a1, a2, a.partial);
  if (!last_block_done(a.counter)) return;
  finish_channels(geo.C, a.partial, [&](int ch, double s1, double s2) {
    a.dbeta[ch] = float(s1);
    a.dgamma[ch] = float(s2 * double(a.save_invstd[ch]));
  });
}

// din = A·(dpre − dbeta/count) + B·(x − mean), A = gamma·invstd,
// B = −gamma·invstd²·dgamma/count.
template <class T, int V, class Walk>
__global__ void __launch_bounds__(kBnThreads)
    bn_backward_input_kernel(BnGeo geo, T* __restrict__ din, const T* __restrict__ dpre, const T* __restrict__ in,
                             BackArgs a) {
  constexpr int U = unroll_for<V>();
  const Walk w(geo);
  if (!w.active()) return;
  float A[V], b[V], B[V], m[V];
#pragma unroll
  for (int k = 0; k < V; ++k) {
    const int ch = w.channel(k);
    const float inv = a.save_invstd[ch];
    A[k] = a.gamma[ch] * inv;
    b[k] = a.dbeta[ch] * a.inv_count;
    B[k] = -A[k] * inv * (a.dgamma[ch] * a.inv_count);
    m[k] = a.save_mean[ch];
  }
  for (int v0 = w.start; v0 < w.count; v0 += U * w.step) {
    float g[U][V], x[U][V];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int v = v0 + u * w.step;
      if (v < w.count) {
        load<T, V>(dpre + w.offset(v), g[u]);
        load<T, V>(in + w.offset(v), x[u]);
      }
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int v = v0 + u * w.step;
      if (v >= w.count) continue;
      float d[V];
#pragma unroll
      for (int k = 0; k < V; ++k) d[k] = fmaf(A[k], g[u][k] - b[k], B[k] * (x[u][k] - m[k]));
      store<T, V>(din + w.offset(v), d);
    }
  }
}

// ---- Host side -------------------------------------------------------------------------

struct Scratch {
  float2* partial;
  unsigned* counter;
};

Scratch scratch(const CudaState* st) {
  // Allocated on the context's first BatchNorm call, never again (see the top).
  auto* s = const_cast<CudaState*>(st);
  if (!s->reduce_scratch) {
    s->reduce_scratch = cuda::DeviceBuffer<char>(kPartials * sizeof(float2) + 256, "BatchNorm reduction scratch");
    CUDA_CHECK(cudaMemsetAsync(s->reduce_scratch.get(), 0, s->reduce_scratch.bytes(), stream_of(st)));
  }
  char* base = s->reduce_scratch.get();
  return {reinterpret_cast<float2*>(base), reinterpret_cast<unsigned*>(base + kPartials * sizeof(float2))};
}

// A launch of one of the kernels: its geometry, grid and block.
struct Plan {
  BnGeo geo;
  dim3 grid, block;
  int vec;
};

// blocks_per_sm: how many blocks of 256 threads to aim for; partial_cap: the
// most blocks per channel (statistics kernels: the scratch's pairs / C).
Plan plan(const CudaState* st, const ops::BatchNormShape& s, int vec, int blocks_per_sm, bool partials) {
  Plan p;
  p.vec = vec;
  p.geo = {int(s.n), int(s.c), int(s.h * s.w), 0};
  const std::int64_t target = std::int64_t(std::max(st->sm_count, 1)) * blocks_per_sm;
  const int unroll = vec == 1 ? 8 : 4;
  std::int64_t split, lanes;
  if (s.format == MemoryFormat::NCHW) {
    const std::int64_t per_channel = s.n * (s.h * s.w / vec);
    split = std::min((per_channel + kBnThreads * unroll - 1) / (kBnThreads * unroll), (target + s.c - 1) / s.c);
    lanes = s.c;
    p.block = dim3(kBnThreads);
  } else {
    const std::int64_t groups = s.c / vec, gb = std::min<std::int64_t>(groups, kBnThreads), rows = kBnThreads / gb;
    p.geo.Gb = int(gb);
    lanes = (groups + gb - 1) / gb;
    split = std::min((s.count() + rows * unroll - 1) / (rows * unroll), (target + lanes - 1) / lanes);
    p.block = dim3(unsigned(rows * gb));
  }
  if (partials) split = std::min(split, kPartials / s.c);
  p.grid = dim3(unsigned(std::max<std::int64_t>(split, 1)), unsigned(lanes));
  return p;
}

// The widest vector (16 bytes) where every plane (NCHW) or pixel's channels
// (NHWC) split into whole vectors and every pointer is aligned; else 1.
template <class T>
int vector_width(const ops::BatchNormShape& s, std::initializer_list<const void*> ptrs) {
  constexpr int V = int(16 / sizeof(T));
  const std::int64_t run = s.format == MemoryFormat::NCHW ? s.h * s.w : s.c;
  if (run % V != 0) return 1;
  for (const void* p : ptrs)
    if (!aligned_to(16, p)) return 1;
  return V;
}

void check_sizes(const ops::BatchNormShape& s) {
  if (s.n * s.h * s.w >= (std::int64_t{1} << 31) || s.c > kPartials || s.c > 65535)
    throw_unsupported("BatchNorm2d over n=" + std::to_string(s.n) + " c=" + std::to_string(s.c) + " " +
                          std::to_string(s.h) + "x" + std::to_string(s.w) +
                          ": the GPU kernels take fewer than 2^31 pixels and at most 65535 channels",
                      "split the batch");
}

// Runs f.template operator()<T, V, Walk>() for the shape's dtype, vector width and format.
template <class F>
void dispatch(const ops::BatchNormShape& s, std::initializer_list<const void*> ptrs, F&& f) {
  with_dtype(s.dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    constexpr int VW = int(16 / sizeof(T));
    const int v = vector_width<T>(s, ptrs);
    if (s.format == MemoryFormat::NCHW) {
      if (v == VW)
        f.template operator()<T, VW, NchwWalk<VW>>(v);
      else
        f.template operator()<T, 1, NchwWalk<1>>(1);
    } else {
      if (v == VW)
        f.template operator()<T, VW, NhwcWalk<VW>>(v);
      else
        f.template operator()<T, 1, NhwcWalk<1>>(1);
    }
  });
}

}  // namespace

void batchnorm_forward_train(const CudaState* st, const ops::BatchNormShape& s, void* out, const void* in,
                             const void* residual, const float* gamma, const float* beta, float* running_mean,
                             float* running_var, float* save_mean, float* save_invstd) {
  check_sizes(s);
  const Scratch sc = scratch(st);
  dispatch(s, {out, in, residual}, [&]<class T, int V, class Walk>(int vec) {
    const Plan ps = plan(st, s, vec, kStatsBlocksPerSm, true);
    const TrainArgs ta{s.eps, s.momentum, running_mean, running_var, save_mean, save_invstd, sc.partial, sc.counter};
    bn_stats_kernel<T, V, Walk><<<ps.grid, ps.block, 0, stream_of(st)>>>(ps.geo, static_cast<const T*>(in), ta);
    CUDA_CHECK_LAUNCH();
    const Plan pn = plan(st, s, vec, kNormBlocksPerSm, false);
    const NormArgs na{save_mean, save_invstd, gamma, beta, false, s.act == ops::Activation::ReLU, s.eps};
    bn_normalize_kernel<T, V, Walk><<<pn.grid, pn.block, 0, stream_of(st)>>>(
        pn.geo, static_cast<T*>(out), static_cast<const T*>(in), static_cast<const T*>(residual), na);
    CUDA_CHECK_LAUNCH();
  });
}

void batchnorm_forward_eval(const CudaState* st, const ops::BatchNormShape& s, void* out, const void* in,
                            const void* residual, const float* gamma, const float* beta, const float* running_mean,
                            const float* running_var) {
  check_sizes(s);
  dispatch(s, {out, in, residual}, [&]<class T, int V, class Walk>(int vec) {
    const Plan pn = plan(st, s, vec, kNormBlocksPerSm, false);
    const NormArgs na{running_mean, running_var, gamma, beta, true, s.act == ops::Activation::ReLU, s.eps};
    bn_normalize_kernel<T, V, Walk><<<pn.grid, pn.block, 0, stream_of(st)>>>(
        pn.geo, static_cast<T*>(out), static_cast<const T*>(in), static_cast<const T*>(residual), na);
    CUDA_CHECK_LAUNCH();
  });
}

void batchnorm_backward(const CudaState* st, const ops::BatchNormShape& s, void* din, float* dgamma, float* dbeta,
                        void* dout, const void* out, const void* in, const float* gamma, const float* save_mean,
                        const float* save_invstd) {
  check_sizes(s);
  const Scratch sc = scratch(st);
  const bool relu = s.act == ops::Activation::ReLU;
  dispatch(s, {din, dout, out, in}, [&]<class T, int V, class Walk>(int vec) {
    const BackArgs ba{gamma,      save_mean, save_invstd, dgamma, dbeta, relu, float(1.0 / double(s.count())),
                      sc.partial, sc.counter};
    const Plan ps = plan(st, s, vec, kStatsBlocksPerSm, true);
    bn_backward_sums_kernel<T, V, Walk><<<ps.grid, ps.block, 0, stream_of(st)>>>(
        ps.geo, static_cast<T*>(dout), static_cast<const T*>(out), static_cast<const T*>(in), ba);
    CUDA_CHECK_LAUNCH();
    const Plan pn = plan(st, s, vec, kNormBlocksPerSm, false);
    bn_backward_input_kernel<T, V, Walk><<<pn.grid, pn.block, 0, stream_of(st)>>>(
        pn.geo, static_cast<T*>(din), static_cast<const T*>(dout), static_cast<const T*>(in), ba);
    CUDA_CHECK_LAUNCH();
  });
}

}  // namespace roofline::engine::cuda_ops

// fused-cnn: simple-cnn trained by one cooperative persistent kernel per
// chunk of steps, two grid barriers per step:
//   1. a block per sample (blocks loop when the batch is larger than the
//      grid): the 2,762 parameters in shared memory, the sample's whole
//      forward, loss and backward in shared memory (conv 5×5, max-pool 2,
//      conv 5×5, max-pool 2, FC + ReLU, FC, log-softmax + NLL), the block's
//      gradient summed in shared memory and written as its partial;
//   2. each block reduces 32 parameters over the partials in a fixed order and
//      applies SGD in place (and one warp adds the step's loss statistics).
// Fixed orders everywhere: the same inputs give the same bits.
#include <algorithm>
#include <string>

#include "kernels/pool_window.cuh"
#include "roofline/core/error.hpp"
#include "src/engine/cuda/cuda_state.hpp"
#include "src/engine/fused/fused_device.cuh"

namespace roofline::engine::fused {

namespace {

// simple-cnn's fixed sizes: input 28×28, conv 5×5 → 24×24, pool 2 → 12×12,
// conv 5×5 → 8×8, pool 2 → 4×4 = 16 features.
constexpr int kImg = 28, kK = 5, kC1 = 24, kP1 = 12, kC2 = 8, kP2 = 4, kF = kP2 * kP2;
constexpr int kChunk = 32;  // parameters per reduction job

struct Layout {  // offsets (floats) into dynamic shared memory
  int w, g, x, c1, p1, a1, c2, p2, a2, h, z, dz1, dp2, dc2, dp1, dc1, total;
};

__host__ __device__ inline int take(int& o, int n) {
  const int at = o;
  o += (n + 3) / 4 * 4;
  return at;
}

__host__ __device__ inline Layout layout(int params, int hidden) {
  Layout L{};
  int o = 0;
  L.w = take(o, params);  // parameters
  L.g = take(o, params);  // the block's gradient
  L.x = take(o, kImg * kImg);
  L.c1 = take(o, kC1 * kC1);
  L.p1 = take(o, kP1 * kP1);
  L.a1 = take(o, kP1 * kP1);  // int: argmax into c1
  L.c2 = take(o, kC2 * kC2);
  L.p2 = take(o, kF);
  L.a2 = take(o, kF);  // int: argmax into c2
  L.h = take(o, hidden);
  L.z = take(o, 32);  // logits, then their gradients
  L.dz1 = take(o, hidden);
  L.dp2 = take(o, kF);
  L.dc2 = take(o, kC2 * kC2);
  L.dp1 = take(o, kP1 * kP1);
  L.dc1 = take(o, kC1 * kC1);
  L.total = o;
  return L;
}

struct Sm {
  float *w, *g, *x, *c1, *p1, *c2, *p2, *h, *z, *dz1, *dp2, *dc2, *dp1, *dc1;
  int *a1, *a2;
};

__device__ Sm carve(float* s, const Layout& L) {
  Sm m;
  m.w = s + L.w;
  m.g = s + L.g;
  m.x = s + L.x;
  m.c1 = s + L.c1;
  m.p1 = s + L.p1;
  m.a1 = reinterpret_cast<int*>(s + L.a1);
  m.c2 = s + L.c2;
  m.p2 = s + L.p2;
  m.a2 = reinterpret_cast<int*>(s + L.a2);
  m.h = s + L.h;
  m.z = s + L.z;
  m.dz1 = s + L.dz1;
  m.dp2 = s + L.dp2;
  m.dc2 = s + L.dc2;
  m.dp1 = s + L.dp1;
  m.dc1 = s + L.dc1;
  return m;
}

// out (n×n) = act(conv k×k of in (w×w, stride 1, no padding) + bias)
__device__ void conv(float* out, const float* in, int in_w, int n, const float* w, float b, bool act) {
  for (int o = threadIdx.x; o < n * n; o += kThreads) {
    const int y = o / n, x = o - y * n;
    float acc = 0.f;
#pragma unroll
    for (int r = 0; r < kK; ++r)
#pragma unroll
      for (int q = 0; q < kK; ++q) acc = fmaf(in[(y + r) * in_w + x + q], w[r * kK + q], acc);
    const float v = acc + b;
    out[o] = act ? relu(v) : v;
  }
}

// out (n×n), arg: max over 2×2 windows of in (2n wide), as the layer path's
// pool (kernels/pool_window.cuh).
__device__ void pool(float* out, int* arg, const float* in, int n) {
  const int in_w = 2 * n;
  for (int o = threadIdx.x; o < n * n; o += kThreads) {
    const int y = o / n, x = o - y * n;
    const kernels::MaxAt best = kernels::window_max(in, in_w, 2 * y, 2 * x, 2);
    out[o] = best.m;
    arg[o] = best.arg;
  }
}

// d_in (2n×2n) = scatter of d_out (n×n) to the argmax positions, masked by the
// activation of the layer before (pre = its output) when act is set.
__device__ void unpool(float* d_in, const float* d_out, const int* arg, int n, const float* pre, bool act) {
  const int in_w = 2 * n;
  for (int o = threadIdx.x; o < in_w * in_w; o += kThreads) {
    const int y = o / in_w, x = o - y * in_w;
    const int win = (y / 2) * n + x / 2;
    float v = arg[win] == o ? d_out[win] : 0.f;
    if (act) v = pre[o] > 0.f ? v : 0.f;
    d_in[o] = v;
  }
}

// grad_w[q] += Σ_{y,x < n} d[y·n + x] · in[(y + q/k)·in_w + x + q%k] and
// grad_b += Σ d: 26 sums, a warp each, lanes over the positions.
__device__ void conv_wgrad(float* gw, float* gb, const float* d, const float* in, int in_w, int n) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  for (int q = warp; q < kK * kK + 1; q += kWarps) {
    const int r = q / kK, s = q - r * kK;
    float p = 0.f;
    for (int e = lane; e < n * n; e += 32) {
      const int y = e / n, x = e - y * n;
      p = fmaf(d[e], q < kK * kK ? in[(y + r) * in_w + x + s] : 1.f, p);
    }
    p = warp_sum(p);
    if (lane == 0) {
      if (q < kK * kK)
        gw[q] += p;
      else
        *gb += p;
    }
  }
}

__device__ void load_params(const CnnArgs& a, const Sm& m, bool grads) {
  for (int i = threadIdx.x; i < a.param_count; i += kThreads) {
    m.w[i] = ldf(a.params + i);
    if (grads) m.g[i] = 0.f;
  }
  __syncthreads();
}

// The forward pass of the sample in m.x; the logits end in m.z.
__device__ void forward(const CnnArgs& a, const Sm& m) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, H = a.hidden, C = a.classes;
  conv(m.c1, m.x, kImg, kC1, m.w + a.c1w, m.w[a.c1b], a.c1_relu);
  __syncthreads();
  pool(m.p1, m.a1, m.c1, kP1);
  __syncthreads();
  conv(m.c2, m.p1, kP1, kC2, m.w + a.c2w, m.w[a.c2b], a.c2_relu);
  __syncthreads();
  pool(m.p2, m.a2, m.c2, kP2);
  __syncthreads();
  for (int j = threadIdx.x; j < H; j += kThreads) {
    float acc = 0.f;
    for (int i = 0; i < kF; ++i) acc = fmaf(m.p2[i], m.w[a.f1w + j * kF + i], acc);
    const float v = acc + m.w[a.f1b + j];
    m.h[j] = a.f1_relu ? relu(v) : v;
  }
  __syncthreads();
  for (int j = warp; j < C; j += kWarps) {
    float p = 0.f;
    for (int k = lane; k < H; k += 32) p = fmaf(m.h[k], m.w[a.f2w + j * H + k], p);
    p = warp_sum(p);
    if (lane == 0) {
      const float v = p + m.w[a.f2b + j];
      m.z[j] = a.f2_relu ? relu(v) : v;
    }
  }
  __syncthreads();
}

// Loss of the sample (row `row` of the batch) and the whole backward pass,
// adding to the block's gradient m.g.
__device__ void backward(const CnnArgs& a, const Sm& m, int row, int label, float scale) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, H = a.hidden, C = a.classes;
  if (warp == 0) {
    const float z = lane < C ? m.z[lane] : 0.f;
    float loss;
    bool correct;
    const float dl = row_loss_grad(z, C, label, scale, &loss, &correct);
    __syncwarp();
    if (lane < C) m.z[lane] = a.f2_relu ? (z > 0.f ? dl : 0.f) : dl;  // now the logits' gradient
    if (lane == 0) {
      a.row_loss[row] = loss;
      a.row_correct[row] = correct ? 1 : 0;
    }
  }
  __syncthreads();
  const float* dl = m.z;
  // fc2: gradient, and dz1 = (dlᵀ · W2) ⊙ act'(h)
  for (int e = threadIdx.x; e < C * H; e += kThreads) m.g[a.f2w + e] += dl[e / H] * m.h[e % H];
  for (int j = threadIdx.x; j < C; j += kThreads) m.g[a.f2b + j] += dl[j];
  for (int k = threadIdx.x; k < H; k += kThreads) {
    float s = 0.f;
    for (int j = 0; j < C; ++j) s = fmaf(dl[j], m.w[a.f2w + j * H + k], s);
    m.dz1[k] = a.f1_relu ? (m.h[k] > 0.f ? s : 0.f) : s;
  }
  __syncthreads();
  // fc1: gradient, and dp2 = dz1ᵀ · W1
  for (int e = threadIdx.x; e < H * kF; e += kThreads) m.g[a.f1w + e] += m.dz1[e / kF] * m.p2[e % kF];
  for (int j = threadIdx.x; j < H; j += kThreads) m.g[a.f1b + j] += m.dz1[j];
  for (int i = warp; i < kF; i += kWarps) {
    float p = 0.f;
    for (int j = lane; j < H; j += 32) p = fmaf(m.dz1[j], m.w[a.f1w + j * kF + i], p);
    p = warp_sum(p);
    if (lane == 0) m.dp2[i] = p;
  }
  __syncthreads();
  unpool(m.dc2, m.dp2, m.a2, kP2, m.c2, a.c2_relu);
  __syncthreads();
  // conv2: gradient, and dp1 = full correlation of dc2 with the kernel
  conv_wgrad(m.g + a.c2w, m.g + a.c2b, m.dc2, m.p1, kP1, kC2);
  for (int o = threadIdx.x; o < kP1 * kP1; o += kThreads) {
    const int iy = o / kP1, ix = o - iy * kP1;
    float s = 0.f;
    for (int r = 0; r < kK; ++r) {
      const int y = iy - r;
      if (y < 0 || y >= kC2) continue;
      for (int q = 0; q < kK; ++q) {
        const int x = ix - q;
        if (x < 0 || x >= kC2) continue;
        s = fmaf(m.dc2[y * kC2 + x], m.w[a.c2w + r * kK + q], s);
      }
    }
    m.dp1[o] = s;
  }
  __syncthreads();
  unpool(m.dc1, m.dp1, m.a1, kP1, m.c1, a.c1_relu);
  __syncthreads();
  conv_wgrad(m.g + a.c1w, m.g + a.c1b, m.dc1, m.x, kImg, kC1);
  __syncthreads();
}

__global__ void __launch_bounds__(kThreads, 1) cnn_train_kernel(const __grid_constant__ CnnArgs a) {
  extern __shared__ float4 smem4[];
  float* smem = reinterpret_cast<float*>(smem4);
  const Layout L = layout(static_cast<int>(a.param_count), a.hidden);
  const Sm m = carve(smem, L);
  cg::grid_group grid = cg::this_grid();
  const int rows = a.rows, G = static_cast<int>(gridDim.x), active = min(rows, G);
  const int P = static_cast<int>(a.param_count);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const float scale = 1.0f / static_cast<float>(rows);
  const int step0 = *a.step;  // read by every block before block 0 advances it
  for (int t = 0; t < a.steps; ++t) {
    const int step = step0 + t;
    const std::int64_t base = static_cast<std::int64_t>(step) * a.src.stride;
    if (static_cast<int>(blockIdx.x) < active) {
      load_params(a, m, true);
      for (int row = blockIdx.x; row < rows; row += G) {
        const std::int64_t idx = __ldg(a.src.order + base + row);
        const std::uint8_t* img = a.src.images + idx * a.src.pixels;
        for (int i = threadIdx.x; i < kImg * kImg; i += kThreads)
          m.x[i] = normalise(__ldg(img + i), a.src.mean, a.src.inv_std);
        __syncthreads();
        forward(a, m);
        backward(a, m, row, __ldg(a.src.labels + idx), scale);
      }
      float* part = a.partials + static_cast<std::int64_t>(blockIdx.x) * P;
      for (int i = threadIdx.x; i < P; i += kThreads) part[i] = m.g[i];
    }
    grid.sync();
    const int chunks = (P + kChunk - 1) / kChunk;
    float* red = m.x;  // (kWarps, kChunk)
    for (int job = blockIdx.x; job <= chunks; job += G) {
      if (job == chunks) {  // the last job: the step's loss statistics
        if (warp == 0) add_stats(a.stats, a.row_loss, a.row_correct, rows, step);
        continue;
      }
      const int p = job * kChunk + lane;
      float s = 0.f;
      if (p < P)
        for (int q = warp; q < active; q += kWarps) s += ldf(a.partials + static_cast<std::int64_t>(q) * P + p);
      red[warp * kChunk + lane] = s;
      __syncthreads();
      if (warp == 0 && p < P) {
        float g = 0.f;
        for (int w = 0; w < kWarps; ++w) g += red[w * kChunk + lane];
        a.params[p] = sgd_one(ldf(a.params + p), g, a.momentum + p, a.sgd);
      }
      __syncthreads();
    }
    grid.sync();
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) *a.step = step0 + a.steps;
}

// Forward of the rows of a.x to probabilities: a block per sample, no barrier.
__global__ void __launch_bounds__(kThreads) cnn_infer_kernel(const __grid_constant__ CnnArgs a) {
  extern __shared__ float4 smem4[];
  float* smem = reinterpret_cast<float*>(smem4);
  const Layout L = layout(static_cast<int>(a.param_count), a.hidden);
  const Sm m = carve(smem, L);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  load_params(a, m, false);
  for (int row = blockIdx.x; row < a.rows; row += gridDim.x) {
    const float* x = a.x + static_cast<std::int64_t>(row) * kImg * kImg;
    for (int i = threadIdx.x; i < kImg * kImg; i += kThreads) m.x[i] = ldf(x + i);
    __syncthreads();
    forward(a, m);
    if (warp == 0) {
      const float p = row_softmax(lane < a.classes ? m.z[lane] : 0.f, a.classes);
      if (lane < a.classes) a.probs[static_cast<std::int64_t>(row) * a.classes + lane] = p;
    }
    __syncthreads();
  }
}

}  // namespace

std::size_t cnn_smem_bytes(const CnnArgs& a) {
  return static_cast<std::size_t>(layout(static_cast<int>(a.param_count), a.hidden).total) * sizeof(float);
}

Launch cnn_launch(const CudaState* st, const CnnArgs& a) {
  Launch l;
  l.smem = cnn_smem_bytes(a);
  int per_sm = 0;
  for (const void* k :
       {reinterpret_cast<const void*>(&cnn_train_kernel), reinterpret_cast<const void*>(&cnn_infer_kernel)})
    CUDA_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(l.smem)));
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, reinterpret_cast<const void*>(&cnn_train_kernel),
                                                           kThreads, l.smem));
  if (per_sm < 1)
    throw Error(ErrorKind::Unsupported,
                "the fused CNN kernel does not fit on an SM (" + std::to_string(l.smem) + " B of shared memory)",
                "train with --gpu-path layers");
  l.blocks = st->sm_count;
  return l;
}

void cnn_train(const CudaState* st, const CnnArgs& a, const Launch& l) {
  void* args[] = {const_cast<CnnArgs*>(&a)};
  CUDA_CHECK(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(&cnn_train_kernel),
                                         dim3(static_cast<unsigned>(l.blocks)), dim3(kThreads), args, l.smem,
                                         stream_of(st)));
}

void cnn_infer(const CudaState* st, const CnnArgs& a) {
  const unsigned blocks = static_cast<unsigned>(std::min(a.rows, 4 * st->sm_count));
  cnn_infer_kernel<<<blocks, kThreads, cnn_smem_bytes(a), stream_of(st)>>>(a);
  CUDA_CHECK_LAUNCH();
}

}  // namespace roofline::engine::fused

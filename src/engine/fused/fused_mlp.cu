// fused-mlp: a stack of Linear(+ReLU) layers trained by one cooperative
// persistent kernel per chunk of steps. Per step, with L layers, 2L − 1
// phases separated by grid barriers (5 for simple-mlp):
//   F_l   (l < L−1)  act[l] = act(A_l · W_lᵀ + b_l), A_0 the step's normalised
//                    batch, gathered during the step before (by the blocks
//                    the head leaves idle) or, for a launch's first step,
//                    before it (one more barrier per launch)
//   head             a warp per row: the last layer, log-softmax + NLL, its
//                    gradient dz[L−1], and dz[L−2] = (dz[L−1]·W_{L−1}) ⊙ act'
//   B_l   (l = L−2 … 1)  dz[l−1] = (dz[l]·W_l) ⊙ act' (the first beside the
//                    step's loss statistics)
//   B_0              every layer's weight gradients, each fused with its SGD
//                    update (all dz are complete: the phases before stay
//                    within one round of the grid)
// Tiles stage their operands through registers, a chunk's loads all in flight
// at once and the next chunk's beside this chunk's FMAs; the first layer's
// K (784 pixels) takes two chunks of 512, in tiles 2, 8 or 16 outputs wide as
// the batch needs to fill the grid.
// Parameters ping-pong between two blocks, so a tile reading W_l for an input
// gradient never races the tile that updates it, and no gradient buffer is
// needed. Every reduction runs in a fixed order: the same inputs give the
// same bits.
#include <algorithm>
#include <string>

#include "roofline/core/error.hpp"
#include "src/engine/cuda/cuda_state.hpp"
#include "src/engine/fused/fused_device.cuh"

namespace roofline::engine::fused {

namespace {

using CfgRows = TileCfg<16, 16, 4, 4, 256>;    // GEMMs over batch rows: forward, input gradients
using CfgFirst = TileCfg<16, 16, 4, 4, 512>;   // the first layer's forward: 784 pixels in two chunks
using CfgFirst8 = TileCfg<16, 8, 4, 2, 512>;   // … in narrower tiles when 16-wide ones would idle half the grid
using CfgFirst2 = TileCfg<16, 2, 4, 1, 512>;   // … and narrowest at a batch of a few rows
using CfgWeight = TileCfg<32, 32, 4, 4, 128>;  // weight gradients (K = rows)

__host__ __device__ constexpr int cdiv(int a, int b) { return (a + b - 1) / b; }
template <class Cfg>
__host__ __device__ constexpr int tiles(int m, int n) {
  return cdiv(m, Cfg::TM) * cdiv(n, Cfg::TN);
}

// The head's shared memory: W (C, in) in rows of in + 1 (a lane per class
// reads its row without bank conflicts), b (32), per warp a row (in) and the
// row's output gradients (32).
__host__ __device__ constexpr int head_floats(int in, int classes) {
  return classes * (in + 1) + 32 + kWarps * (in + 32);
}
struct HeadSmem {
  float* w;  // (C, in + 1)
  float* b;  // (32)
  float* h;  // (in): this warp's row
  float* g;  // (32): its output gradients
  int ld;
};
__device__ HeadSmem head_smem(float* smem, int in, int classes) {
  const int ld = in + 1, warp = static_cast<int>(threadIdx.x) / 32;
  float* h = smem + classes * ld + 32 + warp * (in + 32);
  return {smem, smem + classes * ld, h, h + in, ld};
}
// This warp's copy of a row of the head's input.
__device__ void load_head_row(float* h, const float* src, int in) {
  for (int k = static_cast<int>(threadIdx.x) % 32; k < in; k += 32) h[k] = ldf(src + k);
}

// Forward of layer l for `rows` rows: every tile of act[l].
template <class Cfg, class OpA>
__device__ void forward_tile(const MlpArgs& a, int l, const float* cur, const OpA& in_op, int rows, int job,
                             float* smem) {
  const MlpLayer& L = a.layer[l];
  const int tn = cdiv(L.out, Cfg::TN);
  const int m0 = (job / tn) * Cfg::TM, n0 = (job % tn) * Cfg::TN;
  float* out = a.act[l];
  const float* bias = cur + L.b_off;
  const bool has_bias = L.bias, act = L.relu;
  const int ld = L.out;
  tile_gemm<Cfg>(
      rows, L.out, L.in, m0, n0, in_op, Dense{cur + L.w_off, L.in},
      [=](int m, int n, float s) {
        const float v = has_bias ? s + ldf(bias + n) : s;
        out[static_cast<std::int64_t>(m) * ld + n] = act ? relu(v) : v;
      },
      smem);
}

// Phase diagnostics: block 0 notes its SM clock and the global timer (ns)
// (row < 0: not recorded).
__device__ __forceinline__ void mark(const MlpArgs& a, int row, int& phase) {
  if (a.phase_clock && row >= 0 && blockIdx.x == 0 && threadIdx.x == 0 && phase < kMaxPhases) {
    std::int64_t* p = a.phase_clock + 2 * (row * kMaxPhases + phase);
    std::uint64_t ns;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns));
    p[0] = clock64();
    p[1] = static_cast<std::int64_t>(ns);
  }
  ++phase;
}

// The normalised batch of one step (`base` = its first index into the order)
// into dst (rows, pixels): job j of gather_jobs(), kGatherPer elements a
// thread with all their loads in flight. The same float operations as ops::gather_batch.
constexpr int kGatherPer = 4;
__device__ int gather_jobs(const MlpArgs& a, int rows) { return cdiv(rows * a.src.pixels, kThreads * kGatherPer); }
__device__ void gather_job(const MlpArgs& a, int rows, std::int64_t base, float* dst, int job) {
  const int pixels = a.src.pixels, total = rows * pixels, e0 = job * kThreads * kGatherPer;
  float v[kGatherPer];
#pragma unroll
  for (int i = 0; i < kGatherPer; ++i) {
    const int e = e0 + i * kThreads + static_cast<int>(threadIdx.x);
    v[i] = 0.f;
    if (e < total) {
      const int r = e / pixels, k = e - r * pixels;
      const std::int64_t idx = __ldg(a.src.order + base + r);
      v[i] = normalise(__ldg(a.src.images + idx * pixels + k), a.src.mean, a.src.inv_std);
    }
  }
#pragma unroll
  for (int i = 0; i < kGatherPer; ++i) {
    const int e = e0 + i * kThreads + static_cast<int>(threadIdx.x);
    if (e < total) dst[e] = v[i];
  }
}

// The first layer's tiles: as wide as fill the grid (a batch of 1 has 16
// tiles of 16 outputs for 132 blocks; of 2 outputs, 128).
template <class Cfg>
__device__ void first_layer(const MlpArgs& a, const float* cur, const float* x, int rows, float* smem) {
  const int n = tiles<Cfg>(rows, a.layer[0].out);
  for (int job = blockIdx.x; job < n; job += gridDim.x)
    forward_tile<Cfg>(a, 0, cur, Dense{x, a.layer[0].in}, rows, job, smem);
}

__device__ void forward_layers(const MlpArgs& a, const float* cur, const float* x, int rows, float* smem,
                               cg::grid_group& grid, int row, int& phase) {
  const int wide = tiles<CfgFirst>(rows, a.layer[0].out), grid_blocks = static_cast<int>(gridDim.x);
  if (wide * (CfgFirst::TN / CfgFirst2::TN) <= grid_blocks)
    first_layer<CfgFirst2>(a, cur, x, rows, smem);
  else if (wide * (CfgFirst::TN / CfgFirst8::TN) <= grid_blocks)
    first_layer<CfgFirst8>(a, cur, x, rows, smem);
  else
    first_layer<CfgFirst>(a, cur, x, rows, smem);
  grid.sync();
  mark(a, row, phase);
  for (int l = 1; l + 1 < a.layers; ++l) {
    const int n = tiles<CfgRows>(rows, a.layer[l].out);
    for (int job = blockIdx.x; job < n; job += gridDim.x)
      forward_tile<CfgRows>(a, l, cur, Dense{a.act[l - 1], a.layer[l].in}, rows, job, smem);
    grid.sync();
    mark(a, row, phase);
  }
}

// Stages the last layer's weights and bias in shared memory; returns false
// (block-uniform) when this block owns no row.
__device__ bool stage_head(const MlpArgs& a, const float* cur, int rows, const HeadSmem& s) {
  if (blockIdx.x * kWarps >= rows) return false;
  const MlpLayer& H = a.layer[a.layers - 1];
  for (int i = threadIdx.x; i < H.out * H.in; i += kThreads) {
    const int j = i / H.in;
    s.w[j * s.ld + (i - j * H.in)] = ldf(cur + H.w_off + i);
  }
  if (threadIdx.x < 32) s.b[threadIdx.x] = H.bias && threadIdx.x < H.out ? ldf(cur + H.b_off + threadIdx.x) : 0.f;
  __syncthreads();
  return true;
}

// The last layer's logit for lane j < classes of one row (the row in s.h):
// lane j sums its class's products in order.
__device__ float head_logit(const MlpLayer& H, const HeadSmem& s) {
  const int lane = threadIdx.x % 32;
  float z = 0.f;
  if (lane < H.out) {
    const float* wj = s.w + lane * s.ld;
    float p = 0.f;
    for (int k = 0; k < H.in; ++k) p = fmaf(s.h[k], wj[k], p);
    z = p + s.b[lane];
  }
  return H.relu ? relu(z) : z;
}

// The label of the batch row `row` of this step (−1 past the rows).
__device__ __forceinline__ int row_label(const MlpArgs& a, std::int64_t base, int row, int rows) {
  return row < rows ? __ldg(a.src.labels + __ldg(a.src.order + base + row)) : -1;
}

__device__ void head_train(const MlpArgs& a, const float* cur, int rows, std::int64_t base, float* smem) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  // Its two dependent loads fly while the weights are staged.
  const int Lh = a.layers - 1;
  const MlpLayer& H = a.layer[Lh];
  const MlpLayer& P = a.layer[Lh - 1];
  const int in = H.in, C = H.out;
  const HeadSmem s = head_smem(smem, in, C);
  // The first row and its label load while the weights are staged.
  const int first = blockIdx.x * kWarps + warp;
  int next_label = row_label(a, base, first, rows);
  if (first < rows) load_head_row(s.h, a.act[Lh - 1] + static_cast<std::int64_t>(first) * in, in);
  if (!stage_head(a, cur, rows, s)) return;
  float* h = s.h;
  float* g = s.g;
  const float scale = 1.0f / static_cast<float>(rows);
  for (int row = first; row < rows; row += gridDim.x * kWarps) {
    if (row != first) load_head_row(h, a.act[Lh - 1] + static_cast<std::int64_t>(row) * in, in);
    __syncwarp();
    const int label = next_label;
    next_label = row_label(a, base, row + gridDim.x * kWarps, rows);
    const float z = head_logit(H, s);
    float loss;
    bool correct;
    const float dl = row_loss_grad(z, C, label, scale, &loss, &correct);
    const float dzl = H.relu ? (z > 0.f ? dl : 0.f) : dl;
    if (lane < C) {
      a.dz[Lh][static_cast<std::int64_t>(row) * C + lane] = dzl;
      g[lane] = dzl;
    }
    if (lane == 0) {
      a.row_loss[row] = loss;
      a.row_correct[row] = correct ? 1 : 0;
    }
    __syncwarp();
    // dz[L−2] = (dz[L−1] · W) ⊙ act'(act[L−2])
    float* dprev = a.dz[Lh - 1] + static_cast<std::int64_t>(row) * in;
    for (int k = lane; k < in; k += 32) {
      float acc = 0.f;
      for (int j = 0; j < C; ++j) acc = fmaf(g[j], s.w[j * s.ld + k], acc);
      dprev[k] = P.relu ? (h[k] > 0.f ? acc : 0.f) : acc;
    }
    __syncwarp();  // h and g are this warp's next row
  }
}

__device__ void head_infer(const MlpArgs& a, const float* cur, int rows, float* smem) {
  const int Lh = a.layers - 1;
  const MlpLayer& H = a.layer[Lh];
  const int in = H.in, C = H.out, lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const HeadSmem s = head_smem(smem, in, C);
  const int first = blockIdx.x * kWarps + warp;
  if (first < rows) load_head_row(s.h, a.act[Lh - 1] + static_cast<std::int64_t>(first) * in, in);
  if (!stage_head(a, cur, rows, s)) return;
  for (int row = first; row < rows; row += gridDim.x * kWarps) {
    if (row != first) load_head_row(s.h, a.act[Lh - 1] + static_cast<std::int64_t>(row) * in, in);
    __syncwarp();
    const float z = head_logit(H, s);
    const float p = row_softmax(z, C);
    if (lane < C) a.probs[static_cast<std::int64_t>(row) * C + lane] = p;
    __syncwarp();
  }
}

// dz[l−1] tile: (dz[l] · W_l) ⊙ act'(act[l−1]).
__device__ void input_grad_tile(const MlpArgs& a, int l, const float* cur, int rows, int job, float* smem) {
  const MlpLayer& L = a.layer[l];
  const MlpLayer& P = a.layer[l - 1];
  const int tn = cdiv(L.in, CfgRows::TN);
  const int m0 = (job / tn) * CfgRows::TM, n0 = (job % tn) * CfgRows::TN;
  float* out = a.dz[l - 1];
  const float* act = a.act[l - 1];
  const bool mask = P.relu;
  const int ld = L.in;
  tile_gemm<CfgRows>(
      rows, L.in, L.out, m0, n0, Dense{a.dz[l], L.out}, DenseT{cur + L.w_off, L.in, -1},
      [=](int m, int n, float s) {
        const std::int64_t i = static_cast<std::int64_t>(m) * ld + n;
        out[i] = mask ? (ldf(act + i) > 0.f ? s : 0.f) : s;
      },
      smem);
}

// Layer l's weight-gradient tile (the bias as an extra all-ones input
// column), each gradient applied at once: next = SGD(cur, gradient).
__device__ void weight_tile(const MlpArgs& a, int l, const float* cur, float* next, int rows, const float* x,
                            int job, float* smem) {
  const MlpLayer& L = a.layer[l];
  const int N = L.in + (L.bias ? 1 : 0);
  const int tn = cdiv(N, CfgWeight::TN);
  const int m0 = (job / tn) * CfgWeight::TM, n0 = (job % tn) * CfgWeight::TN;
  const int in = L.in;
  const std::int64_t w_off = L.w_off, b_off = L.b_off;
  float* mom = a.momentum;
  const ops::SgdConfig sgd = a.sgd;
  auto epi = [=](int m, int n, float s) {
    const std::int64_t i = n < in ? w_off + static_cast<std::int64_t>(m) * in + n : b_off + m;
    next[i] = sgd_one(ldf(cur + i), s, mom + i, sgd);
  };
  const DenseT dz{a.dz[l], L.out, -1};  // (j, i) = dz[l][i·out + j]
  const float* in_act = l == 0 ? x : a.act[l - 1];  // (rows, in)
  tile_gemm<CfgWeight>(L.out, N, rows, m0, n0, dz, DenseT{in_act, L.in, L.bias ? L.in : -1}, epi, smem);
}

__device__ int weight_tiles(const MlpLayer& L) { return tiles<CfgWeight>(L.out, L.in + (L.bias ? 1 : 0)); }

__global__ void __launch_bounds__(kThreads, 1) mlp_train_kernel(const __grid_constant__ MlpArgs a) {
  extern __shared__ float4 smem4[];
  float* smem = reinterpret_cast<float*>(smem4);
  cg::grid_group grid = cg::this_grid();
  const int rows = a.rows, L = a.layers;
  const int step0 = *a.step;  // every block reads it before block 0 advances it
  // The first step's batch; each step then gathers the next one's.
  for (int job = blockIdx.x; job < gather_jobs(a, rows); job += gridDim.x)
    gather_job(a, rows, static_cast<std::int64_t>(step0) * a.src.stride, a.xb[0], job);
  grid.sync();
  for (int t = 0; t < a.steps; ++t) {
    const int step = step0 + t;
    const std::int64_t base = static_cast<std::int64_t>(step) * a.src.stride;
    const float* cur = a.params[t & 1];
    float* next = a.params[(t & 1) ^ 1];
    const int row = t < kPhaseSteps ? t : -1;
    int phase = 0;
    mark(a, row, phase);
    const float* x = a.xb[t & 1];
    float* x_next = a.xb[(t & 1) ^ 1];
    const std::int64_t base_next = base + a.src.stride;
    forward_layers(a, cur, x, rows, smem, grid, row, phase);
    head_train(a, cur, rows, base, smem);
    if (t + 1 < a.steps) {  // the next step's batch, on the blocks the head leaves idle
      const int head_blocks = min(static_cast<int>(gridDim.x), cdiv(rows, kWarps));
      const int idle = static_cast<int>(gridDim.x) - head_blocks;
      const int first = idle > 0 ? static_cast<int>(blockIdx.x) - head_blocks : static_cast<int>(blockIdx.x);
      if (first >= 0)
        for (int job = first; job < gather_jobs(a, rows); job += idle > 0 ? idle : static_cast<int>(gridDim.x))
          gather_job(a, rows, base_next, x_next, job);
    }
    grid.sync();
    mark(a, row, phase);
    // Input gradients layer by layer; every weight gradient (and its SGD
    // update) in the last phase, where all dz are complete: the input-gradient
    // phases stay within one round of the grid.
    for (int l = L - 2; l >= 0; --l) {
      const int n_in = l >= 1 ? tiles<CfgRows>(rows, a.layer[l].in) : 0;
      const int n_stats = l == L - 2 ? 1 : 0;
      int n_w = 0;
      if (l == 0)
        for (int q = 0; q < L; ++q) n_w += weight_tiles(a.layer[q]);
      const int total = n_in + n_w + n_stats;
      for (int job = blockIdx.x; job < total; job += gridDim.x) {
        if (job < n_in) {
          input_grad_tile(a, l, cur, rows, job, smem);
        } else if (job < n_in + n_w) {
          int q = 0, j = job - n_in;  // layer q's tile j
          while (j >= weight_tiles(a.layer[q])) j -= weight_tiles(a.layer[q++]);
          weight_tile(a, q, cur, next, rows, x, j, smem);
        } else if (threadIdx.x < 32) {
          add_stats(a.stats, a.row_loss, a.row_correct, rows, step);
        }
      }
      grid.sync();
      mark(a, row, phase);
    }
  }
  // The result of an odd number of steps is in params[1]: copy it home.
  if (a.steps & 1) {
    const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * kThreads;
    for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(kThreads) + threadIdx.x; i < a.param_count;
         i += stride)
      a.params[0][i] = ldf(a.params[1] + i);
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) *a.step = step0 + a.steps;
}

__global__ void __launch_bounds__(kThreads, 1) mlp_infer_kernel(const __grid_constant__ MlpArgs a) {
  extern __shared__ float4 smem4[];
  float* smem = reinterpret_cast<float*>(smem4);
  cg::grid_group grid = cg::this_grid();
  int phase = 0;
  mark(a, kPhaseSteps, phase);
  forward_layers(a, a.params[0], a.x, a.rows, smem, grid, kPhaseSteps, phase);
  head_infer(a, a.params[0], a.rows, smem);
  mark(a, kPhaseSteps, phase);  // block 0's own end, not the grid's
}

void launch(const void* kernel, const CudaState* st, const MlpArgs& a, const Launch& l) {
  void* args[] = {const_cast<MlpArgs*>(&a)};
  CUDA_CHECK(cudaLaunchCooperativeKernel(kernel, dim3(static_cast<unsigned>(l.blocks)), dim3(kThreads), args, l.smem,
                                         stream_of(st)));
}

}  // namespace

std::size_t mlp_smem_bytes(const MlpArgs& a) {
  const MlpLayer& H = a.layer[a.layers - 1];
  int floats = CfgRows::kSmemFloats;
  floats = std::max(floats, CfgFirst::kSmemFloats);
  floats = std::max(floats, CfgFirst8::kSmemFloats);
  floats = std::max(floats, CfgFirst2::kSmemFloats);
  floats = std::max(floats, CfgWeight::kSmemFloats);
  floats = std::max(floats, head_floats(H.in, H.out));
  return static_cast<std::size_t>(floats) * sizeof(float);
}

Launch mlp_launch(const CudaState* st, const MlpArgs& a) {
  Launch l;
  l.smem = mlp_smem_bytes(a);
  int per_sm = 1 << 30;
  for (const void* k :
       {reinterpret_cast<const void*>(&mlp_train_kernel), reinterpret_cast<const void*>(&mlp_infer_kernel)}) {
    CUDA_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(l.smem)));
    int n = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, k, kThreads, l.smem));
    per_sm = std::min(per_sm, n);
  }
  if (per_sm < 1)
    throw Error(ErrorKind::Unsupported,
                "the fused MLP kernel does not fit on an SM (" + std::to_string(l.smem) + " B of shared memory, " +
                    std::to_string(kThreads) + " threads)",
                "train with --gpu-path layers");
  l.blocks = st->sm_count;  // one block per SM: every barrier waits for the fewest blocks
  return l;
}

void mlp_train(const CudaState* st, const MlpArgs& a, const Launch& l) {
  launch(reinterpret_cast<const void*>(&mlp_train_kernel), st, a, l);
}

void mlp_infer(const CudaState* st, const MlpArgs& a, const Launch& l) {
  launch(reinterpret_cast<const void*>(&mlp_infer_kernel), st, a, l);
}

}  // namespace roofline::engine::fused

// fused-mlp: a stack of Linear(+ReLU) layers trained by one cooperative
// persistent kernel per chunk of steps. Per step three phases, each ended by a
// grid barrier (a barrier and the L2 round trips around it cost ~3.5 µs on an
// H100 whatever the work: docs/perf-notes.md, so phases are few and full;
// the code is kept small too, as its instructions are fetched every step):
//   first layer  split-K tiles: job (tile, s) = the 64 × 64 output tile's sum
//                over K slice s of the step's normalised batch times W_0ᵀ,
//                into partial[s] (as many slices as fill the grid)
//   rows         a block per batch row, every later layer's weights in shared
//                memory (bulk copies started at the step's start, landing
//                during the first layer): the row's act[0] = act(Σ_s
//                partial[s] + b_0), the forward of layers 1 … L−1, log-softmax
//                + NLL and its gradient, then every input gradient back to
//                dz[0]
//   weights      every layer's weight gradient (the bias as an all-ones input
//                column) in 64 × 32 tiles, each applied at once by SGD; one
//                job adds the step's loss statistics
// The launch's batches are gathered before it (mlp_gather_kernel). Inference
// runs the first two phases (the row phase ends with the softmax).
// Parameters ping-pong between two blocks, so that the weight phase never
// writes what a row reads, and no gradient buffer is needed. Every reduction
// runs in a fixed order: the same inputs give the same bits.
#include <algorithm>
#include <string>

#include "kernels/async_copy.cuh"
#include "kernels/mbarrier.cuh"
#include "roofline/core/error.hpp"
#include "src/engine/cuda/cuda_state.hpp"
#include "src/engine/fused/fused_device.cuh"

namespace roofline::engine::fused {

namespace {

using CfgFirst = TileCfg<kSplitTile, kSplitTile, 8, 8, 32, 2>;  // first-layer slices: 8 × 8 a thread, 4 k-groups, k loop unrolled by 2
using CfgWeight = TileCfg<64, 32, 8, 4, 64, 4>;              // weight gradients (K = rows, 64 a chunk; k loop unrolled)

template <class Cfg>
__host__ __device__ constexpr int tiles(int m, int n) {
  return mlp_cdiv(m, Cfg::TM) * mlp_cdiv(n, Cfg::TN);
}

// Phase diagnostics: block 0 notes its SM clock and the global timer (ns)
// (row < 0: not recorded).
__device__ __forceinline__ void mark(const MlpArgs& a, int row, int& phase) {
  if (a.phase_clock && row >= 0 && blockIdx.x == 0 && threadIdx.x == 0 && phase < kMaxPhases) {
    std::int64_t* p = a.phase_clock + 2 * (row * kMaxPhases + phase);
    p[0] = clock64();
    p[1] = static_cast<std::int64_t>(kernels::global_ns());
  }
  ++phase;
}

// ---- The batch ---------------------------------------------------------------
// A launch's batches are gathered before it by mlp_gather_kernel (one pass
// over all its steps: gathering each step's beside its phases held a grid
// barrier ~2 µs a step at batch 128, docs/perf-notes.md). Step t's batch is
// a.xs + t·rows·in.
__device__ const float* step_batch(const MlpArgs& a, int t) {
  return a.xs + static_cast<std::int64_t>(t) * a.rows * a.layer[0].in;
}

// The label of the batch row `row` of this step (−1 past the rows).
__device__ __forceinline__ int row_label(const MlpArgs& a, std::int64_t base, int row, int rows) {
  return row < rows ? __ldg(a.src.labels + __ldg(a.src.order + base + row)) : -1;
}

// ---- Phase 1: the first layer, split over K --------------------------------------
// Job (tile, s): the tile's sum over K slice s (p.kc inputs, in chunks of
// CfgFirst::KC: one instantiation for every slice width keeps the kernel's
// code small). `issue` runs once: after the first job's loads are in flight
// (so that its own time overlaps their round trip), or at the end when the
// block has no job.
template <class Issue>
__device__ void first_layer(const MlpArgs& a, const float* cur, const float* x, int rows, float* smem,
                            const Issue& issue) {
  using Cfg = CfgFirst;
  const FirstPlan p = mlp_first_plan(rows, a.layer[0].out, a.layer[0].in, static_cast<int>(gridDim.x));
  const MlpLayer& L0 = a.layer[0];
  const int in = L0.in, out = L0.out, tn = mlp_cdiv(out, Cfg::TN), splits = p.splits;
  const int jobs = tiles<Cfg>(rows, out) * splits;
  const float* w = cur + L0.w_off;
  bool issued = false;
  const auto once = [&] {
    if (!issued) issue();
    issued = true;
  };
  for (int job = blockIdx.x; job < jobs; job += gridDim.x) {
    const int s = job % splits, tile = job / splits;
    const int m0 = (tile / tn) * Cfg::TM, n0 = (tile % tn) * Cfg::TN, k0 = s * p.kc;
    float* part = a.partial + static_cast<std::int64_t>(s) * rows * out;  // (rows, out)
    tile_gemm<Cfg>(
        rows, out, min(p.kc, in - k0), m0, n0, dense(x + k0, in), dense(w + k0, in),
        [=](int m, int n, float4 v, int) {  // out % 4 == 0 (match_mlp): the run is whole
          *reinterpret_cast<float4*>(part + static_cast<std::int64_t>(m) * out + n) = v;
        },
        smem, once);
  }
  once();
}

// ---- Phase 2: a block per row --------------------------------------------------------
// Shared memory of the row phase (mlp_row_layout): w[l] (out, in) for l ≥ 1,
// b[l] (out), v[l] (out) the activations for l ≤ L−2, d[l] (out) the output
// gradients, z (32) the logits, red (kRowScratchFloats), then the tiles'
// region (tile_gemm's stage, a row's first-layer slices). Kept as float
// offsets into the dynamic shared memory, in shared memory (one copy per
// block, see shared_row_smem: indexed by a run-time layer, a per-thread copy
// would sit in local memory), and turned into pointers from the shared array
// itself (smem_at), so that the compiler knows them as shared: loaded as
// pointers, they were generic, and every stage and row read was a generic
// load (LD.E, tracked as a global one) instead of LDS.
extern __shared__ float4 mlp_smem4[];
__device__ __forceinline__ float* smem_at(int off) { return reinterpret_cast<float*>(mlp_smem4) + off; }
struct RowSmem {
  int w_[kMaxLayers], b_[kMaxLayers], v_[kMaxLayers], d_[kMaxLayers];
  int z_, red_, tiles_;
  __device__ float* w(int l) const { return smem_at(w_[l]); }
  __device__ float* b(int l) const { return smem_at(b_[l]); }
  __device__ float* v(int l) const { return smem_at(v_[l]); }
  __device__ float* d(int l) const { return smem_at(d_[l]); }
  __device__ float* z() const { return smem_at(z_); }
  __device__ float* red() const { return smem_at(red_); }
  __device__ float* tiles() const { return smem_at(tiles_); }
};
__device__ RowSmem row_smem(const MlpArgs& a) {
  const RowLayout r = mlp_row_layout(a.layer, a.layers);
  RowSmem s{};
  for (int l = 0; l < a.layers; ++l) {
    s.w_[l] = static_cast<int>(r.w[l]);
    s.b_[l] = static_cast<int>(r.b[l]);
    s.d_[l] = static_cast<int>(r.d[l]);
    s.v_[l] = static_cast<int>(r.v[l]);
  }
  s.z_ = static_cast<int>(r.z);
  s.red_ = static_cast<int>(r.red);
  s.tiles_ = static_cast<int>(r.total);
  return s;
}
__device__ const RowSmem& shared_row_smem(const MlpArgs& a) {
  __shared__ RowSmem s;
  if (threadIdx.x == 0) s = row_smem(a);
  __syncthreads();
  return s;
}

// Copies layers 1 … L−1's weights and every layer's bias (0 without one)
// into shared memory, asynchronously, in two parts: stage_fence (every
// thread, first), then stage_issue (every thread; on sm_90 thread 0 issues
// the copies); then stage_wait(bar, uses) and __syncthreads before reading
// them. Bulk copies on sm_90 (one mbarrier, `bar`; `uses` = the batches it
// has counted before), 16-byte cp.async elsewhere. Biases are copied in whole
// 16-byte runs (parameter tensors are 64-float aligned, so the run stays
// inside the bias's padding).
__device__ void stage_fence(const MlpArgs& a, const RowSmem& s) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  // Every thread's accesses of the last phase (shared memory the copies
  // overwrite, global memory other SMs wrote) before the copies.
  kernels::fence_proxy_async();
  kernels::fence_proxy_async_global();
#endif
  for (int l = 0; l < a.layers; ++l)
    if (!a.layer[l].bias)
      for (int j = threadIdx.x; j < a.layer[l].out; j += kThreads) s.b(l)[j] = 0.f;
  __syncthreads();
}
__device__ void stage_issue(const MlpArgs& a, const float* cur, const RowSmem& s, unsigned long long* bar) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if (threadIdx.x == 0) {
    unsigned bytes = 0;
    for (int l = 0; l < a.layers; ++l) {
      const MlpLayer& L = a.layer[l];
      if (l >= 1) bytes += 4u * static_cast<unsigned>(L.out * L.in);
      if (L.bias) bytes += 4u * static_cast<unsigned>(mlp_round4(L.out));
    }
    const std::uint32_t b = kernels::smem_addr(bar);
    kernels::mbar_arrive_expect_tx(b, bytes);
    // As few copies as possible: the TMA unit takes them one after the other,
    // ~150 ns each (8 copies, 32 KB pieces and each bias apart, took 1.2 µs a
    // step on the H100). A layer's weights and bias are one copy where the bias
    // follows the weights in both places (w (out·in) then b: Layer::align of a
    // multiple of 64 floats, mlp_round4 of a multiple of 4).
    for (int l = 0; l < a.layers; ++l) {
      const MlpLayer& L = a.layer[l];
      const unsigned nw = 4u * static_cast<unsigned>(L.out * L.in);  // match_mlp: in % 4 == 0
      const unsigned nb = L.bias ? 4u * unsigned(mlp_round4(L.out)) : 0u;
      const bool joined = l >= 1 && L.bias && L.b_off == L.w_off + L.out * L.in && s.b(l) == s.w(l) + L.out * L.in;
      if (l >= 1) kernels::bulk_g2s(kernels::smem_addr(s.w(l)), cur + L.w_off, joined ? nw + nb : nw, b);
      if (L.bias && !joined) kernels::bulk_g2s(kernels::smem_addr(s.b(l)), cur + L.b_off, nb, b);
    }
  }
#else
  (void)bar;
  for (int l = 0; l < a.layers; ++l) {
    const MlpLayer& L = a.layer[l];
    if (l >= 1) {
      const int n4 = L.out * L.in / 4;  // match_mlp: in % 4 == 0
      for (int i = threadIdx.x; i < n4; i += kThreads) kernels::copy_async_16(s.w(l) + 4 * i, cur + L.w_off + 4 * i);
    }
    if (L.bias)
      for (int i = threadIdx.x; i < mlp_round4(L.out) / 4; i += kThreads)
        kernels::copy_async_16(s.b(l) + 4 * i, cur + L.b_off + 4 * i);
  }
#endif
}

// Once per launch, before the first grid barrier (which orders it before any use).
__device__ void init_stage_barrier(unsigned long long* bar) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if (threadIdx.x == 0) {
    kernels::mbar_init(kernels::smem_addr(bar), 1);
    kernels::fence_mbarrier_init();
  }
#else
  (void)bar;
#endif
}

__device__ void stage_wait(unsigned long long* bar, unsigned uses) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  // 2 s can only be a lost copy: the kernel traps rather than hang the GPU.
  if (!kernels::mbar_wait_for(kernels::smem_addr(bar), uses & 1u, 2000000000ull)) __trap();
#else
  (void)bar, (void)uses;
  kernels::copy_async_wait_all();
#endif
}

// Row m's first-layer sums: partial[s][m][·] of every slice s into `buf`
// (splits × out floats in the tiles' region, free during the row phase), in
// 16-byte copies that fly while the block waits for its weights.
__device__ void first_row_load(const MlpArgs& a, int m, int rows, int splits, float* buf) {
  const int out = a.layer[0].out, q4 = out / 4;  // match_mlp: out % 4 == 0
  const std::int64_t slice = static_cast<std::int64_t>(rows) * out;
  const float* src = a.partial + static_cast<std::int64_t>(m) * out;
  for (int i = threadIdx.x; i < splits * q4; i += kThreads) {
    const int sl = i / q4, q = i - sl * q4;
    kernels::copy_async_16(buf + sl * out + 4 * q, src + sl * slice + 4 * q);
  }
}
// … then act[0] = act(Σ_s buf[s] + b_0), the slices added in order, into v[0]
// and act[0]. Waits for the copies; ends with the block in step.
__device__ void first_row_finish(const MlpArgs& a, int m, int splits, const float* buf, const RowSmem& s) {
  kernels::copy_async_wait_all();
  __syncthreads();
  const MlpLayer& L0 = a.layer[0];
  const int out = L0.out;
  for (int n = threadIdx.x; n < out; n += kThreads) {
    float acc = 0.f;
    for (int sl = 0; sl < splits; ++sl) acc += buf[sl * out + n];
    float v = acc + s.b(0)[n];
    v = L0.relu ? relu(v) : v;
    s.v(0)[n] = v;
    a.act[0][static_cast<std::int64_t>(m) * out + n] = v;
  }
  __syncthreads();
}

// Sums each lane's 8 values over the warp: lane l (l < 8) returns the total
// of value 4·l₀ + 2·l₁ + l₂ (l's bits), by halving the values at each of three
// exchanges, then two plain ones: 9 shuffles for 8 sums, in a fixed order.
__device__ __forceinline__ int sum8_index(int lane) { return 4 * (lane & 1) + 2 * ((lane >> 1) & 1) + ((lane >> 2) & 1); }
__device__ __forceinline__ float warp_sum8(const float (&v)[8]) {
  const int lane = threadIdx.x % 32;
  const bool b0 = lane & 1, b1 = lane & 2, b2 = lane & 4;
  float h4[4], h2[2];
#pragma unroll
  for (int i = 0; i < 4; ++i) h4[i] = (b0 ? v[i + 4] : v[i]) + __shfl_xor_sync(kFull, b0 ? v[i] : v[i + 4], 1);
#pragma unroll
  for (int i = 0; i < 2; ++i) h2[i] = (b1 ? h4[i + 2] : h4[i]) + __shfl_xor_sync(kFull, b1 ? h4[i] : h4[i + 2], 2);
  float h = (b2 ? h2[1] : h2[0]) + __shfl_xor_sync(kFull, b2 ? h2[0] : h2[1], 4);
  h += __shfl_xor_sync(kFull, h, 8);
  h += __shfl_xor_sync(kFull, h, 16);
  return h;
}

// y[j] = act(Σ_k x[k]·W[j][k] + b[j]) for j < out: a warp per 8 outputs at a
// time, each lane a 4-float run of k every 128, the lanes' sums added by
// warp_sum8. y_global (may be null)
// gets a copy.
__device__ void row_forward(const float* W, const float* b, const float* x, int in, int out, bool act, float* y,
                            float* y_global) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, nq = in / 4;
  const float4* x4 = reinterpret_cast<const float4*>(x);
  for (int j0 = 8 * warp; j0 < out; j0 += 8 * kWarps) {
    float p[8];
#pragma unroll
    for (int o = 0; o < 8; ++o) p[o] = 0.f;
#pragma unroll 1
    for (int q = lane; q < nq; q += 32) {
      const float4 xv = x4[q];
#pragma unroll
      for (int o = 0; o < 8; ++o) {
        const float4 w = j0 + o < out ? reinterpret_cast<const float4*>(W + static_cast<std::int64_t>(j0 + o) * in)[q]
                                      : make_float4(0.f, 0.f, 0.f, 0.f);
        p[o] = fmaf(xv.x, w.x, p[o]);
        p[o] = fmaf(xv.y, w.y, p[o]);
        p[o] = fmaf(xv.z, w.z, p[o]);
        p[o] = fmaf(xv.w, w.w, p[o]);
      }
    }
    const float sum = warp_sum8(p);
    const int j = j0 + sum8_index(lane);
    if (lane < 8 && j < out) {
      const float v = act ? relu(sum + b[j]) : sum + b[j];
      y[j] = v;
      if (y_global) y_global[j] = v;
    }
  }
}

// dx[k] = (Σ_j d[j]·W[j][k]) ⊙ act'(x[k]) for k < in (act' = [x > 0] when
// `mask`): thread t a 4-float run q = t mod in/4 of k over the j ≡ t div in/4
// (mod G), in four interleaved sums, the G groups' partial runs added in
// order through `red`. Into dx and dx_global. Starts and ends with the block
// in step.
__device__ void row_backward(const float* W, const float* d, int in, int out, const float* x, bool mask, float* dx,
                             float* dx_global, float* red) {
  const int nq = in / 4, G = kThreads / nq, t = threadIdx.x, q = t % nq, grp = t / nq;
  if (grp < G) {
    const float4* W4 = reinterpret_cast<const float4*>(W);
    float4 acc[4];
#pragma unroll
    for (int r = 0; r < 4; ++r) acc[r] = make_float4(0.f, 0.f, 0.f, 0.f);
    auto add = [&](float4& c, int j) {
      const float4 w = W4[static_cast<std::int64_t>(j) * nq + q];
      const float dj = d[j];
      c.x = fmaf(dj, w.x, c.x);
      c.y = fmaf(dj, w.y, c.y);
      c.z = fmaf(dj, w.z, c.z);
      c.w = fmaf(dj, w.w, c.w);
    };
    int j = grp;
    for (; j + 3 * G < out; j += 4 * G) {
#pragma unroll
      for (int r = 0; r < 4; ++r) add(acc[r], j + r * G);
    }
    for (; j < out; j += G) add(acc[0], j);
    float4 sum;
    sum.x = (acc[0].x + acc[1].x) + (acc[2].x + acc[3].x);
    sum.y = (acc[0].y + acc[1].y) + (acc[2].y + acc[3].y);
    sum.z = (acc[0].z + acc[1].z) + (acc[2].z + acc[3].z);
    sum.w = (acc[0].w + acc[1].w) + (acc[2].w + acc[3].w);
    reinterpret_cast<float4*>(red)[grp * nq + q] = sum;
  }
  __syncthreads();
  for (int k = t; k < in; k += kThreads) {
    float sum = 0.f;
    for (int g = 0; g < G; ++g) sum += red[g * in + k];
    const float v = mask ? (x[k] > 0.f ? sum : 0.f) : sum;
    dx[k] = v;
    dx_global[k] = v;
  }
  __syncthreads();
}

// The row phase of a training step (a block per row), after stage_issue at
// the step's start. `splits` = the first layer's K slices; `bar`/`uses` =
// stage_issue's barrier and the batches it has counted; base = the step's
// first index into the sample order.
__device__ void rows_train(const MlpArgs& a, const RowSmem& s, float* buf, int rows, int splits, std::int64_t base,
                           unsigned long long* bar, unsigned& uses, int mark_row, int& phase) {
  const int L = a.layers, Lh = L - 1, lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const MlpLayer& H = a.layer[Lh];
  const int first = static_cast<int>(blockIdx.x), grid = static_cast<int>(gridDim.x);
  int label = warp == 0 ? row_label(a, base, first, rows) : -1;
  if (first < rows) {
    first_row_load(a, first, rows, splits, buf);
    stage_wait(bar, uses++);
    first_row_finish(a, first, splits, buf, s);
    mark(a, mark_row, phase);  // stage
  }
  const float scale = 1.0f / static_cast<float>(rows);
  for (int m = first; m < rows; m += grid) {
    if (m != first) {
      first_row_load(a, m, rows, splits, buf);
      first_row_finish(a, m, splits, buf, s);
    }
    const int next_label = warp == 0 ? row_label(a, base, m + grid, rows) : -1;
    for (int l = 1; l < Lh; ++l) {
      const MlpLayer& Ll = a.layer[l];
      row_forward(s.w(l), s.b(l), s.v(l - 1), Ll.in, Ll.out, Ll.relu, s.v(l),
                  a.act[l] + static_cast<std::int64_t>(m) * Ll.out);
      __syncthreads();
    }
    if (m == first) mark(a, mark_row, phase);  // hidden
    row_forward(s.w(Lh), s.b(Lh), s.v(Lh - 1), H.in, H.out, H.relu, s.z(), nullptr);
    __syncthreads();
    if (warp == 0) {
      const float z = lane < H.out ? s.z()[lane] : 0.f;
      float loss;
      bool correct;
      const float dl = row_loss_grad(z, H.out, label, scale, &loss, &correct);
      const float dzl = H.relu ? (z > 0.f ? dl : 0.f) : dl;
      if (lane < H.out) {
        s.d(Lh)[lane] = dzl;
        a.dz[Lh][static_cast<std::int64_t>(m) * H.out + lane] = dzl;
      }
      if (lane == 0) {
        a.row_loss[m] = loss;
        a.row_correct[m] = correct ? 1 : 0;
      }
    }
    __syncthreads();
    if (m == first) mark(a, mark_row, phase);  // loss
    for (int l = Lh; l >= 1; --l) {
      const MlpLayer& Ll = a.layer[l];
      row_backward(s.w(l), s.d(l), Ll.in, Ll.out, s.v(l - 1), a.layer[l - 1].relu, s.d(l - 1),
                   a.dz[l - 1] + static_cast<std::int64_t>(m) * Ll.in, s.red());
    }
    if (m == first) mark(a, mark_row, phase);  // backward
    label = next_label;
  }
}

// The row phase of inference (after stage_issue): the forward and the softmax
// into probs.
__device__ void rows_infer(const MlpArgs& a, const RowSmem& s, float* buf, int rows, int splits,
                           unsigned long long* bar, int& phase) {
  const int first = static_cast<int>(blockIdx.x), Lh = a.layers - 1, C = a.layer[Lh].out;
  const int lane = threadIdx.x % 32;
  if (first >= rows) return;
  first_row_load(a, first, rows, splits, buf);
  stage_wait(bar, 0);
  first_row_finish(a, first, splits, buf, s);
  mark(a, kPhaseSteps, phase);  // stage
  for (int m = first; m < rows; m += gridDim.x) {
    if (m != first) {
      first_row_load(a, m, rows, splits, buf);
      first_row_finish(a, m, splits, buf, s);
    }
    for (int l = 1; l <= Lh; ++l) {
      const MlpLayer& Ll = a.layer[l];
      row_forward(s.w(l), s.b(l), s.v(l - 1), Ll.in, Ll.out, Ll.relu, l == Lh ? s.z() : s.v(l), nullptr);
      __syncthreads();
    }
    if (threadIdx.x < 32) {
      const float p = row_softmax(lane < C ? s.z()[lane] : 0.f, C);
      if (lane < C) a.probs[static_cast<std::int64_t>(m) * C + lane] = p;
    }
    __syncthreads();
  }
}

// ---- Phase 3: weight gradients and SGD ---------------------------------------------
// Layer l's weight-gradient tile (the bias as an extra all-ones input
// column), each gradient applied at once: next = SGD(cur, gradient).
__device__ void weight_tile(const MlpArgs& a, int l, const float* cur, float* next, int rows, const float* x,
                            int job, float* smem) {
  const MlpLayer& L = a.layer[l];
  const int N = L.in + (L.bias ? 1 : 0);
  const int tn = mlp_cdiv(N, CfgWeight::TN);
  const int m0 = (job / tn) * CfgWeight::TM, n0 = (job % tn) * CfgWeight::TN;
  const int in = L.in;
  const std::int64_t w_off = L.w_off, b_off = L.b_off;
  float* mom = a.momentum;
  const ops::SgdConfig sgd = a.sgd;
  auto index = [=](int m, int n) { return n < in ? w_off + static_cast<std::int64_t>(m) * in + n : b_off + m; };
  // The update's operands (parameter, momentum) of this thread's runs of 4
  // outputs, loaded before the gradient's K loop so that their L2 round trip
  // hides under it rather than following it. in % 4 == 0 (match_mlp), so a
  // run is 4 weights of a row (one 16-byte load each) or starts at the bias
  // column (its first output the bias, the rest past the tile).
  using Cfg = CfgWeight;
  float4 p_cur[Cfg::kRuns], p_mom[Cfg::kRuns];
  const bool mom_on = sgd.momentum != 0.f;
  const float4 zero = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
  for (int run = 0; run < Cfg::kRuns; ++run) {
    const int o = 4 * (static_cast<int>(threadIdx.x) + run * kThreads), m = m0 + o / Cfg::TN, n = n0 + o % Cfg::TN;
    p_cur[run] = p_mom[run] = zero;
    if (m >= L.out || n >= N) continue;
    const std::int64_t i = index(m, n);
    if (n < in) {
      p_cur[run] = __ldcg(reinterpret_cast<const float4*>(cur + i));
      if (mom_on) p_mom[run] = __ldcg(reinterpret_cast<const float4*>(mom + i));
    } else {
      p_cur[run].x = ldf(cur + i);
      if (mom_on) p_mom[run].x = ldf(mom + i);
    }
  }
  auto epi = [&](int m, int n, float4 g, int run) {
    const std::int64_t i = index(m, n);
    float4 b = p_mom[run], p = p_cur[run];  // b updated in place
    p.x = sgd_value(p.x, g.x, b.x, sgd);
    if (n < in) {
      p.y = sgd_value(p.y, g.y, b.y, sgd);
      p.z = sgd_value(p.z, g.z, b.z, sgd);
      p.w = sgd_value(p.w, g.w, b.w, sgd);
      if (mom_on) *reinterpret_cast<float4*>(mom + i) = b;
      *reinterpret_cast<float4*>(next + i) = p;
    } else {
      if (mom_on) mom[i] = b.x;
      next[i] = p.x;
    }
  };
  const DenseT dz = dense_t(a.dz[l], L.out, -1);    // (j, i) = dz[l][i·out + j]
  const float* in_act = l == 0 ? x : a.act[l - 1];  // (rows, in)
  tile_gemm<CfgWeight>(L.out, N, rows, m0, n0, dz, dense_t(in_act, L.in, L.bias ? L.in : -1), epi, smem);
}

__device__ int weight_tiles(const MlpLayer& L) { return tiles<CfgWeight>(L.out, L.in + (L.bias ? 1 : 0)); }

__device__ void weights(const MlpArgs& a, const float* cur, float* next, int rows, const float* x, int step,
                        float* smem) {
  int n_w = 0;
  for (int q = 0; q < a.layers; ++q) n_w += weight_tiles(a.layer[q]);
  for (int job = blockIdx.x; job < n_w + 1; job += gridDim.x) {
    if (job < n_w) {
      int q = 0, j = job;  // layer q's tile j
      while (j >= weight_tiles(a.layer[q])) j -= weight_tiles(a.layer[q++]);
      weight_tile(a, q, cur, next, rows, x, j, smem);
    } else if (threadIdx.x < 32) {
      add_stats(a.stats, a.row_loss, a.row_correct, rows, step);
    }
  }
}

__global__ void __launch_bounds__(kThreads, 1) mlp_train_kernel(const __grid_constant__ MlpArgs a) {
  const RowSmem& rs = shared_row_smem(a);  // the row region, then the tiles' (rs.tiles())
  float* tiles_smem = rs.tiles();
  cg::grid_group grid = cg::this_grid();
  const int rows = a.rows;
  const bool has_row = static_cast<int>(blockIdx.x) < rows;
  const int splits = mlp_first_plan(rows, a.layer[0].out, a.layer[0].in, static_cast<int>(gridDim.x)).splits;
  const int step0 = *a.step;  // every block reads it before block 0 advances it
  __shared__ unsigned long long stage_bar;
  unsigned stage_uses = 0;
  init_stage_barrier(&stage_bar);
  grid.sync();
  for (int t = 0; t < a.steps; ++t) {
    const int step = step0 + t;
    const std::int64_t base = static_cast<std::int64_t>(step) * a.src.stride;
    const float* cur = a.params[t & 1];
    float* next = a.params[(t & 1) ^ 1];
    const int row = t < kPhaseSteps ? t : -1;
    int phase = 0;
    mark(a, row, phase);
    const float* x = step_batch(a, t);
    if (has_row) stage_fence(a, rs);
    mark(a, row, phase);  // issue (the fences; the copies are issued inside the first layer)
    // The row weights, issued once the first tile's loads are in flight; they land during the first layer.
    first_layer(a, cur, x, rows, tiles_smem, [&] {
      if (has_row) stage_issue(a, cur, rs, &stage_bar);
    });
    mark(a, row, phase);  // tiles
    grid.sync();
    mark(a, row, phase);  // barrier
    rows_train(a, rs, tiles_smem, rows, splits, base, &stage_bar, stage_uses, row, phase);
    grid.sync();
    mark(a, row, phase);  // barrier
    weights(a, cur, next, rows, x, step, tiles_smem);
    mark(a, row, phase);  // weights
    grid.sync();
    mark(a, row, phase);  // barrier
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
  const RowSmem& rs = shared_row_smem(a);
  cg::grid_group grid = cg::this_grid();
  const int splits = mlp_first_plan(a.rows, a.layer[0].out, a.layer[0].in, static_cast<int>(gridDim.x)).splits;
  __shared__ unsigned long long stage_bar;
  init_stage_barrier(&stage_bar);
  __syncthreads();
  int phase = 0;
  mark(a, kPhaseSteps, phase);
  const bool has_row = static_cast<int>(blockIdx.x) < a.rows;
  if (has_row) stage_fence(a, rs);
  first_layer(a, a.params[0], a.x, a.rows, rs.tiles(), [&] {
    if (has_row) stage_issue(a, a.params[0], rs, &stage_bar);
  });
  grid.sync();
  mark(a, kPhaseSteps, phase);
  rows_infer(a, rs, rs.tiles(), a.rows, splits, &stage_bar, phase);
  mark(a, kPhaseSteps, phase);  // forward: block 0's own end, not the grid's
}

void launch(const void* kernel, const CudaState* st, const MlpArgs& a, const Launch& l) {
  ROOFLINE_ASSERT(a.partial != nullptr, "fused-mlp: the partial-sum buffer is required");
  void* args[] = {const_cast<MlpArgs*>(&a)};
  CUDA_CHECK(cudaLaunchCooperativeKernel(kernel, dim3(static_cast<unsigned>(l.blocks)), dim3(kThreads), args, l.smem,
                                         stream_of(st)));
}

}  // namespace

std::size_t mlp_smem_bytes(const MlpArgs& a) {
  std::int64_t floats = CfgFirst::kSmemFloats;
  floats = std::max<std::int64_t>(floats, CfgWeight::kSmemFloats);
  floats = std::max<std::int64_t>(floats, kPartialRowFloats);
  floats += mlp_round4(mlp_row_floats(a.layer, a.layers));  // the row region, then the tiles' (RowSmem::tiles)
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

// Device code shared by the fused kernels: loads that are safe across grid
// barriers, warp reductions, the batch gather, the per-row loss, the SGD
// update and a small shared-memory tiled fp32 GEMM for one block.
#pragma once
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <cfloat>
#include <climits>
#include <cstdint>

#include "kernels/warp_softmax.cuh"
#include "src/engine/fused/fused_launch.hpp"

namespace roofline::engine::fused {

namespace cg = cooperative_groups;

constexpr unsigned kFull = kernels::kWarpMask;
constexpr int kWarps = kThreads / 32;

// Buffers written earlier in the same launch (by any block, before a grid
// barrier) are read through L2 only (ld.global.cg): a line another SM wrote
// must never come from this SM's L1. Read-only inputs (images, labels, order)
// may use the normal path.
__device__ __forceinline__ float ldf(const float* p) { return __ldcg(p); }
__device__ __forceinline__ std::int32_t ldi(const std::int32_t* p) { return __ldcg(p); }

using kernels::warp_sum;

__device__ __forceinline__ float relu(float v) { return v <= 0.f ? 0.f : v; }  // keeps NaN, as torch.relu

// The gather's normalisation, with the same float operations as
// ops::gather_batch (no FMA contraction), so the fused input equals the
// layer path's.
__device__ __forceinline__ float normalise(std::uint8_t pixel, float mean, float inv_std) {
  const float inv255 = static_cast<float>(1.0 / 255.0);
  return __fmul_rn(__fsub_rn(__fmul_rn(static_cast<float>(pixel), inv255), mean), inv_std);
}

// SGD with momentum on one parameter, the operations of the sgd kernel (no
// contraction into FMAs): g' = g + wd·p; buf = momentum·buf + g'; p −= lr·buf.
// On values: p and its momentum buffer (updated in place) already loaded;
// returns the new parameter.
__device__ __forceinline__ float sgd_value(float p, float g, float& buf, const ops::SgdConfig& c) {
  const float d = __fadd_rn(g, __fmul_rn(c.weight_decay, p));
  if (c.momentum != 0.f) {
    buf = __fadd_rn(__fmul_rn(c.momentum, buf), d);
    return __fsub_rn(p, __fmul_rn(c.lr, buf));
  }
  return __fsub_rn(p, __fmul_rn(c.lr, d));
}
// … and on the buffer in memory.
__device__ __forceinline__ float sgd_one(float p, float g, float* buf, const ops::SgdConfig& c) {
  float b = c.momentum != 0.f ? ldf(buf) : 0.f;
  const float next = sgd_value(p, g, b, c);
  if (c.momentum != 0.f) *buf = b;
  return next;
}

// Log-softmax + NLL of one row held by a warp (lane j < classes holds logit
// z), as ops::cross_entropy: first-index argmax, NaN anywhere makes the row
// NaN. Returns the lane's dlogit = grad_scale·(softmax − onehot) (0 for lanes
// ≥ classes); *loss and *correct are the row's (every lane gets them).
__device__ __forceinline__ float row_loss_grad(float z, int classes, int label, float grad_scale, float* loss,
                                               bool* correct) {
  const int lane = threadIdx.x % 32;
  const bool valid = lane < classes;
  float m = valid ? z : -FLT_MAX;
  int arg = valid ? lane : INT_MAX;
  bool nan = valid && isnan(z);
  const kernels::MaxAt row = kernels::warp_argmax(m, arg);
  m = row.m;
  arg = row.arg;
  nan = kernels::warp_nan_max(m, nan);
  const float lse = kernels::warp_logsumexp(m, valid ? expf(z - m) : 0.f);
  const float zl = __shfl_sync(kFull, z, label);
  *loss = lse - zl;
  *correct = !nan && arg == label;
  return valid ? grad_scale * (expf(z - lse) - (lane == label ? 1.f : 0.f)) : 0.f;
}

// softmax probability of lane j's logit (kernels/warp_softmax.cuh).
__device__ __forceinline__ float row_softmax(float z, int classes) { return kernels::warp_softmax(z, classes); }

// The step's statistics from the rows' losses (one warp): what
// ops::cross_entropy adds to LossStats, summed in a fixed order.
__device__ __forceinline__ void add_stats(const ops::LossStats& st, const float* row_loss,
                                          const std::int32_t* row_correct, int rows, int step) {
  const int lane = threadIdx.x % 32;
  double s = 0;
  int c = 0;
  for (int i = lane; i < rows; i += 32) {
    s += static_cast<double>(ldf(row_loss + i));
    c += ldi(row_correct + i);
  }
  s = warp_sum(s);
  c = warp_sum(c);
  if (lane == 0) {
    const float mean = static_cast<float>(s / static_cast<double>(rows));
    if (st.loss_sum) *st.loss_sum += s;
    if (st.correct) *st.correct += c;
    if (st.step_loss) st.step_loss[step] = mean;
    if (st.first_bad_step && !isfinite(mean) && step < *st.first_bad_step) *st.first_bad_step = step;
  }
}

// ---- A block's tiled GEMM ------------------------------------------------------
// C (TM × TN at m0, n0) = Σ_k A(m, k)·B(n, k), K split in chunks of KC staged
// in shared memory k-major; kThreads = KG groups (KG > 1) × (TM/RM)·(TN/RN)
// threads, each thread an RM × RN register tile over the k ≡ group (mod KG)
// of a chunk; the groups' partial tiles are summed in a fixed order, then
// epi(m, n, c, run) is called once per run of 4 outputs (m, n … n+3) whose
// first lies inside (M, N) — the epilogue checks n+1 … n+3 against N itself;
// c is a float4; run r of thread t is the tile's outputs 4·(t + r·kThreads)
// … +3, row-major. Deterministic. An operand has `float4 run(row, k, rows,
// k_end)`: the 4 values along its adjacent extent (kContig = consecutive k
// adjacent in memory, else consecutive rows are) from (row, k), zero past rows
// or k_end; that extent decides the coalesced staging order.
// A register tile of 8 along a dimension is two runs of 4, T/2 apart (thread t
// holds t·4 … t·4+3 and T/2 + t·4 …): eight threads' float4 reads of a stage
// row then cover 128 contiguous bytes, free of bank conflicts.
template <int TM_, int TN_, int RM_, int RN_, int KC_, int UNROLL_ = 1>
struct TileCfg {
  static constexpr int TM = TM_, TN = TN_, RM = RM_, RN = RN_, KC = KC_;
  static constexpr int kUnroll = UNROLL_;  // of the k loop: code size against latency hiding
  static constexpr int TX = TN / RN, TY = TM / RM, GROUP = TX * TY, KG = kThreads / GROUP;
  static constexpr int LDA = TM + 4, LDB = TN + 4;  // rows padded by 16 bytes (vector loads stay aligned)
  static constexpr int kStageFloats = KC * (LDA + LDB);
  static constexpr int kReduceFloats = KG * TM * TN;
  static constexpr int kRuns = TM * TN / (4 * kThreads);  // a thread's runs of 4 outputs in the epilogue
  static constexpr int kSmemFloats = kStageFloats > kReduceFloats ? kStageFloats : kReduceFloats;
  static_assert(TM % RM == 0 && TN % RN == 0 && kThreads % GROUP == 0, "tile shape");
  static_assert(RM == 1 || RM == 2 || RM == 4 || RM == 8, "register tile rows");
  static_assert(RN == 4 || RN == 8, "register tile columns (runs of 4 in the reduction)");
  static_assert(KG > 1 && TM * TN % (4 * kThreads) == 0, "the groups' reduction gives every thread whole runs");
  static_assert((RM != 8 || TM % 8 == 0) && (RN != 8 || TN % 8 == 0), "a tile of 8 splits its extent in halves");
};

// Where element i of thread t's register tile (R along an extent T) lies.
template <int R, int T>
__device__ __forceinline__ int reg_pos(int t, int i) {
  if constexpr (R == 8) return i < 4 ? t * 4 + i : T / 2 + t * 4 + (i - 4);
  return t * R + i;
}

// Thread t's R values of one stage row (row = the row's first float).
template <int R, int T>
__device__ __forceinline__ void load_vec(float (&v)[R], const float* row, int t) {
  if constexpr (R == 8) {
    const float4 q = *reinterpret_cast<const float4*>(row + t * 4);
    const float4 u = *reinterpret_cast<const float4*>(row + T / 2 + t * 4);
    v[0] = q.x, v[1] = q.y, v[2] = q.z, v[3] = q.w, v[4] = u.x, v[5] = u.y, v[6] = u.z, v[7] = u.w;
  } else if constexpr (R == 4) {
    const float4 q = *reinterpret_cast<const float4*>(row + t * 4);
    v[0] = q.x, v[1] = q.y, v[2] = q.z, v[3] = q.w;
  } else if constexpr (R == 2) {
    const float2 q = *reinterpret_cast<const float2*>(row + t * 2);
    v[0] = q.x, v[1] = q.y;
  } else {
    v[0] = row[t];
  }
}

// One operand's share of a K chunk (T rows × KC), held in registers between
// the loads and the shared-memory store so that a thread's loads are all in
// flight at once (an L2 round trip per chunk, not one per element) and the
// next chunk's loads overlap this chunk's arithmetic. Loaded in runs of 4
// floats adjacent in memory: one 16-byte load where the operand allows it, a
// quarter of the load instructions (a weight tile's chunk loads took 2598 →
// 1006 cycles on an H100; docs/perf-notes.md). Elements past
// `rows` or `kc` are zero.
template <int T, int KC, class Op>
struct Staged {
  static constexpr int kPer = T * KC / kThreads / 4;     // runs of 4 a thread
  static constexpr int kLine = (Op::kContig ? KC : T) / 4;  // runs along the extent adjacent in memory
  static_assert(T * KC % (4 * kThreads) == 0, "a chunk is whole rounds of the block");
  static_assert(kThreads % kLine == 0 || kLine % kThreads == 0, "a line is a fraction or a multiple of the block");
  float4 v[kPer];

  // Run i of this thread starts at (r, k): consecutive threads take
  // consecutive runs along the line (coalesced), with no division by a
  // run-time value.
  __device__ __forceinline__ static void place(int i, int& r, int& k) {
    int along, across;
    if constexpr (kThreads % kLine == 0) {
      along = static_cast<int>(threadIdx.x) % kLine;
      across = static_cast<int>(threadIdx.x) / kLine + i * (kThreads / kLine);
    } else {
      along = static_cast<int>(threadIdx.x) + (i % (kLine / kThreads)) * kThreads;
      across = i / (kLine / kThreads);
    }
    if constexpr (Op::kContig) {
      k = 4 * along;
      r = across;
    } else {
      r = 4 * along;
      k = across;
    }
  }
  __device__ __forceinline__ void load(const Op& op, int rows, int r0, int k0, int kc) {
#pragma unroll
    for (int i = 0; i < kPer; ++i) {
      int r, k;
      place(i, r, k);
      v[i] = op.run(r0 + r, k0 + k, rows, k0 + kc);
    }
  }
  template <int LD>
  __device__ __forceinline__ void store(float* s) const {
#pragma unroll
    for (int i = 0; i < kPer; ++i) {
      int r, k;
      place(i, r, k);
      if constexpr (Op::kContig) {  // the run is along k: four stage rows
        s[k * LD + r] = v[i].x;
        s[(k + 1) * LD + r] = v[i].y;
        s[(k + 2) * LD + r] = v[i].z;
        s[(k + 3) * LD + r] = v[i].w;
      } else {
        *reinterpret_cast<float4*>(s + k * LD + r) = v[i];  // LD, r multiples of 4
      }
    }
  }
};

struct NoHook {
  __device__ void operator()() const {}
};

// `hook` runs once, right after the first chunk's loads are issued (work
// that can overlap their round trip).
template <class Cfg, class OpA, class OpB, class Epi, class Hook = NoHook>
__device__ void tile_gemm(int M, int N, int K, int m0, int n0, const OpA& a_op, const OpB& b_op, const Epi& epi,
                          float* smem, const Hook& hook = Hook{}) {
  float* As = smem;                       // (KC, LDA)
  float* Bs = smem + Cfg::KC * Cfg::LDA;  // (KC, LDB)
  const int tid = threadIdx.x;
  const int g = tid / Cfg::GROUP, r = tid % Cfg::GROUP, ty = r / Cfg::TX, tx = r % Cfg::TX;
  float acc[Cfg::RM][Cfg::RN];
#pragma unroll
  for (int i = 0; i < Cfg::RM; ++i)
#pragma unroll
    for (int j = 0; j < Cfg::RN; ++j) acc[i][j] = 0.f;
  Staged<Cfg::TM, Cfg::KC, OpA> sa;
  Staged<Cfg::TN, Cfg::KC, OpB> sb;
  // One pass per chunk, plus one before the first that only loads it: the
  // next chunk's loads fly during this chunk's FMAs, and the load code
  // appears once (the fused kernels are large; instruction fetch counts).
  for (int k0 = -Cfg::KC; k0 < K; k0 += Cfg::KC) {
    if (k0 >= 0) {
      sa.template store<Cfg::LDA>(As);
      sb.template store<Cfg::LDB>(Bs);
      __syncthreads();
    }
    if (k0 + Cfg::KC < K) {
      const int kn = min(Cfg::KC, K - k0 - Cfg::KC);
      sa.load(a_op, M, m0, k0 + Cfg::KC, kn);
      sb.load(b_op, N, n0, k0 + Cfg::KC, kn);
    }
    if (k0 < 0) {
      hook();
      continue;
    }
    const int kc = min(Cfg::KC, K - k0);
#pragma unroll Cfg::kUnroll
    for (int kk = g; kk < kc; kk += Cfg::KG) {
      float av[Cfg::RM], bv[Cfg::RN];
      load_vec<Cfg::RM, Cfg::TM>(av, As + kk * Cfg::LDA, ty);
      load_vec<Cfg::RN, Cfg::TN>(bv, Bs + kk * Cfg::LDB, tx);
#pragma unroll
      for (int i = 0; i < Cfg::RM; ++i)
#pragma unroll
        for (int j = 0; j < Cfg::RN; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
    }
    __syncthreads();  // the stage buffers are rewritten next chunk (or reused below)
  }
  // The groups' partial tiles through shared memory (float4 stores: a
  // register tile's runs of 4 are adjacent there), then each thread's runs
  // of 4 outputs summed over the groups in order.
  float* red = smem;  // (KG, TM, TN)
#pragma unroll
  for (int i = 0; i < Cfg::RM; ++i)
#pragma unroll
    for (int j = 0; j < Cfg::RN; j += 4)
      *reinterpret_cast<float4*>(red + (g * Cfg::TM + reg_pos<Cfg::RM, Cfg::TM>(ty, i)) * Cfg::TN +
                                 reg_pos<Cfg::RN, Cfg::TN>(tx, j)) =
          make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]);
  __syncthreads();
#pragma unroll  // every run's epilogue loads in flight together (the SGD update reads two runs each)
  for (int run = 0; run < Cfg::kRuns; ++run) {
    const int o = 4 * (tid + run * kThreads), m = o / Cfg::TN, n = o - m * Cfg::TN;
    float4 s = make_float4(0.f, 0.f, 0.f, 0.f);
    for (int q = 0; q < Cfg::KG; ++q) {
      const float4 p = *reinterpret_cast<const float4*>(red + q * Cfg::TM * Cfg::TN + o);
      s.x += p.x, s.y += p.y, s.z += p.z, s.w += p.w;
    }
    if (m0 + m < M && n0 + n < N) epi(m0 + m, n0 + n, s, run);
  }
  __syncthreads();  // red is the next job's stage buffer
}

// Operands. Dense: op(r, k) = p[r·ld + k] (k contiguous). DenseT: op(r, k) =
// p[k·ld + r] (rows contiguous), with an all-ones column at r == ones_at
// (the bias as an extra input column of a weight gradient; −1: none). `vec`:
// p is 16-byte aligned and ld a multiple of 4, so a whole run inside the
// operand is one 16-byte load (make with dense() / dense_t()).
__device__ __forceinline__ bool vec_ok(const float* p, int ld) {
  return ld % 4 == 0 && reinterpret_cast<std::uintptr_t>(p) % 16 == 0;
}
struct Dense {
  static constexpr bool kContig = true;
  const float* p;
  int ld;
  bool vec;
  __device__ float4 run(int r, int k, int rows, int k_end) const {
    if (r >= rows) return make_float4(0.f, 0.f, 0.f, 0.f);
    const float* q = p + static_cast<std::int64_t>(r) * ld + k;
    if (vec && k + 4 <= k_end) return __ldcg(reinterpret_cast<const float4*>(q));
    return make_float4(k < k_end ? ldf(q) : 0.f, k + 1 < k_end ? ldf(q + 1) : 0.f, k + 2 < k_end ? ldf(q + 2) : 0.f,
                       k + 3 < k_end ? ldf(q + 3) : 0.f);
  }
};
__device__ __forceinline__ Dense dense(const float* p, int ld) { return Dense{p, ld, vec_ok(p, ld)}; }
struct DenseT {
  static constexpr bool kContig = false;
  const float* p;
  int ld;
  int ones_at;
  bool vec;
  __device__ float4 run(int r, int k, int rows, int k_end) const {
    if (k >= k_end) return make_float4(0.f, 0.f, 0.f, 0.f);
    const float* q = p + static_cast<std::int64_t>(k) * ld + r;
    if (vec && r + 4 <= rows && (ones_at < 0 || r + 4 <= ones_at)) return __ldcg(reinterpret_cast<const float4*>(q));
    auto at = [&](int e) { return r + e >= rows ? 0.f : r + e == ones_at ? 1.f : ldf(q + e); };
    return make_float4(at(0), at(1), at(2), at(3));
  }
};
__device__ __forceinline__ DenseT dense_t(const float* p, int ld, int ones_at) {
  return DenseT{p, ld, ones_at, vec_ok(p, ld)};
}
}  // namespace roofline::engine::fused

// Shared-memory tiled 2-D convolution (stride 1, fp32, NCHW): the second rung
// of the ECE408 ladder, and the engine's CUDA convolution wherever it applies
// (conv2d_direct.cuh stays the general path and the reference these are
// checked against on the GPU).
//
// conv2d_tiled: a block = 256 thread slots of one image (PX output pixels
// each, in one row) × KB output channels. The input rows those pixels need
// (all input channels, zero-padded) and the block's weights are staged in
// shared memory; each thread keeps PX pixels × KB channels in registers, the
// KB weights of a tap read as float4 broadcasts. With CS > 1 (few blocks: a
// small batch) the 256 threads are CS groups of 256 / CS pixel slots, group g
// summing input channels g·⌈ci/CS⌉ … into its own partial sums; group 0 adds
// the others' in order (deterministic) and writes — a thread's chain of
// ci·r·s taps is CS times shorter and the grid CS times wider. With FLIP it computes the input gradient: the
// output gradient convolved with the weights flipped and transposed
// (pad' = kernel − 1 − pad), so one kernel serves both passes.
//
// conv2d_wgrad_partial + conv2d_wgrad_reduce: the weight (and bias)
// gradient. A block takes a slice of output rows of some images (blocks loop
// when there are more images than blocks), stages those rows' input and KB
// channels of their output gradient, and each thread owns one (c, r, s) tap —
// or the bias, whose "input" is 1 — for KB output channels over a share of the
// rows; the shares are summed in a fixed order into a per-block partial, and
// the partials are summed over blocks in a fixed order. Deterministic: no
// atomics.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/async_copy.cuh"

// nvcc's unroll pragma, and nothing where a host compiler reads these kernels
// (tests/cpu/test_conv_tiled_emulated.cpp runs them on the CPU).
#ifdef __CUDACC__
#define CONV_TILED_UNROLL _Pragma("unroll")
#else
#define CONV_TILED_UNROLL
#endif

namespace roofline::kernels {

constexpr int kConvThreads = 256;

__host__ __device__ constexpr int conv_round4(int n) { return (n + 3) / 4 * 4; }

// "in" (n, ci, ih, iw) → "out" (n, co, oh, ow), kernel r × s, stride 1,
// padding ph, pw: oh = ih + 2·ph − r + 1.
struct TiledConvDims {
  int n, ci, ih, iw;
  int co, oh, ow;
  int r, s, ph, pw;
};

// Threads take PX output pixels of one row, strided by the row's thread
// count G = ⌈ow / PX⌉ (pixels x0, x0 + G, …: a warp's lanes read adjacent
// words, so no bank conflicts); PX > 1 amortises each tap's weight load over
// PX pixels (conv 1→4 7×7 at PX 1 issued an LDS and an LDS.128 per 4 FMAs).
// A block has kConvThreads / CS pixel slots (CS channel groups, above).
__host__ __device__ constexpr int tiled_cols(int ow, int px) { return (ow + px - 1) / px; }
__host__ __device__ constexpr int tiled_slots(int cs) { return kConvThreads / cs; }
// The most output rows a block's consecutive pixel slots of one image can touch.
__host__ __device__ constexpr int tiled_rows_max(int oh, int ow, int px = 1, int cs = 1) {
  const int rows = (tiled_slots(cs) - 1) / tiled_cols(ow, px) + 2;
  return rows < oh ? rows : oh;
}
// Shared memory of conv2d_tiled (floats): the input rows, then the weights,
// then (CS > 1) the groups' partial sums.
__host__ __device__ constexpr int tiled_in_floats(const TiledConvDims& d, int px = 1, int cs = 1) {
  return conv_round4(d.ci * (tiled_rows_max(d.oh, d.ow, px, cs) + d.r - 1) * (d.ow + d.s - 1));
}
template <int KB, int PX = 1, int CS = 1>
__host__ __device__ constexpr int tiled_smem_floats(const TiledConvDims& d) {
  return tiled_in_floats(d, PX, CS) + d.ci * d.r * d.s * KB + (CS > 1 ? kConvThreads * PX * KB : 0);
}
// Grid x of conv2d_tiled: blocks of tiled_slots(cs) pixel slots over an image's oh · G.
__host__ __device__ constexpr int tiled_blocks_x(const TiledConvDims& d, int px, int cs = 1) {
  return (d.oh * tiled_cols(d.ow, px) + tiled_slots(cs) - 1) / tiled_slots(cs);
}

// Stages output channels k0 … k0+KB−1's weights into w_s (ci, r, s, KB),
// zero past co, every copy in flight (threads t, t + nthreads, …). FLIP false:
// w (co, ci, r, s) at (k, c, rr, ss); FLIP true: w is the forward layer's
// (ci, co, r, s), read at (c, k, r − 1 − rr, s − 1 − ss). Shared by the tiled
// and register-tiled kernels; copy_async_wait_all and a barrier follow.
template <int KB, bool FLIP>
__device__ void stage_conv_weights(float* w_s, const float* w, const TiledConvDims& d, int k0, int t, int nthreads) {
  const int taps = d.r * d.s;
  for (int i = t; i < d.ci * taps * KB; i += nthreads) {
    const int kk = i % KB, crs = i / KB;  // crs = (c · r + rr) · s + ss
    const int k = k0 + kk;
    const float* wp = w;
    if (k < d.co) {
      if (FLIP) {
        const int c = crs / taps, rs = crs - c * taps;
        wp += (c * d.co + k) * taps + (taps - 1 - rs);
      } else {
        wp += k * d.ci * taps + crs;
      }
    }
    copy_async_f32(w_s + i, wp, k < d.co);
  }
}

// out (n, co, oh, ow) = act(Σ in ⋆ w + b). Weights: FLIP false: w (co, ci, r, s);
// FLIP true: w is the forward layer's (ci, co, r, s), used flipped.
// Grid: (tiled_blocks_x(d, PX, CS), ceil(co / KB), n); dynamic shared memory
// tiled_smem_floats<KB, PX, CS>(d) floats.
template <int KB, int PX, bool FLIP, int CS = 1>
__global__ void __launch_bounds__(kConvThreads)
    conv2d_tiled(TiledConvDims d, float* __restrict__ out, const float* __restrict__ in, const float* __restrict__ w,
                 const float* __restrict__ b, bool relu) {
  static_assert(KB % 4 == 0, "weights are read as float4");
  static_assert(kConvThreads % CS == 0, "whole groups of pixel slots");
  constexpr int SL = kConvThreads / CS;  // pixel slots per block
  extern __shared__ float4 conv_smem4[];
  float* sm = reinterpret_cast<float*>(conv_smem4);
  const int plane = d.oh * d.ow;
  const int G = tiled_cols(d.ow, PX);
  const int p0 = static_cast<int>(blockIdx.x) * SL;  // first pixel slot (row · G + column)
  const int k0 = static_cast<int>(blockIdx.y) * KB;
  const int img = static_cast<int>(blockIdx.z);
  const int y_first = p0 / G;
  const int y_last = min(d.oh - 1, (p0 + SL - 1) / G);
  const int nrows = y_last - y_first + d.r, ncols = d.ow + d.s - 1;
  float* in_s = sm;                                    // (ci, nrows, ncols)
  float* w_s = sm + tiled_in_floats(d, PX, CS);        // (ci, r, s, KB)
  float* part_s = w_s + d.ci * d.r * d.s * KB;         // CS > 1: (CS, SL, PX, KB)
  const int tile = nrows * ncols;
  const float* src = in + static_cast<std::int64_t>(img) * d.ci * d.ih * d.iw;
  for (int i = threadIdx.x; i < d.ci * tile; i += kConvThreads) {
    const int c = i / tile, rem = i - c * tile, lr = rem / ncols, lc = rem - lr * ncols;
    const int iy = y_first - d.ph + lr, ix = lc - d.pw;
    const bool inside = iy >= 0 && iy < d.ih && ix >= 0 && ix < d.iw;
    copy_async_f32(in_s + i, inside ? src + (c * d.ih + iy) * d.iw + ix : src, inside);
  }
  stage_conv_weights<KB, FLIP>(w_s, w, d, k0, static_cast<int>(threadIdx.x), kConvThreads);
  copy_async_wait_all();
  const int taps = d.r * d.s;
  __syncthreads();
  const int slot = static_cast<int>(threadIdx.x) % SL, group = static_cast<int>(threadIdx.x) / SL;
  const int p = p0 + slot;
  const bool active = p < d.oh * G;
  if (CS == 1 && !active) return;  // no barrier follows
  const int y = active ? p / G : y_first, x0 = active ? p - y * G : 0, ly = y - y_first;
  int xs[PX];  // this thread's pixels; one past the row reads pixel x0's inputs and is not written
  CONV_TILED_UNROLL
  for (int q = 0; q < PX; ++q) xs[q] = x0 + q * G < d.ow ? x0 + q * G : x0;
  float acc[PX][KB];
  CONV_TILED_UNROLL
  for (int q = 0; q < PX; ++q)
    CONV_TILED_UNROLL
  for (int kk = 0; kk < KB; ++kk) acc[q][kk] = 0.f;
  const int per_group = (d.ci + CS - 1) / CS;
  const int c_begin = group * per_group, c_end = min(d.ci, c_begin + per_group);
  for (int c = c_begin; c < c_end; ++c)
    for (int rr = 0; rr < d.r; ++rr) {
      const float* row = in_s + (c * nrows + ly + rr) * ncols;
      const float* wr = w_s + (c * taps + rr * d.s) * KB;
      for (int ss = 0; ss < d.s; ++ss) {
        float v[PX];
        CONV_TILED_UNROLL
        for (int q = 0; q < PX; ++q) v[q] = row[xs[q] + ss];
        CONV_TILED_UNROLL
        for (int qk = 0; qk < KB / 4; ++qk) {
          const float4 wv = reinterpret_cast<const float4*>(wr + ss * KB)[qk];
          CONV_TILED_UNROLL
          for (int q = 0; q < PX; ++q) {
            acc[q][4 * qk + 0] = fmaf(v[q], wv.x, acc[q][4 * qk + 0]);
            acc[q][4 * qk + 1] = fmaf(v[q], wv.y, acc[q][4 * qk + 1]);
            acc[q][4 * qk + 2] = fmaf(v[q], wv.z, acc[q][4 * qk + 2]);
            acc[q][4 * qk + 3] = fmaf(v[q], wv.w, acc[q][4 * qk + 3]);
          }
        }
      }
    }
  if (CS > 1) {  // the groups' partial sums meet in group 0, added in group order
    float* mine = part_s + (group * SL + slot) * PX * KB;
    if (group > 0) {
      CONV_TILED_UNROLL
      for (int q = 0; q < PX; ++q)
        CONV_TILED_UNROLL
      for (int kk = 0; kk < KB; ++kk) mine[q * KB + kk] = acc[q][kk];
    }
    __syncthreads();
    if (group > 0 || !active) return;
    for (int g = 1; g < CS; ++g) {
      const float* other = part_s + (g * SL + slot) * PX * KB;
      CONV_TILED_UNROLL
      for (int q = 0; q < PX; ++q)
        CONV_TILED_UNROLL
      for (int kk = 0; kk < KB; ++kk) acc[q][kk] += other[q * KB + kk];
    }
  }
  float* dst = out + static_cast<std::int64_t>(img) * d.co * plane + y * d.ow;
  CONV_TILED_UNROLL
  for (int q = 0; q < PX; ++q) {
    const int x = x0 + q * G;
    if (x >= d.ow) break;
    CONV_TILED_UNROLL
    for (int kk = 0; kk < KB; ++kk) {
      const int k = k0 + kk;
      if (k >= d.co) break;
      const float v = acc[q][kk] + (b ? b[k] : 0.f);
      dst[static_cast<std::int64_t>(k) * plane + x] = relu ? (v <= 0.f ? 0.f : v) : v;
    }
  }
}

// ---- weight gradient ------------------------------------------------------------
// in (n, c, h, w), dout (n, k, oh, ow), stride 1, padding ph, pw.
struct WgradDims {
  int n, c, h, w;
  int k, oh, ow;
  int r, s, ph, pw;
  int combos;  // c·r·s + 1: every tap, then the bias
  int groups;  // threads per tap, each over the rows y ≡ y0 + group (mod groups)
  int rows;    // output rows per slice (grid z): ceil(oh / gridDim.z)
};

// A slice's input rows (c, rows + r − 1, w + 2·pw), then its output gradient
// (rows·ow, KB) or the reduction (groups, combos, KB), whichever is larger.
__host__ __device__ constexpr int wgrad_in_floats(const WgradDims& d) {
  return conv_round4(d.c * (d.rows + d.r - 1) * (d.w + 2 * d.pw));
}
template <int KB>
__host__ __device__ constexpr int wgrad_smem_floats(const WgradDims& d) {
  const int dout = d.rows * d.ow * KB, red = d.groups * d.combos * KB;
  return wgrad_in_floats(d) + (dout > red ? dout : red);
}

// partial (gridDim.z · gridDim.x, ceil(k / KB), combos, KB): block (x, y, z)'s
// sums over its images x, x + gridDim.x, … and its slice of output rows
// [z·rows, min(oh, (z + 1)·rows)) (the slices give small batches enough
// blocks). Grid: (image blocks, ceil(k / KB), slices); requires
// groups·combos ≤ 256 and groups ≤ rows.
template <int KB>
__global__ void __launch_bounds__(kConvThreads)
    conv2d_wgrad_partial(WgradDims d, float* __restrict__ partial, const float* __restrict__ in,
                         const float* __restrict__ dout) {
  static_assert(KB % 4 == 0, "output gradients are read as float4");
  extern __shared__ float4 conv_smem4[];
  float* sm = reinterpret_cast<float*>(conv_smem4);
  const int wp = d.w + 2 * d.pw, plane = d.oh * d.ow, taps = d.r * d.s;
  const int k0 = static_cast<int>(blockIdx.y) * KB;
  const int y0 = static_cast<int>(blockIdx.z) * d.rows, y1 = min(d.oh, y0 + d.rows);
  const int nr = y1 > y0 ? y1 - y0 : 0;  // this slice's output rows (0: it only writes zeros)
  const int hs = d.rows + d.r - 1;       // input rows per channel in shared memory
  const int hn = nr > 0 ? nr + d.r - 1 : 0;
  float* in_s = sm;                      // (c, hs, wp): padded input rows y0 …, zero border
  float* d_s = sm + wgrad_in_floats(d);  // (nr·ow, KB); after the images: (groups, combos, KB)
  const int item = static_cast<int>(threadIdx.x);
  const bool active = item < d.groups * d.combos;
  const int g = active ? item / d.combos : 0, combo = active ? item - g * d.combos : 0;
  const bool bias = combo == d.c * taps;
  const int ci = bias ? 0 : combo / taps, rs = bias ? 0 : combo - ci * taps, rr = rs / d.s, ss = rs - rr * d.s;
  float acc[KB];
  CONV_TILED_UNROLL
  for (int kk = 0; kk < KB; ++kk) acc[kk] = 0.f;
  for (int img = blockIdx.x; img < d.n; img += gridDim.x) {
    __syncthreads();  // the previous image is no longer read
    const float* src = in + static_cast<std::int64_t>(img) * d.c * d.h * d.w;
    for (int i = threadIdx.x; i < d.c * hn * wp; i += kConvThreads) {
      const int c = i / (hn * wp), rem = i - c * hn * wp, ly = rem / wp, lx = rem - ly * wp;
      const int y = y0 + ly - d.ph, x = lx - d.pw;
      const bool inside = y >= 0 && y < d.h && x >= 0 && x < d.w;
      copy_async_f32(in_s + (c * hs + ly) * wp + lx, inside ? src + (c * d.h + y) * d.w + x : src, inside);
    }
    const float* gsrc = dout + static_cast<std::int64_t>(img) * d.k * plane + y0 * d.ow;
    const int span = nr * d.ow;
    for (int i = threadIdx.x; i < KB * span; i += kConvThreads) {
      const int kk = i / span, e = i - kk * span, k = k0 + kk;  // coalesced reads along e
      copy_async_f32(d_s + e * KB + kk, k < d.k ? gsrc + static_cast<std::int64_t>(k) * plane + e : gsrc, k < d.k);
    }
    copy_async_wait_all();
    __syncthreads();
    if (!active) continue;
    for (int ly = g; ly < nr; ly += d.groups) {
      const float* irow = in_s + (ci * hs + ly + rr) * wp + ss;
      const float* drow = d_s + ly * d.ow * KB;
      for (int x = 0; x < d.ow; ++x) {
        const float v = bias ? 1.f : irow[x];
        CONV_TILED_UNROLL
        for (int q = 0; q < KB / 4; ++q) {
          const float4 gv = reinterpret_cast<const float4*>(drow + x * KB)[q];
          acc[4 * q + 0] = fmaf(gv.x, v, acc[4 * q + 0]);
          acc[4 * q + 1] = fmaf(gv.y, v, acc[4 * q + 1]);
          acc[4 * q + 2] = fmaf(gv.z, v, acc[4 * q + 2]);
          acc[4 * q + 3] = fmaf(gv.w, v, acc[4 * q + 3]);
        }
      }
    }
  }
  __syncthreads();
  float* red = d_s;  // (groups, combos, KB)
  if (active) {
    CONV_TILED_UNROLL
    for (int kk = 0; kk < KB; ++kk) red[item * KB + kk] = acc[kk];
  }
  __syncthreads();
  float* part = partial + ((static_cast<std::int64_t>(blockIdx.z) * gridDim.x + blockIdx.x) * gridDim.y + blockIdx.y) *
                              d.combos * KB;
  for (int o = threadIdx.x; o < d.combos * KB; o += kConvThreads) {
    float s = 0.f;
    for (int q = 0; q < d.groups; ++q) s += red[q * d.combos * KB + o];
    part[o] = s;
  }
}

// dw (k, c, r, s) and db (k) or null: Σ over the `parts` (= gridDim.z ·
// gridDim.x of the partial kernel) partials. A warp per output (there may be
// hundreds of partials: one thread each would be a long chain of L2 loads):
// lane l sums partials l, l + 32, … in order, then a shuffle tree in a fixed
// order, so the result is the same on every run. blockDim a multiple of 32.
__global__ void conv2d_wgrad_reduce(WgradDims d, int parts, int kb, float* __restrict__ dw, float* __restrict__ db,
                                    const float* __restrict__ partial) {
  const int kgroups = (d.k + kb - 1) / kb;
  const int total = d.k * d.combos;
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int warps = static_cast<int>(gridDim.x * blockDim.x) >> 5;
  // o is the same for a whole warp, so every lane takes part in each shuffle.
  for (int o = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x) >> 5; o < total; o += warps) {
    const int k = o / d.combos, combo = o - k * d.combos, g = k / kb, kk = k - g * kb;
    float s = 0.f;
    for (int p = lane; p < parts; p += 32)
      s += partial[((static_cast<std::int64_t>(p) * kgroups + g) * d.combos + combo) * kb + kk];
    CONV_TILED_UNROLL
    for (int off = 16; off > 0; off >>= 1) s += __shfl_down_sync(0xffffffffu, s, off);
    if (lane != 0) continue;
    if (combo < d.combos - 1)
      dw[static_cast<std::int64_t>(k) * (d.combos - 1) + combo] = s;
    else if (db)
      db[k] = s;
  }
}

}  // namespace roofline::kernels

// Register-tiled 2-D convolution (stride 1, fp32, NCHW): the third rung of
// the ECE408 ladder after conv2d_tiled.cuh, for kernels S = 3, 5 or 7 wide.
//
// Why: conv2d_tiled reads a tap's weights (an LDS.128 per 4 channels) and
// each pixel's input (an LDS) for every tap, so a 16-channel block loads 17
// registers per 16 FMAs. An SM returns one warp-register of shared memory per
// clock but issues four warp-FMAs, so that kernel is load-bound (ece408's
// conv2 forward at 45% of the FMA rate, ncu, H100, 2026-11-24).
//
// How: a thread owns a register tile of R output rows × 4 adjacent pixels ×
// KB output channels. For each (input channel, kernel row) it loads its R
// input windows of 4 + S − 1 floats (as float4s: the window starts at a
// multiple of 4 and the shared rows are padded to one), then walks the S
// taps along the row from registers, reading each tap's KB weights once as
// warp-uniform float4 broadcasts: R · W/4 + S · KB/4 loads feed
// S · KB · 4 · R FMAs (R = 1, KB = 8: 17 loads per 224 FMAs, 7 times fewer
// loaded registers per FMA than conv2d_tiled's 16-channel blocks).
//
// A block = an image's band of output row groups × one group of KB output
// channels; thread t takes row group t / G and pixel group t mod G of the
// band (G = ⌈ow / 4⌉), so a warp's lanes share weights and read consecutive
// 16-byte words of a row. With FLIP it computes the input gradient (the
// output gradient convolved with the weights flipped and transposed), as
// conv2d_tiled does. The summation order over (channel, row, column) is the
// same as conv2d_tiled's, one fmaf at a time.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/async_copy.cuh"
#include "kernels/conv2d_tiled.cuh"

namespace roofline::kernels {

constexpr int kRegTilePixels = 4;       // adjacent output pixels per thread
constexpr int kRegTileMaxThreads = 256;  // launch bound; the launcher uses fewer

// Floats of one thread's input window: 4 + S − 1, rounded up to float4s.
__host__ __device__ constexpr int regtile_window(int s) { return conv_round4(kRegTilePixels + s - 1); }
// Pixel groups per output row.
__host__ __device__ constexpr int regtile_cols(int ow) { return (ow + kRegTilePixels - 1) / kRegTilePixels; }
// Shared row length (floats): the last group's window ends there; a multiple of 4.
__host__ __device__ constexpr int regtile_ncols(int ow, int s) {
  return (regtile_cols(ow) - 1) * kRegTilePixels + regtile_window(s);
}

// The launch geometry: `band` row groups of R rows per block.
struct RegTileDims {
  TiledConvDims d;
  int band;  // row groups per block; blockDim.x ≥ band · regtile_cols(ow), a multiple of 32
};
__host__ __device__ constexpr int regtile_in_rows(const RegTileDims& g, int rows_per_group) {
  return g.band * rows_per_group + g.d.r - 1;
}
// Shared memory (floats): the input rows (ci, in_rows, ncols), then the weights (ci, r, S, KB).
template <int KB, int R>
__host__ __device__ constexpr int regtile_smem_floats(const RegTileDims& g) {
  return g.d.ci * regtile_in_rows(g, R) * regtile_ncols(g.d.ow, g.d.s) + g.d.ci * g.d.r * g.d.s * KB;
}
// Grid x: bands of row groups over the image's ⌈oh / R⌉ groups.
template <int R>
__host__ __device__ constexpr int regtile_bands(const RegTileDims& g) {
  return ((g.d.oh + R - 1) / R + g.band - 1) / g.band;
}

// Shared memory of the pooled epilogue (floats): each row of the band, its
// pixels max-pooled along the row (G · 4 / P per row), KB channels each.
template <int KB, int P>
__host__ __device__ constexpr int regtile_pool_floats(const RegTileDims& g) {
  return g.band * regtile_cols(g.d.ow) * (kRegTilePixels / P) * KB;
}

__device__ inline float regtile_max(float m, float v) { return v > m || v != v ? v : m; }  // NaN wins, as the pool

// The pooled epilogue: act(acc + b) max-pooled along the row in registers,
// staged in shared memory (over the input tile: every thread is past its
// reads at the first barrier), then max-pooled over P rows and written.
template <int KB, int P>
__device__ void regtile_pool_epilogue(const RegTileDims& g, const float (&acc)[kRegTilePixels][KB],
                                      float* __restrict__ out, const float* __restrict__ b, bool relu, bool active,
                                      int y_first, int k0, int img, int t, int lg, int cg, int nthreads) {
  constexpr int HP = kRegTilePixels / P;  // pooled columns per thread
  const TiledConvDims& d = g.d;
  extern __shared__ float4 conv_smem4[];
  float* hp = reinterpret_cast<float*>(conv_smem4);  // (band rows, G · HP, KB)
  const int pcols = regtile_cols(d.ow) * HP;
  __syncthreads();
  if (active) {
    CONV_TILED_UNROLL
    for (int kk = 0; kk < KB; ++kk) {
      const float bias = b && k0 + kk < d.co ? b[k0 + kk] : 0.f;
      CONV_TILED_UNROLL
      for (int j = 0; j < HP; ++j) {
        float m = 0.f;
        CONV_TILED_UNROLL
        for (int p = 0; p < P; ++p) {
          float v = acc[j * P + p][kk] + bias;
          if (relu) v = v <= 0.f ? 0.f : v;
          m = p == 0 ? v : regtile_max(m, v);
        }
        hp[((lg * pcols) + cg * HP + j) * KB + kk] = m;
      }
    }
  }
  __syncthreads();
  const int prows = g.band / P, oh_p = d.oh / P, ow_p = d.ow / P, py0 = y_first / P;
  const int per_k = prows * pcols;
  for (int o = t; o < KB * per_k; o += nthreads) {  // along pooled rows: coalesced writes
    const int kk = o / per_k, rem = o - kk * per_k, pr = rem / pcols, pc = rem - pr * pcols;
    const int k = k0 + kk, py = py0 + pr;
    if (k >= d.co || py >= oh_p || pc >= ow_p) continue;
    float m = hp[(pr * P * pcols + pc) * KB + kk];
    CONV_TILED_UNROLL
    for (int q = 1; q < P; ++q) m = regtile_max(m, hp[((pr * P + q) * pcols + pc) * KB + kk]);
    out[((static_cast<std::int64_t>(img) * d.co + k) * oh_p + py) * ow_p + pc] = m;
  }
}

// out (n, co, oh, ow) = act(Σ in ⋆ w + b). Weights: FLIP false: w (co, ci, r, S);
// FLIP true: w is the forward layer's (ci, co, r, S), used flipped.
// Grid: (regtile_bands<R>(g), ⌈co / KB⌉, n); dynamic shared memory
// regtile_smem_floats<KB, R>(g) floats; requires g.d.s == S.
//
// P > 1 (inference): the output max-pooled in P × P windows with stride P
// (PyTorch's floor mode), act before the pool, and only the pooled
// (n, co, oh / P, ow / P) written: g.d.oh and g.d.ow are then the rows and
// columns the pool reads (multiples of P, at most the convolution's), g.band
// a multiple of P, and the shared memory at least regtile_pool_floats<KB, P>.
template <int KB, int R, int S, bool FLIP, int P = 1>
__global__ void __launch_bounds__(kRegTileMaxThreads)
    conv2d_regtile(RegTileDims g, float* __restrict__ out, const float* __restrict__ in, const float* __restrict__ w,
                   const float* __restrict__ b, bool relu) {
  static_assert(KB % 4 == 0, "weights are read as float4");
  static_assert(P == 1 || (R == 1 && !FLIP && kRegTilePixels % P == 0), "pooled: one row per thread, forward only");
  constexpr int PX = kRegTilePixels, W = regtile_window(S);
  const TiledConvDims& d = g.d;
  extern __shared__ float4 conv_smem4[];
  float* sm = reinterpret_cast<float*>(conv_smem4);
  const int G = regtile_cols(d.ow), ncols = regtile_ncols(d.ow, S), nrows = regtile_in_rows(g, R);
  const int y_first = static_cast<int>(blockIdx.x) * g.band * R;  // first output row of the band
  const int k0 = static_cast<int>(blockIdx.y) * KB;
  const int img = static_cast<int>(blockIdx.z);
  const int nthreads = static_cast<int>(blockDim.x);
  float* in_s = sm;                                // (ci, nrows, ncols), zero outside the image
  float* w_s = sm + d.ci * nrows * ncols;          // (ci, r, S, KB)
  // Stage the input rows (a warp per row, lanes along it: no division per
  // element) and the weights, all copies in flight at once.
  const float* src = in + static_cast<std::int64_t>(img) * d.ci * d.ih * d.iw;
  const int lane = static_cast<int>(threadIdx.x) & 31, warps = nthreads >> 5;
  for (int row = static_cast<int>(threadIdx.x) >> 5; row < d.ci * nrows; row += warps) {
    const int c = row / nrows, iy = y_first - d.ph + (row - c * nrows);
    const bool row_in = iy >= 0 && iy < d.ih;
    const float* srow = src + (c * d.ih + (row_in ? iy : 0)) * d.iw;
    float* drow = in_s + row * ncols;
    for (int lc = lane; lc < ncols; lc += 32) {
      const int ix = lc - d.pw;
      const bool inside = row_in && ix >= 0 && ix < d.iw;
      copy_async_f32(drow + lc, inside ? srow + ix : src, inside);
    }
  }
  stage_conv_weights<KB, FLIP>(w_s, w, d, k0, static_cast<int>(threadIdx.x), nthreads);
  copy_async_wait_all();
  const int taps = d.r * S;
  __syncthreads();
  const int t = static_cast<int>(threadIdx.x);
  const int lg = t / G, cg = t - lg * G;  // row group within the band, pixel group
  const int y0 = y_first + lg * R;        // this thread's first output row
  const bool active = lg < g.band && y0 < d.oh;
  if constexpr (P == 1) {
    if (!active) return;  // no barrier follows
  }
  float acc[R][PX][KB];
  CONV_TILED_UNROLL
  for (int q = 0; q < R; ++q)
    CONV_TILED_UNROLL
  for (int p = 0; p < PX; ++p)
    CONV_TILED_UNROLL
  for (int kk = 0; kk < KB; ++kk) acc[q][p][kk] = 0.f;
  for (int c = 0; c < (active ? d.ci : 0); ++c)
    for (int rr = 0; rr < d.r; ++rr) {
      float win[R][W];
      CONV_TILED_UNROLL
      for (int q = 0; q < R; ++q) {
        const float4* row = reinterpret_cast<const float4*>(in_s + (c * nrows + lg * R + q + rr) * ncols + cg * PX);
        CONV_TILED_UNROLL
        for (int j = 0; j < W / 4; ++j) {
          const float4 v = row[j];
          win[q][4 * j + 0] = v.x;
          win[q][4 * j + 1] = v.y;
          win[q][4 * j + 2] = v.z;
          win[q][4 * j + 3] = v.w;
        }
      }
      const float4* wr = reinterpret_cast<const float4*>(w_s + (c * taps + rr * S) * KB);
      CONV_TILED_UNROLL
      for (int ss = 0; ss < S; ++ss)
        CONV_TILED_UNROLL
      for (int qk = 0; qk < KB / 4; ++qk) {
        const float4 wv = wr[ss * (KB / 4) + qk];
        CONV_TILED_UNROLL
        for (int q = 0; q < R; ++q)
          CONV_TILED_UNROLL
        for (int p = 0; p < PX; ++p) {
          const float v = win[q][p + ss];
          acc[q][p][4 * qk + 0] = fmaf(v, wv.x, acc[q][p][4 * qk + 0]);
          acc[q][p][4 * qk + 1] = fmaf(v, wv.y, acc[q][p][4 * qk + 1]);
          acc[q][p][4 * qk + 2] = fmaf(v, wv.z, acc[q][p][4 * qk + 2]);
          acc[q][p][4 * qk + 3] = fmaf(v, wv.w, acc[q][p][4 * qk + 3]);
        }
      }
    }
  if constexpr (P > 1) {
    regtile_pool_epilogue<KB, P>(g, acc[0], out, b, relu, active, y_first, k0, img, t, lg, cg, nthreads);
    return;
  }
  const int plane = d.oh * d.ow;
  float* dst = out + static_cast<std::int64_t>(img) * d.co * plane;
  CONV_TILED_UNROLL
  for (int kk = 0; kk < KB; ++kk) {
    const int k = k0 + kk;
    if (k >= d.co) break;
    const float bias = b ? b[k] : 0.f;
    CONV_TILED_UNROLL
    for (int q = 0; q < R; ++q) {
      const int y = y0 + q;
      if (y >= d.oh) break;
      CONV_TILED_UNROLL
      for (int p = 0; p < PX; ++p) {
        const int x = cg * PX + p;
        if (x >= d.ow) break;
        const float v = acc[q][p][kk] + bias;
        dst[static_cast<std::int64_t>(k) * plane + y * d.ow + x] = relu ? (v <= 0.f ? 0.f : v) : v;
      }
    }
  }
}

}  // namespace roofline::kernels

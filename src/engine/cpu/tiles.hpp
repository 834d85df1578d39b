// The fast CPU path's code compiled once per instruction set: the
// register-blocked GEMM and convolution kernels (tiles_impl.hpp), the direct
// convolution's blocks (tiles_direct_impl.hpp) and the vectorised loops of the
// pooling, batch gather, ReLU, bias-gradient and SGD ops
// (tiles_loops_impl.hpp). tiles_avx512.cpp, tiles_avx2.cpp and tiles_sse2.cpp
// compile them for their ISA (tiles_isa.inc, after the pattern of
// src/hardware/isa_target.hpp), and tiles() returns the set for
// hw::active_isa(), so ROOFLINE_CPU_ISA reaches all of them. Every function
// works on a tile of its output (a block of rows and columns, a plane, a
// chunk) and is single-threaded: the callers (fast_*.cpp) split the work
// between threads.
//
// Determinism: every output element is computed by exactly one call, in one
// fixed order: in the kernels one fixed chain of fused multiply-adds (and one
// fixed horizontal-sum tree), whatever the tile it falls in. So results do not
// depend on the thread count or the tiling; they do depend on the ISA (16, 8
// or 4 lanes change the order of the partial sums; SSE2 has no FMA).
#pragma once
#include <cstdint>
#include <vector>

#include "roofline/engine/ops.hpp"
#include "roofline/hardware/cpu_isa.hpp"

namespace roofline::engine::fast {

// C (M×N) = A (M×K) · Bᵀ, B (N×K), both row-major with K contiguous (a Linear
// forward: in · wᵀ). Epilogue: + bias[j] when bias, then ReLU (keeping NaN).
struct GemmNt {
  std::int64_t K;
  const float* A;  // (M, lda)
  std::int64_t lda;
  const float* B;  // (N, ldb)
  std::int64_t ldb;
  float* C;  // (M, ldc)
  std::int64_t ldc;
  const float* bias;  // (N) or null
  bool relu;
};

// C (M×N) = A' (M×K) · B (K×N), with A'(m, k) = A[m·sam + k·sak] (so A may be
// read transposed) and B row-major (N contiguous): a Linear's input gradient
// (dpre · w: sam = out, sak = 1) and weight gradient (dpreᵀ · in: sam = 1,
// sak = out), and a Linear forward over transposed weights (in · wt, wt (in,
// out): sam = in, sak = 1, B = wt). Epilogue: + bias[j] when bias, then ReLU
// (keeping NaN) when relu.
struct GemmBc {
  std::int64_t K;
  const float* A;
  std::int64_t sam, sak;
  const float* B;  // (K, ldb)
  std::int64_t ldb;
  float* C;  // (M, ldc)
  std::int64_t ldc;
  const float* bias = nullptr;  // (N) or null
  bool relu = false;
};

// Stride-1 convolution of one image over a plane "flattened" to the input's
// width: output position p = y·W + x (x < W; columns x ≥ OW are computed and
// thrown away by the caller) reads in[c][p + r·W + q]. Only p < P, the last
// valid position + 1, is computed, so every read stays inside the image.
//   out[kk][p] = Σ_c Σ_(r,q) w[kk][c][r][q] · in[c][p + r·W + q]   (kk < kb)
struct ConvPlane {
  const float* in;  // (C, H, W) of one image (for the input gradient: the padded output gradient)
  std::int64_t C, H, W, R, S;
  std::int64_t P;  // positions to compute: (OH − 1)·W + OW
  const float* w;  // (kb, wstride): kk's weights at w + kk·wstride, (C, R, S) each
  std::int64_t wstride;
  float* out;  // (kb, ostride) flattened planes
  std::int64_t ostride;
  int kb;  // output planes in this call, 1 .. kConvBlock
};
constexpr int kConvBlock = 4;

// Weight gradient of a stride-1 convolution over one image, added to
// acc[kk][t] for output planes kk < kb and taps t < nt (tap t at offset
// taps[t] = c·H·W + r·W + q from the image's start):
//   acc[kk][t] += Σ_(p < P) g[kk][p] · in[p + taps[t]]
// where g is the output gradient flattened to width W (zero at x ≥ OW).
struct ConvWgrad {
  const float* g;  // (kb, gstride) flattened output-gradient planes
  std::int64_t gstride;
  const float* in;  // one image (C, H, W)
  std::int64_t P;
  const std::int64_t* taps;  // (nt) offsets
  int kb, nt;                // kb <= kConvBlock, nt <= kWgradTaps
  float* acc;                // (kb, acc_stride): acc[kk·acc_stride + t]
  std::int64_t acc_stride;
};
constexpr int kWgradTaps = 6;

// The batch gather's bilinear resize (fast_batch.cpp fills them): output row
// oy blends source rows y0[oy] and y1[oy] with weight fy[oy] on the second;
// columns likewise.
struct ResizeTables {
  std::vector<std::int64_t> y0, y1, x0, x1;
  std::vector<float> fy, fx;
};

struct TileSet {
  hw::Isa isa;
  int lanes;
  // Register-block sizes (tiles aligned to them waste no lanes): gemm_nt
  // computes nt_mr × nt_nr blocks, gemm_bc bc_mr × (bc_nv · lanes) blocks.
  int nt_mr, nt_nr, bc_mr, bc_nv;

  // ---- register-blocked kernels (tiles_impl.hpp) ----
  // Rows [i0, i1) × columns [j0, j1) of C.
  void (*gemm_nt)(const GemmNt& g, std::int64_t i0, std::int64_t i1, std::int64_t j0, std::int64_t j1);
  void (*gemm_bc)(const GemmBc& g, std::int64_t m0, std::int64_t m1, std::int64_t j0, std::int64_t j1);
  void (*conv_plane)(const ConvPlane& c);
  void (*conv_wgrad)(const ConvWgrad& c);

  // ---- the direct convolution, any stride and padding (tiles_direct_impl.hpp) ----
  // Output planes k0 .. k0+kb−1 (kb ≤ 4) of image n, bias and activation included.
  void (*direct_forward)(const ops::Conv2dShape& s, std::int64_t n, std::int64_t k0, std::int64_t kb, float* out,
                         const float* in, const float* w, const float* b);
  // Input-gradient planes c0 .. c0+cb−1 (cb ≤ 4) of image n.
  void (*direct_input_grad)(const ops::Conv2dShape& s, std::int64_t n, std::int64_t c0, std::int64_t cb, float* din,
                            const float* dpre, const float* w);
  // Adds image n's contribution to the weight (k, c, r, s) and, when pb, bias (k) gradients.
  void (*direct_weight_grad)(const ops::Conv2dShape& s, std::int64_t n, double* pw, double* pb, const float* dpre,
                             const float* in);

  // ---- vectorised loops (tiles_loops_impl.hpp) ----
  // One (h, w) plane of a max-pool with a 2, 3 or 4 wide window.
  void (*pool_plane)(const ops::Pool2dShape& s, const float* in, float* out, std::int32_t* argmax);
  // One image of the batch gather: x = (pixel/255 − mean) · inv_std, resized
  // through `t` (h: scratch of in_h × out_w) or, for normalize_row, not.
  void (*normalize_row)(float* x, const std::uint8_t* img, std::int64_t n, float mean, float inv_std);
  void (*resize_image)(float* x, const std::uint8_t* img, const ops::BatchShape& s, const ResizeTables& t, float* h);
  void (*relu_chunk)(float* out, const float* in, std::int64_t n);
  void (*relu_grad_chunk)(float* din, const float* dout, const float* out, std::int64_t n);
  // The activation-masked gradient and its column sums for columns [j0, j1), rows in order.
  void (*bias_grad_cols)(const ops::BiasGradShape& s, float* dpre, float* db, const float* dout, const float* out,
                         std::int64_t j0, std::int64_t j1);
  // SGD with weight decay and, when `momentum`, momentum on n parameters.
  void (*sgd_chunk)(float* p, const float* g, float* buf, std::int64_t n, float lr, float mom, float wd, bool momentum);
};

const TileSet& tiles_avx512();
const TileSet& tiles_avx2();
const TileSet& tiles_sse2();
// The set for `isa`, which this CPU must support.
const TileSet& tiles(hw::Isa isa);
// The set for hw::active_isa().
const TileSet& tiles();

}  // namespace roofline::engine::fast

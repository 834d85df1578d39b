// Convolution and max-pooling on the GPU. Convolutions that are not the small
// models' fp32 NCHW layers go to cuDNN (own_conv_applies, conv_cudnn_gpu.cpp).
// Of ours, stride-1 convolutions take the register-tiled kernel (kernels/conv2d_regtile.cuh) where conv_choice.cpp's
// rule picks it, else the tiled kernels (kernels/conv2d_tiled.cuh) where their
// tiles fit in shared memory; the rest the direct ones
// (kernels/conv2d_direct.cuh). Weight gradients take the tiled partial sums.
// Inference's convolution + max pool is the register-tiled kernel's pooled
// epilogue.
#include <algorithm>
#include <map>
#include <mutex>

#include "kernels/conv2d_direct.cuh"
#include "kernels/conv2d_regtile.cuh"
#include "kernels/conv2d_tiled.cuh"
#include "kernels/pool_window.cuh"
#include "src/engine/cuda/conv_choice.hpp"
#include "src/engine/cuda/im2col.hpp"
#include "src/engine/cuda/launch.cuh"
#include "src/engine/cuda/ops_cuda.hpp"

namespace roofline::engine::cuda_ops {

static_assert(kRegTilePixels == kernels::kRegTilePixels && kRegTileMaxThreads == kernels::kRegTileMaxThreads,
              "conv_choice.hpp plans launches for the kernel's own tile width and launch bound");

namespace {

kernels::ConvDims dims(const ops::Conv2dShape& s) {
  kernels::ConvDims d;
  d.n = int(s.n);
  d.c = int(s.c);
  d.h = int(s.h);
  d.w = int(s.w);
  d.k = int(s.k);
  d.r = int(s.r);
  d.s = int(s.s);
  d.stride = int(s.stride);
  d.pad = int(s.pad);
  d.oh = int(s.oh());
  d.ow = int(s.ow());
  return d;
}

// out, argmax (n·c, oh, ow): each window's max and its index (kernels/pool_window.cuh).
__global__ void maxpool_forward_kernel(std::int64_t planes, int h, int w, int kernel, int stride, int oh, int ow,
                                       float* __restrict__ out, std::int32_t* __restrict__ argmax,
                                       const float* __restrict__ in) {
  const std::int64_t total = planes * oh * ow;
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < total;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    const int x = int(i % ow), y = int((i / ow) % oh);
    const std::int64_t p = i / (std::int64_t(ow) * oh);
    const kernels::MaxAt best = kernels::window_max(in + p * h * w, w, y * stride, x * stride, kernel);
    out[i] = best.m;
    if (argmax) argmax[i] = best.arg;
  }
}

// din (n·c, h, w): each input element gathers dout from the windows that
// chose it (windows may overlap when stride < kernel). No atomics.
__global__ void maxpool_backward_kernel(std::int64_t planes, int h, int w, int kernel, int stride, int oh, int ow,
                                        float* __restrict__ din, const float* __restrict__ dout,
                                        const std::int32_t* __restrict__ argmax) {
  const std::int64_t total = planes * h * w;
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < total;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    const int ix = int(i % w), iy = int((i / w) % h);
    const std::int64_t p = i / (std::int64_t(w) * h);
    const int idx = iy * w + ix;
    // Windows y with y·stride <= iy < y·stride + kernel.
    const int y_lo = iy >= kernel ? (iy - kernel) / stride + 1 : 0, y_hi = min(iy / stride, oh - 1);
    const int x_lo = ix >= kernel ? (ix - kernel) / stride + 1 : 0, x_hi = min(ix / stride, ow - 1);
    float acc = 0.f;
    for (int y = y_lo; y <= y_hi; ++y)
      for (int x = x_lo; x <= x_hi; ++x) {
        const std::int64_t o = (p * oh + y) * ow + x;
        if (argmax[o] == idx) acc += dout[o];
      }
    din[i] = acc;
  }
}

// The tiled kernels' shared-memory limit per block: this device's opt-in
// maximum (227 KB on the H100), capped at 200 KB (beyond that a tile is better
// served by the direct kernel than by one block per SM); grid y and z are at
// most 65535.
constexpr int kTiledSmemMax = 200 * 1024;
constexpr int kSmemDefault = 48 * 1024;  // what a kernel may use without opting in

int smem_limit(const CudaState* st) { return std::min(kTiledSmemMax, st->smem_optin); }

int channels_per_block(std::int64_t co) { return co <= 4 ? 4 : co <= 8 ? 8 : 16; }

// A kernel may use more than 48 KB of dynamic shared memory only after opting
// in, per device. Set when a launch first needs more than before on its device
// (the trainer and the harness run every shape eagerly before capturing a
// graph, so no capture ever sets it).
template <auto Kernel>
void allow_smem(const CudaState* st, int bytes) {
  if (bytes <= kSmemDefault) return;
  static std::mutex mutex;
  static std::map<int, int> opted;  // device -> bytes opted in
  const std::lock_guard<std::mutex> lock(mutex);
  int& have = opted[st->device];
  if (bytes <= have) return;
  CUDA_CHECK(cudaFuncSetAttribute(Kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
  have = bytes;
}

template <int KB, int PX, int CS = 1>
int tiled_bytes(const kernels::TiledConvDims& d) {
  return kernels::tiled_smem_floats<KB, PX, CS>(d) * static_cast<int>(sizeof(float));
}

// Channel groups (cs > 1) come only with 4-channel, 1-pixel blocks (tiled_shape).
int tiled_bytes(const kernels::TiledConvDims& d, int kb, int px, int cs) {
  if (cs == 2) return tiled_bytes<4, 1, 2>(d);
  if (cs == 4) return tiled_bytes<4, 1, 4>(d);
  if (px == 4) return tiled_bytes<4, 4>(d);  // tiled_shape gives 4 pixels only to 4-channel blocks
  return kb == 4 ? tiled_bytes<4, 1>(d) : kb == 8 ? tiled_bytes<8, 1>(d) : tiled_bytes<16, 1>(d);
}

// The tiled kernel's shape: output channels per block (kb), pixels per
// thread (px) and input-channel groups (cs). As many channels as the layer
// has (up to 16: fewer shared loads per FMA), cut back while the grid would
// have fewer than 1.5 blocks per SM (320 blocks of 16 channels ran at 28%
// occupancy; 640 of 8 took the same time). 4-channel blocks take 4 pixels per
// thread when the grid stays that large: one LDS.128 of weights then serves
// 16 FMAs, not 4 (ncu, ece408 at batch 64 on the H100: conv 1→4
// 7×7 22.4 → 15.7 µs; conv2's input gradient at batch 128 122 → 85 µs). Wider
// blocks gained nothing from 4 pixels (8 channels at batch 64: 35 → 37 µs, 16
// at batch 128: 51 → 59 µs). A grid still smaller than the GPU splits the
// input channels over 2 or 4 thread groups (ece408's conv2 at batch 1: 20
// blocks, each thread a chain of 196 taps; ncu: 11.3 µs, issue
// stalls on each FMA's operands, 8 warps on 20 of 132 SMs).
struct TiledShape {
  int kb = 4, px = 1, cs = 1;
};
TiledShape tiled_shape(const CudaState* st, const kernels::TiledConvDims& d) {
  auto blocks = [&](int kb, int px, int cs) {
    return std::int64_t(kernels::tiled_blocks_x(d, px, cs)) * ((d.co + kb - 1) / kb) * d.n;
  };
  const std::int64_t enough = 3 * std::int64_t(st->sm_count) / 2;
  TiledShape t;
  t.kb = channels_per_block(d.co);
  while (t.kb > 4 && blocks(t.kb, 1, 1) < enough) t.kb /= 2;
  if (t.kb == 4 && d.ow >= 8 && blocks(4, 4, 1) >= enough) t.px = 4;
  if (t.kb == 4 && t.px == 1)
    while (t.cs < 4 && 2 * t.cs <= d.ci && blocks(4, 1, t.cs) < st->sm_count) t.cs *= 2;
  return t;
}

// The kernels size their shared memory in int; this bound, in 64 bits, keeps
// that exact.
bool tiled_fits(const CudaState* st, const kernels::TiledConvDims& d, const TiledShape& t) {
  const std::int64_t rows =
      std::min<std::int64_t>((kernels::tiled_slots(t.cs) - 1) / kernels::tiled_cols(d.ow, t.px) + 2, d.oh);
  const std::int64_t floats = std::int64_t(d.ci) * (rows + d.r - 1) * (d.ow + d.s - 1) + 3 +
                              std::int64_t(d.ci) * d.r * d.s * t.kb +
                              (t.cs > 1 ? std::int64_t(kernels::kConvThreads) * t.px * t.kb : 0);
  return d.n <= 65535 && (d.co + t.kb - 1) / t.kb <= 65535 && floats * 4 <= smem_limit(st) &&
         tiled_bytes(d, t.kb, t.px, t.cs) <= smem_limit(st);
}

template <int KB, int PX, bool FLIP, int CS = 1>
void launch_tiled_kb(const CudaState* st, const kernels::TiledConvDims& d, float* out, const float* in, const float* w,
                     const float* b, bool relu) {
  const int bytes = tiled_bytes<KB, PX, CS>(d);
  allow_smem<kernels::conv2d_tiled<KB, PX, FLIP, CS>>(st, bytes);
  const dim3 grid(static_cast<unsigned>(kernels::tiled_blocks_x(d, PX, CS)),
                  static_cast<unsigned>((d.co + KB - 1) / KB), static_cast<unsigned>(d.n));
  kernels::conv2d_tiled<KB, PX, FLIP, CS><<<grid, kernels::kConvThreads, bytes, stream_of(st)>>>(d, out, in, w, b,
                                                                                                  relu);
  CUDA_CHECK_LAUNCH();
}

template <bool FLIP>
void launch_tiled(const CudaState* st, const kernels::TiledConvDims& d, const TiledShape& t, float* out,
                  const float* in, const float* w, const float* b, bool relu) {
  if (t.cs == 2)  // channel groups: with kb 4, px 1 only (tiled_shape)
    launch_tiled_kb<4, 1, FLIP, 2>(st, d, out, in, w, b, relu);
  else if (t.cs == 4)
    launch_tiled_kb<4, 1, FLIP, 4>(st, d, out, in, w, b, relu);
  else if (t.px == 4)  // with kb 4 only (tiled_shape)
    launch_tiled_kb<4, 4, FLIP>(st, d, out, in, w, b, relu);
  else if (t.kb == 4)
    launch_tiled_kb<4, 1, FLIP>(st, d, out, in, w, b, relu);
  else if (t.kb == 8)
    launch_tiled_kb<8, 1, FLIP>(st, d, out, in, w, b, relu);
  else
    launch_tiled_kb<16, 1, FLIP>(st, d, out, in, w, b, relu);
}

template <int KB, int R, int S, bool FLIP, int P>
void launch_regtile(const CudaState* st, const kernels::RegTileDims& g, const RegTilePlan& p, float* out,
                    const float* in, const float* w, const float* b, bool relu) {
  const int bytes = static_cast<int>(p.smem_floats) * static_cast<int>(sizeof(float));
  allow_smem<kernels::conv2d_regtile<KB, R, S, FLIP, P>>(st, bytes);
  const dim3 grid(static_cast<unsigned>(p.bands), static_cast<unsigned>((g.d.co + KB - 1) / KB),
                  static_cast<unsigned>(g.d.n));
  kernels::conv2d_regtile<KB, R, S, FLIP, P><<<grid, p.threads, bytes, stream_of(st)>>>(g, out, in, w, b, relu);
  CUDA_CHECK_LAUNCH();
}

template <int KB, int R, bool FLIP, int P>
void launch_regtile_width(const CudaState* st, const kernels::RegTileDims& g, const RegTilePlan& p, float* out,
                          const float* in, const float* w, const float* b, bool relu) {
  if (g.d.s == 3)
    launch_regtile<KB, R, 3, FLIP, P>(st, g, p, out, in, w, b, relu);
  else if (g.d.s == 5)
    launch_regtile<KB, R, 5, FLIP, P>(st, g, p, out, in, w, b, relu);
  else
    launch_regtile<KB, R, 7, FLIP, P>(st, g, p, out, in, w, b, relu);
}

// The register-tiled plan of a pass (the pooled inference launch when pool >
// 1): the override's tile where it forces one (the pooled launch takes only
// one-row tiles), else the rule's (conv_choice.cpp); false where the kernel
// does not apply or its shared memory does not fit.
bool regtile_plan(const CudaState* st, const ConvGeometry& geo, int pool, RegTilePlan& p) {
  const ConvKernelChoice& o = conv_kernel_override();
  if (o.kind == ConvKernelChoice::Kind::Tiled) return false;
  const bool forced = o.kind == ConvKernelChoice::Kind::RegTile && (pool == 1 || o.rows == 1);
  const bool ok = forced ? plan_regtile(geo, st->sm_count, o.kb, o.rows, o.threads, p, pool)
                         : choose_regtile(geo, st->sm_count, p, pool);
  return ok && p.smem_floats * static_cast<std::int64_t>(sizeof(float)) <= smem_limit(st);
}

// Launches a planned tile (regtile_compiled() lists the tiles; P > 1 has only
// the one-row ones); false for any other.
template <bool FLIP, int P>
bool launch_planned(const CudaState* st, const kernels::TiledConvDims& d, const RegTilePlan& p, float* out,
                    const float* in, const float* w, const float* b, bool relu) {
  const kernels::RegTileDims g{d, p.band};
  switch (p.kb * 10 + p.rows) {
    case 41: launch_regtile_width<4, 1, FLIP, P>(st, g, p, out, in, w, b, relu); return true;
    case 81: launch_regtile_width<8, 1, FLIP, P>(st, g, p, out, in, w, b, relu); return true;
    case 161: launch_regtile_width<16, 1, FLIP, P>(st, g, p, out, in, w, b, relu); return true;
    default: break;
  }
  if constexpr (P == 1) {
    switch (p.kb * 10 + p.rows) {
      case 42: launch_regtile_width<4, 2, FLIP, 1>(st, g, p, out, in, w, b, relu); return true;
      case 44: launch_regtile_width<4, 4, FLIP, 1>(st, g, p, out, in, w, b, relu); return true;
      case 82: launch_regtile_width<8, 2, FLIP, 1>(st, g, p, out, in, w, b, relu); return true;
      default: break;
    }
  }
  return false;
}

// The register-tiled kernel for a forward or input-gradient pass where it is
// planned; false: the caller takes the tiled or direct kernel.
template <bool FLIP>
bool try_regtile(const CudaState* st, const kernels::TiledConvDims& d, float* out, const float* in, const float* w,
                 const float* b, bool relu) {
  RegTilePlan p;
  return regtile_plan(st, {d.n, d.ci, d.co, d.oh, d.ow, d.r, d.s}, 1, p) &&
         launch_planned<FLIP, 1>(st, d, p, out, in, w, b, relu);
}

template <int KB>
int wgrad_bytes(const kernels::WgradDims& d) {
  return kernels::wgrad_smem_floats<KB>(d) * static_cast<int>(sizeof(float));
}

int wgrad_bytes(const kernels::WgradDims& d, int kb) {
  return kb == 4 ? wgrad_bytes<4>(d) : kb == 8 ? wgrad_bytes<8>(d) : wgrad_bytes<16>(d);
}

// The tiled weight gradient when it applies; false: use the direct kernel.
bool wgrad_tiled(const CudaState* st, const ops::Conv2dShape& s, float* dw, float* db, const float* dpre,
                 const float* in) {
  if (s.stride != 1) return false;
  kernels::WgradDims d{};
  d.n = int(s.n);
  d.c = int(s.c);
  d.h = int(s.h);
  d.w = int(s.w);
  d.k = int(s.k);
  d.oh = int(s.oh());
  d.ow = int(s.ow());
  d.r = int(s.r);
  d.s = int(s.s);
  d.ph = d.pw = int(s.pad);
  d.combos = d.c * d.r * d.s + 1;
  if (d.combos > kernels::kConvThreads) return false;
  const int kb = channels_per_block(s.k);
  const int kgroups = (d.k + kb - 1) / kb;
  if (kgroups > 65535) return false;
  // Blocks over images, and over slices of output rows when the images alone
  // would leave SMs idle (ece408 at batch 64: 64 images × 5 slices).
  const int img_blocks = static_cast<int>(std::min<std::int64_t>(d.n, 4LL * st->sm_count));
  int slices = std::clamp((2 * st->sm_count + img_blocks - 1) / img_blocks, 1, d.oh);
  d.rows = (d.oh + slices - 1) / slices;
  slices = (d.oh + d.rows - 1) / d.rows;  // no empty slice
  d.groups = std::max(1, std::min(kernels::kConvThreads / d.combos, d.rows));
  const std::int64_t floats = std::int64_t(d.c) * (d.rows + d.r - 1) * (d.w + 2 * d.pw) + 3 +
                              std::max(std::int64_t(d.rows) * d.ow, std::int64_t(d.groups) * d.combos) * kb;
  if (floats * 4 > smem_limit(st) || wgrad_bytes(d, kb) > smem_limit(st) || slices > 65535) return false;
  // Per-block partials live in the context's cuBLASLt workspace: every op runs
  // in order on the context's one stream, so no GEMM is using it meanwhile.
  const std::int64_t per_part = std::int64_t(kgroups) * d.combos * kb * slices;
  const std::int64_t room = static_cast<std::int64_t>(st->workspace.bytes() / sizeof(float)) / per_part;
  const int parts = static_cast<int>(std::min<std::int64_t>(img_blocks, room));
  if (parts < 1) return false;
  float* partial = reinterpret_cast<float*>(st->workspace.get());
  const dim3 grid(static_cast<unsigned>(parts), static_cast<unsigned>(kgroups), static_cast<unsigned>(slices));
  const int bytes = wgrad_bytes(d, kb);
  if (kb == 4) {
    allow_smem<kernels::conv2d_wgrad_partial<4>>(st, bytes);
    kernels::conv2d_wgrad_partial<4><<<grid, kernels::kConvThreads, bytes, stream_of(st)>>>(d, partial, in, dpre);
  } else if (kb == 8) {
    allow_smem<kernels::conv2d_wgrad_partial<8>>(st, bytes);
    kernels::conv2d_wgrad_partial<8><<<grid, kernels::kConvThreads, bytes, stream_of(st)>>>(d, partial, in, dpre);
  } else {
    allow_smem<kernels::conv2d_wgrad_partial<16>>(st, bytes);
    kernels::conv2d_wgrad_partial<16><<<grid, kernels::kConvThreads, bytes, stream_of(st)>>>(d, partial, in, dpre);
  }
  CUDA_CHECK_LAUNCH();
  kernels::conv2d_wgrad_reduce<<<blocks_for(std::int64_t(d.k) * d.combos * 32, st), kThreads, 0, stream_of(st)>>>(
      d, parts * slices, kb, dw, db, partial);
  CUDA_CHECK_LAUNCH();
  return true;
}

}  // namespace

namespace {
bool own(const ops::Conv2dShape& s) {
  return own_conv_applies(conv_kernel_override(), s.dtype, s.format, s.groups, s.c, s.k);
}
}  // namespace

void conv2d_forward(const CudaState* st, const ops::Conv2dShape& s, void* out_, const void* in_, const void* w_,
                    const float* b) {
  if (!own(s)) {
    if (im2col_applies(s)) return im2col_conv_forward(st, s, out_, in_, w_, b);
    return cudnn_conv_forward(st, s, out_, in_, w_, b);
  }
  float* out = static_cast<float*>(out_);  // fp32 from here on (own_conv_applies)
  const float* in = static_cast<const float*>(in_);
  const float* w = static_cast<const float*>(w_);
  if (s.stride == 1) {
    const kernels::TiledConvDims t{int(s.n),    int(s.c), int(s.h), int(s.w),   int(s.k),  int(s.oh()),
                                   int(s.ow()), int(s.r), int(s.s), int(s.pad), int(s.pad)};
    if (try_regtile<false>(st, t, out, in, w, b, s.act == ops::Activation::ReLU)) return;
    const TiledShape ts = tiled_shape(st, t);
    if (tiled_fits(st, t, ts)) {
      launch_tiled<false>(st, t, ts, out, in, w, b, s.act == ops::Activation::ReLU);
      return;
    }
  }
  const kernels::ConvDims d = dims(s);
  kernels::conv2d_forward_direct<<<blocks_for(s.n * s.k * s.oh() * s.ow(), st), kThreads, 0, stream_of(st)>>>(
      d, out, in, w, b, s.act == ops::Activation::ReLU);
  CUDA_CHECK_LAUNCH();
}

bool conv2d_maxpool_forward(const CudaState* st, const ops::Conv2dShape& s, const ops::Pool2dShape& ps, float* out,
                            const float* in, const float* w, const float* b) {
  const int pool = int(ps.kernel);
  if (!own(s) || s.stride != 1 || ps.stride != ps.kernel || (pool != 2 && pool != 4) || ps.n != s.n || ps.c != s.k ||
      ps.h != s.oh() || ps.w != s.ow() || ps.pad != 0 || ps.format != MemoryFormat::NCHW || ps.dtype != DType::F32)
    return false;
  // The rows and columns the pool reads: the convolution computes only those.
  const std::int64_t oh = ps.oh() * pool, ow = ps.ow() * pool;
  RegTilePlan p;
  if (!regtile_plan(st, {s.n, s.c, s.k, oh, ow, s.r, s.s}, pool, p)) return false;
  const kernels::TiledConvDims t{int(s.n), int(s.c), int(s.h), int(s.w), int(s.k), int(oh),
                                 int(ow),  int(s.r), int(s.s), int(s.pad), int(s.pad)};
  const bool relu = s.act == ops::Activation::ReLU;
  return pool == 2 ? launch_planned<false, 2>(st, t, p, out, in, w, b, relu)
                   : launch_planned<false, 4>(st, t, p, out, in, w, b, relu);
}

void conv2d_backward_input(const CudaState* st, const ops::Conv2dShape& s, void* din_, const void* dpre_,
                           const void* w_) {
  if (!own(s)) return cudnn_conv_backward_input(st, s, din_, dpre_, w_);
  float* din = static_cast<float*>(din_);
  const float* dpre = static_cast<const float*>(dpre_);
  const float* w = static_cast<const float*>(w_);
  // The output gradient convolved with the flipped, transposed weights.
  if (s.stride == 1 && s.pad <= s.r - 1 && s.pad <= s.s - 1) {
    const kernels::TiledConvDims t{
        int(s.n), int(s.k), int(s.oh()),          int(s.ow()),         int(s.c), int(s.h), int(s.w),
        int(s.r), int(s.s), int(s.r - 1 - s.pad), int(s.s - 1 - s.pad)};
    if (try_regtile<true>(st, t, din, dpre, w, nullptr, false)) return;
    const TiledShape ts = tiled_shape(st, t);
    if (tiled_fits(st, t, ts)) {
      launch_tiled<true>(st, t, ts, din, dpre, w, nullptr, false);
      return;
    }
  }
  const kernels::ConvDims d = dims(s);
  kernels::conv2d_backward_input_direct<<<blocks_for(s.n * s.c * s.h * s.w, st), kThreads, 0, stream_of(st)>>>(d, din,
                                                                                                               dpre, w);
  CUDA_CHECK_LAUNCH();
}

void conv2d_backward_weight(const CudaState* st, const ops::Conv2dShape& s, float* dw, float* db, const void* dpre_,
                            const void* in_) {
  if (!own(s)) {
    if (im2col_applies(s)) return im2col_conv_backward_weight(st, s, dw, db, dpre_, in_);
    return cudnn_conv_backward_weight(st, s, dw, db, dpre_, in_);
  }
  const float* dpre = static_cast<const float*>(dpre_);
  const float* in = static_cast<const float*>(in_);
  if (wgrad_tiled(st, s, dw, db, dpre, in)) return;
  const kernels::ConvDims d = dims(s);
  const unsigned blocks = static_cast<unsigned>(s.k * s.c * s.r * s.s + (db ? s.k : 0));
  kernels::conv2d_backward_weight_direct<kThreads><<<blocks, kThreads, 0, stream_of(st)>>>(d, dw, db, dpre, in);
  CUDA_CHECK_LAUNCH();
}

void maxpool2d_forward(const CudaState* st, const ops::Pool2dShape& s, float* out, std::int32_t* argmax,
                       const float* in) {
  // The small models' pools only; the rest go to pool_cnn.cu (see the dispatcher).
  ROOFLINE_ASSERT(s.pad == 0 && s.format == MemoryFormat::NCHW && s.dtype == DType::F32, "maxpool2d kernel's shape");
  maxpool_forward_kernel<<<blocks_for(s.n * s.c * s.oh() * s.ow(), st), kThreads, 0, stream_of(st)>>>(
      s.n * s.c, int(s.h), int(s.w), int(s.kernel), int(s.stride), int(s.oh()), int(s.ow()), out, argmax, in);
  CUDA_CHECK_LAUNCH();
}

void maxpool2d_backward(const CudaState* st, const ops::Pool2dShape& s, float* din, const float* dout,
                        const std::int32_t* argmax) {
  ROOFLINE_ASSERT(s.pad == 0 && s.format == MemoryFormat::NCHW && s.dtype == DType::F32, "maxpool2d kernel's shape");
  maxpool_backward_kernel<<<blocks_for(s.n * s.c * s.h * s.w, st), kThreads, 0, stream_of(st)>>>(
      s.n * s.c, int(s.h), int(s.w), int(s.kernel), int(s.stride), int(s.oh()), int(s.ow()), din, dout, argmax);
  CUDA_CHECK_LAUNCH();
}

}  // namespace roofline::engine::cuda_ops

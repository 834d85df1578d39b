// Which CUDA convolution kernel a stride-1 layer takes, and the register-tiled
// kernel's launch geometry (kernels/conv2d_regtile.cuh). Host-only, so the
// rules are tested on machines without a GPU.
#pragma once
#include <cstdint>
#include <string_view>

#include "roofline/engine/tensor.hpp"

namespace roofline::engine::cuda_ops {

// ROOFLINE_CONV_KERNEL: unset or "auto" (the rule below), "tiled"
// (conv2d_tiled wherever it fits), "regtile:KB:R[:THREADS]" (the
// register-tiled kernel with KB output channels × R rows × 4 pixels per
// thread, about THREADS threads per block) or "cudnn" (cuDNN for every
// convolution, our kernels for none) — a knob for measurements, not for users.
// The register-tiled kernel's pixels per thread and launch bound, as
// kernels/conv2d_regtile.cuh has them (conv_pool.cu checks they agree).
constexpr int kRegTilePixels = 4;
constexpr int kRegTileMaxThreads = 256;

struct ConvKernelChoice {
  enum class Kind { Auto, Tiled, RegTile, Cudnn } kind = Kind::Auto;
  int kb = 0, rows = 0, threads = 0;  // RegTile only
};
// Throws a usage error naming the accepted forms.
ConvKernelChoice parse_conv_kernel(std::string_view text);
// The environment's choice, read and checked once per process.
const ConvKernelChoice& conv_kernel_override();

// Whether a convolution runs on our own kernels (conv_pool.cu) rather than on
// cuDNN: fp32, NCHW, one group, and at most kOwnConvChannels input and output
// channels — the small models' layers (simple-cnn 1→1, ece408 1→4 and 4→16),
// where our kernels were measured faster and where cuDNN's implicit-GEMM
// tiles, 64 or more channels wide, would be mostly padding. Every layer of
// AlexNet and ResNet-18 has 64 or more output channels: cuDNN. With the
// override "tiled" or "regtile:…" every fp32 NCHW layer with one group takes
// our kernels; with "cudnn" none does.
constexpr std::int64_t kOwnConvChannels = 16;
bool own_conv_applies(const ConvKernelChoice& o, DType dtype, MemoryFormat format, std::int64_t groups,
                      std::int64_t c, std::int64_t k);

// The (KB, R) tiles the register-tiled kernel is compiled for: KB ∈ {4, 8, 16},
// R ∈ {1, 2, 4}, at most 64 accumulators (4 · KB · R), and kernel widths 3, 5, 7.
bool regtile_compiled(int kb, int rows);
bool regtile_width_compiled(int s);

// One launch of conv2d_regtile: `band` row groups of `rows` output rows per
// block, `threads` threads per block (a multiple of 32), `bands` × ⌈co / kb⌉
// × n blocks, `smem_floats` floats of dynamic shared memory.
struct RegTilePlan {
  int kb = 0, rows = 0, band = 0, threads = 0, bands = 0;
  std::int64_t smem_floats = 0;
};
struct ConvGeometry {
  std::int64_t n, ci, co, oh, ow, r, s;
};
// The plan for `kb` × `rows` tiles and about `threads` threads per block
// (0: 128, fewer while the grid has under two blocks per SM). Returns false
// (plan untouched) where the kernel does not apply: a width it is not
// compiled for, rows wider than 256 threads of 4 pixels, grid limits.
//
// pool > 1: the pooled inference launch (P × P max-pool windows, stride P):
// g.oh and g.ow are then the rows and columns the pool reads (multiples of
// P), rows must be 1 and P must divide 4; bands hold a multiple of P rows.
bool plan_regtile(const ConvGeometry& g, int sm_count, int kb, int rows, int threads, RegTilePlan& plan, int pool = 1);
// The automatic choice for a layer: KB 4 for at most 4 output channels, else
// 8, one row per thread; false where the tiled kernel is kept (a grid of
// fewer blocks than SMs).
bool choose_regtile(const ConvGeometry& g, int sm_count, RegTilePlan& plan, int pool = 1);

}  // namespace roofline::engine::cuda_ops

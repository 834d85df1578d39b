// The fast CPU kernels compiled for the x86-64 baseline, SSE2.
// Every header the kernels use is included before the target pragma, so no
// library code is compiled for this ISA; the kernels themselves have internal
// linkage. Only tiles_sse2() is visible, and tiles() calls it only on a CPU
// that has the ISA.
#include <immintrin.h>

#include <array>
#include <cstdint>
#include <utility>

#include "src/engine/cpu/tiles.hpp"

// Baseline x86-64: no target change.
namespace roofline::engine::fast {
namespace {
#define ROOFLINE_SIMD_BITS 128
#include "src/engine/cpu/simd.hpp"
#include "src/engine/cpu/tiles_impl.hpp"
#undef ROOFLINE_SIMD_BITS
}  // namespace

const TileSet& tiles_sse2() {
  static const TileSet k{Isa::Sse2, V::W, kNtMr, kNtNr, kBcMr, kBcNv, &gemm_nt, &gemm_bc, &conv_plane, &conv_wgrad};
  return k;
}

}  // namespace roofline::engine::fast


// The fast CPU kernels compiled for AVX-512 (Skylake-SP and later, Zen 4 and later).
// Every header the kernels use is included before the target pragma, so no
// library code is compiled for this ISA; the kernels themselves have internal
// linkage. Only tiles_avx512() is visible, and tiles() calls it only on a CPU
// that has the ISA.
#include <immintrin.h>

#include <array>
#include <cstdint>
#include <utility>

#include "src/engine/cpu/tiles.hpp"

#pragma GCC push_options
#pragma GCC target("avx512f,avx512vl,avx512dq,avx512bw,avx2,fma")
namespace roofline::engine::fast {
namespace {
#define ROOFLINE_SIMD_BITS 512
#include "src/engine/cpu/simd.hpp"
#include "src/engine/cpu/tiles_impl.hpp"
#undef ROOFLINE_SIMD_BITS
}  // namespace

const TileSet& tiles_avx512() {
  static const TileSet k{Isa::Avx512, V::W, kNtMr, kNtNr, kBcMr, kBcNv, &gemm_nt, &gemm_bc, &conv_plane, &conv_wgrad};
  return k;
}

}  // namespace roofline::engine::fast
#pragma GCC pop_options

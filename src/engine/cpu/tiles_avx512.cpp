// The fast CPU path's per-ISA code (tiles.hpp) compiled for AVX-512 (Skylake-SP and later, Zen 4 and later).
#define ROOFLINE_SIMD_BITS 512
#include "src/engine/cpu/tiles_isa.inc"

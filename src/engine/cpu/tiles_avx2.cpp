// The fast CPU path's per-ISA code (tiles.hpp) compiled for AVX2 with FMA (Haswell and later, Zen).
#define ROOFLINE_SIMD_BITS 256
#include "src/engine/cpu/tiles_isa.inc"

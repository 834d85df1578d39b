// The fast CPU path's per-ISA code (tiles.hpp) compiled for the x86-64 baseline, SSE2.
#define ROOFLINE_SIMD_BITS 128
#include "src/engine/cpu/tiles_isa.inc"

// The fast CPU path's optimizer and cast loops (optim_loops.hpp) compiled for AVX2 (Haswell and later, Zen).
#define ROOFLINE_SIMD_BITS 256
#include "src/engine/cpu/optim_loops_isa.inc"

// The fast CPU path's optimizer and cast loops (optim_loops.hpp) compiled for AVX-512 (Skylake-SP and later, Zen 4 and later).
#define ROOFLINE_SIMD_BITS 512
#include "src/engine/cpu/optim_loops_isa.inc"

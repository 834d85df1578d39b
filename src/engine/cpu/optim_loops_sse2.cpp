// The fast CPU path's optimizer and cast loops (optim_loops.hpp) compiled for the x86-64 baseline, SSE2.
#define ROOFLINE_SIMD_BITS 128
#include "src/engine/cpu/optim_loops_isa.inc"

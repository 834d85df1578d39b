// How code is compiled for one hw::Isa (roofline/hardware/cpu_isa.hpp). The
// one pattern every per-ISA part of the tree follows (the engine's tiles,
// src/engine/cpu/tiles_<isa>.cpp; the ceilings' SIMD loops,
// src/ceilings/cpu/simd_<isa>.cpp):
//
//   - one translation unit per ISA, named after it;
//   - every header it needs included first, then a region per target: the
//     code between ROOFLINE_ISA_BEGIN_<ISA> (or ROOFLINE_ISA_LOOPS_BEGIN_<ISA>)
//     and ROOFLINE_ISA_END gets the wider instructions, and nothing else does:
//     inline library functions from the headers keep the baseline target, so
//     nothing compiled for AVX-512 can run on a CPU without it;
//   - that code has internal linkage, except one function returning a table of
//     function pointers; for_isa() below picks among the three by
//     hw::active_isa() (or by any ISA up to hw::detected_isa(), in tests).
//
// Two targets per ISA, both within what detected_isa() checks for it:
//   - ROOFLINE_ISA_BEGIN_<ISA>: every feature detected_isa() requires, for code
//     written with the ISA's intrinsics (the engine's register-blocked kernels,
//     the ceilings' loops);
//   - ROOFLINE_ISA_LOOPS_BEGIN_<ISA>: the ISA's base feature alone (avx512f,
//     avx2), for plain loops GCC vectorises itself (the engine's small ops and
//     direct convolution). Which multiplies and adds GCC contracts into FMAs
//     follows the exact feature set (with AVX512VL it fuses the 128- and
//     256-bit ones it keeps apart with AVX512F alone; AVX2 alone has no FMA),
//     and those loops' results are kept bit for bit as they have always been
//     computed on each ISA.
#pragma once
#include "roofline/hardware/cpu_isa.hpp"

#define ROOFLINE_ISA_PRAGMA(x) _Pragma(#x)

#if defined(__clang__)
// clang (the sanitizer and fuzz builds, tools/san_build.sh) has no GCC
// push_options; its attribute regions give every function in the region the
// same target. Release builds use GCC, whose exact targets are kept below.
#define ROOFLINE_ISA_CLANG_TARGET(t) \
  ROOFLINE_ISA_PRAGMA(clang attribute push(__attribute__((target(t))), apply_to = function))
#define ROOFLINE_ISA_BEGIN_AVX512 ROOFLINE_ISA_CLANG_TARGET("avx512f,avx512vl,avx512dq,avx512bw,avx2,fma")
#define ROOFLINE_ISA_BEGIN_AVX2 ROOFLINE_ISA_CLANG_TARGET("avx2,fma")
#define ROOFLINE_ISA_BEGIN_SSE2 ROOFLINE_ISA_CLANG_TARGET("sse2")
#define ROOFLINE_ISA_LOOPS_BEGIN_AVX512 ROOFLINE_ISA_CLANG_TARGET("avx512f")
#define ROOFLINE_ISA_LOOPS_BEGIN_AVX2 ROOFLINE_ISA_CLANG_TARGET("avx2")
#define ROOFLINE_ISA_LOOPS_BEGIN_SSE2 ROOFLINE_ISA_CLANG_TARGET("sse2")
#define ROOFLINE_ISA_END _Pragma("clang attribute pop")
#else
#define ROOFLINE_ISA_BEGIN_AVX512 \
  _Pragma("GCC push_options") ROOFLINE_ISA_PRAGMA(GCC target("avx512f,avx512vl,avx512dq,avx512bw,avx2,fma"))
#define ROOFLINE_ISA_BEGIN_AVX2 _Pragma("GCC push_options") ROOFLINE_ISA_PRAGMA(GCC target("avx2,fma"))
// The x86-64 baseline: no target change.
#define ROOFLINE_ISA_BEGIN_SSE2 _Pragma("GCC push_options")

#define ROOFLINE_ISA_LOOPS_BEGIN_AVX512 _Pragma("GCC push_options") ROOFLINE_ISA_PRAGMA(GCC target("avx512f"))
#define ROOFLINE_ISA_LOOPS_BEGIN_AVX2 _Pragma("GCC push_options") ROOFLINE_ISA_PRAGMA(GCC target("avx2"))
#define ROOFLINE_ISA_LOOPS_BEGIN_SSE2 _Pragma("GCC push_options")

#define ROOFLINE_ISA_END _Pragma("GCC pop_options")
#endif

namespace roofline::hw {

// The table for `isa` among the per-ISA translation units' accessors.
template <class Table>
const Table& for_isa(Isa isa, const Table& (*avx512)(), const Table& (*avx2)(), const Table& (*sse2)()) {
  switch (isa) {
    case Isa::Avx512:
      return avx512();
    case Isa::Avx2:
      return avx2();
    case Isa::Sse2:
      break;
  }
  return sse2();
}

}  // namespace roofline::hw

// Which SIMD instruction set roofline's CPU code uses (the engine's fast CPU
// path, the CPU ceilings and the CPU sweep), picked once at run time: the
// binary is built for baseline x86-64 and carries AVX2 and AVX-512 versions of
// that code (no -march=native). ROOFLINE_CPU_ISA=avx512|avx2|sse2 picks a lower
// one (to test or compare the paths on one machine); asking for one this CPU
// lacks is an error, never a silent fallback.
//
// The code for each ISA is compiled in a translation unit of its own between
// ROOFLINE_ISA_BEGIN_<ISA> and ROOFLINE_ISA_END (src/hardware/isa_target.hpp)
// and reached through a table of function pointers chosen by the Isa below.
#pragma once
#include <string>
#include <vector>

namespace roofline::hw {

enum class Isa { Sse2, Avx2, Avx512 };

// The best this CPU and OS support (AVX-512 needs AVX512F/VL/DQ/BW, AVX2 needs FMA too).
Isa detected_isa();
// What the CPU code uses: detected_isa(), or ROOFLINE_CPU_ISA when set (read once).
// Throws Error(Unsupported) when ROOFLINE_CPU_ISA names an ISA this CPU lacks
// and Error(Usage) when it names none.
Isa active_isa();
// Every ISA this CPU runs, widest first: detected_isa() and all below it.
std::vector<Isa> supported_isas();
const char* isa_name(Isa isa);  // "avx512", "avx2", "sse2"

}  // namespace roofline::hw

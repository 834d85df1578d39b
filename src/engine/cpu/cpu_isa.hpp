// Which SIMD instruction set the fast CPU path uses, picked once at run time
// (the binary is built for baseline x86-64 and carries AVX2 and AVX-512
// versions of its kernels; no -march=native). ROOFLINE_CPU_ISA=avx512|avx2|sse2
// picks a lower one (to test or compare the paths on one machine); asking for
// one this CPU lacks is an error, never a silent fallback.
#pragma once
#include <string>

namespace roofline::engine::fast {

enum class Isa { Sse2, Avx2, Avx512 };

// The best this CPU and OS support (AVX-512 needs AVX512F/VL/DQ/BW, AVX2 needs FMA too).
Isa detected_isa();
// What the kernels use: detected_isa(), or ROOFLINE_CPU_ISA when set (read once).
// Throws Error(Unsupported) when ROOFLINE_CPU_ISA names an ISA this CPU lacks
// and Error(Usage) when it names none.
Isa active_isa();
const char* isa_name(Isa isa);  // "avx512", "avx2", "sse2"
// "AVX-512 (16 lanes, FMA)" etc., for reports.
std::string isa_description(Isa isa);

}  // namespace roofline::engine::fast

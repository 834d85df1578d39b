// The ceilings' SIMD loop sets by ISA (simd.hpp); each set is compiled in
// simd_<isa>.cpp.
#include "src/ceilings/cpu/simd.hpp"

#include "src/hardware/isa_target.hpp"

namespace roofline::ceilings::cpu {

// 1.0, but the compiler cannot know it (see addmul_peak_impl in simd_body.inc).
volatile double g_unknown_one = 1.0;

const SimdLoops& simd_loops(hw::Isa isa) {
  return hw::for_isa(isa, &simd_loops_avx512, &simd_loops_avx2, &simd_loops_sse2);
}

const SimdLoops& simd_loops() {
  static const SimdLoops& k = simd_loops(hw::active_isa());
  return k;
}

std::vector<const SimdLoops*> supported_loops() {
  std::vector<const SimdLoops*> out;
  for (hw::Isa isa : hw::supported_isas()) out.push_back(&simd_loops(isa));
  return out;
}

}  // namespace roofline::ceilings::cpu

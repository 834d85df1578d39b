#include "src/engine/cpu/optim_loops.hpp"

#include "src/hardware/isa_target.hpp"

namespace roofline::engine::fast {

const OptimLoops& optim_loops(hw::Isa isa) {
  return hw::for_isa(isa, &optim_loops_avx512, &optim_loops_avx2, &optim_loops_sse2);
}

const OptimLoops& optim_loops() {
  static const OptimLoops& set = optim_loops(hw::active_isa());
  return set;
}

}  // namespace roofline::engine::fast

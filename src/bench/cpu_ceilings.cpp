// PLACEHOLDER until the CPU-ceilings work lands.
#include "roofline/bench/cpu_ceilings.hpp"
#include "roofline/core/error.hpp"

namespace roofline::bench {
std::vector<Figure> measure_cpu_ceilings(const CeilingOptions&, const Progress&) {
  throw_unsupported("CPU ceilings are not implemented yet");
}
}  // namespace roofline::bench

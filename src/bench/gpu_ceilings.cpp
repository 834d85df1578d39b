// PLACEHOLDER until the GPU-ceilings work lands.
#include "roofline/bench/gpu_ceilings.hpp"
#include "roofline/core/error.hpp"

namespace roofline::bench {
std::vector<Figure> measure_gpu_ceilings(int, const CeilingOptions&, const Progress&) {
  throw_unsupported("GPU ceilings are not implemented yet");
}
}  // namespace roofline::bench

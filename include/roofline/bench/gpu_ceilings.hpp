// GPU ceilings: DRAM/L2/shared-memory bandwidth, CUDA-core FMA rates,
// tensor-core rates, host<->device bandwidth, launch and DRAM latency, and
// Little's law. In a CPU-only build measure_gpu_ceilings throws Unsupported.
#pragma once
#include <vector>

#include "roofline/bench/cpu_ceilings.hpp"

namespace roofline::bench {

std::vector<Figure> measure_gpu_ceilings(int device, const CeilingOptions& opts, const Progress& progress);

}  // namespace roofline::bench

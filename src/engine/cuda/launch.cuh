// Launch helpers shared by the engine's .cu files.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "roofline/cuda/check.hpp"
#include "src/engine/cuda/cuda_state.hpp"

namespace roofline::engine::cuda_ops {

constexpr int kThreads = 256;

// Blocks for a grid-stride loop over n elements: enough to fill the GPU, no
// more (the loops cover the rest).
inline unsigned blocks_for(std::int64_t n, const CudaState* st, int threads = kThreads) {
  const std::int64_t want = (n + threads - 1) / threads;
  const std::int64_t cap = std::int64_t(std::max(st->sm_count, 1)) * 16;
  return static_cast<unsigned>(std::max<std::int64_t>(1, std::min(want, cap)));
}

}  // namespace roofline::engine::cuda_ops

// Cleans the L2 cache of one CUDA context before a profiled launch
// (RangeProfilerOptions::l2_clean, docs/counters.md "DRAM writes"). Driver API
// only, in the launch's own context: the range profiler calls it from inside
// CUPTI launch callbacks, where the CUDA runtime's idea of the current device
// may not be the launch's context. Included only from *_gpu.cpp files.
#pragma once
#include <cuda.h>

#include <cstddef>

#include "roofline/profiler/counter_status.hpp"
#include "roofline/profiler/range_profiler.hpp"

namespace roofline::prof::detail {

class L2Cleaner {
 public:
  L2Cleaner() = default;
  ~L2Cleaner() { release(); }
  L2Cleaner(const L2Cleaner&) = delete;
  L2Cleaner& operator=(const L2Cleaner&) = delete;

  // Allocates and zeroes the scratch buffer in `ctx` and, for Evict, loads the
  // kernel. On failure the cleaner stays off (mode() == None) and the status
  // says why; the caller warns and profiles without cleaning.
  CounterStatus init(CUcontext ctx, L2Clean mode);
  // Waits for the context's work, cleans L2, waits again. The caller marks the
  // thread as inside an internal call (its own launch callbacks must ignore this).
  CounterStatus clean();
  // Frees the scratch and the module while the context still exists.
  void release() noexcept;
  L2Clean mode() const { return mode_; }
  std::size_t scratch_bytes() const { return bytes_; }

 private:
  CUcontext ctx_ = nullptr;
  L2Clean mode_ = L2Clean::None;
  CUdeviceptr scratch_ = 0;
  std::size_t bytes_ = 0;  // what a clean reads or writes (the allocation has a little more for the sink)
  CUmodule module_ = nullptr;
  CUfunction fn_ = nullptr;
  unsigned grid_ = 0;
};

}  // namespace roofline::prof::detail

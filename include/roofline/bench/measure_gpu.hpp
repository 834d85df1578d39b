// GPU timing with CUDA events on a dedicated stream; see measure.hpp for the
// discipline. CUDA builds only.
#pragma once
#include <cuda_runtime.h>

#include <functional>
#include <memory>

#include "roofline/bench/measure.hpp"
#include "roofline/cuda/memory.hpp"

namespace roofline::bench {

class GpuTimer {
 public:
  explicit GpuTimer(int device);
  ~GpuTimer();
  GpuTimer(const GpuTimer&) = delete;
  GpuTimer& operator=(const GpuTimer&) = delete;

  int device() const { return device_; }
  cudaStream_t stream() const { return stream_.get(); }
  double max_sm_clock_mhz() const { return max_clock_mhz_; }
  // The SM clock now, from NVML (0 when NVML is not available).
  double sm_clock_mhz() const;
  // NVML throttle reasons now, when known.
  bool throttling_now() const;

  // Times `launch(stream)` (one or more kernels) per sample with events.
  // `work_per_sample` > 1 divides each sample's time (several launches per sample).
  Measurement measure(const std::function<void(cudaStream_t)>& launch, const MeasureOptions& opts,
                      int launches_per_sample = 1);

  // Overwrites the whole L2 (a memset of 2 x its size).
  void flush_l2();

 private:
  int device_;
  cuda::Stream stream_;
  cuda::DeviceBuffer<char> flush_;
  double max_clock_mhz_ = 0;
  struct Nvml;
  std::unique_ptr<Nvml> nvml_;
};

}  // namespace roofline::bench

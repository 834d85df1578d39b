// GPU timing with CUDA events on a dedicated stream; see measure.hpp for the
// discipline. CUDA builds only.
#pragma once
#include <cuda_runtime.h>

#include <functional>
#include <memory>

#include "roofline/measure/measure.hpp"
#include "roofline/cuda/memory.hpp"

namespace roofline::measure {

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
  // `launches_per_sample` > 1 divides each sample's time (several launches per sample).
  // `sample_clock_mhz`, when given, is called after each sample has finished and
  // returns the SM clock the sample ran at (e.g. from an in-kernel clock64 /
  // %globaltimer probe; 0 when unknown): it then replaces NVML's reading as the
  // sample's clock, and NVML's is kept in Measurement::nvml_clock_mhz.
  Measurement measure(const std::function<void(cudaStream_t)>& launch, const MeasureOptions& opts,
                      int launches_per_sample = 1, const std::function<double()>& sample_clock_mhz = {});

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

// Enqueues a kernel that spins for `microseconds` on `s` (measure_delay.cu).
void spin_gpu(cudaStream_t s, double microseconds);

}  // namespace roofline::measure

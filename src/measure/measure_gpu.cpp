#include "roofline/measure/measure_gpu.hpp"

#include <chrono>
#include <optional>

#include "roofline/hardware/nvml.hpp"

namespace roofline::measure {

struct GpuTimer::Nvml {
  std::optional<hw::nvml::Gpu> gpu;
};

namespace {
// Makes `device` current and returns it: the timer's stream (the member after
// device_) must be created on its device, whichever was current before (with
// several GPUs, the previous device's session left its own current).
int select_device(int device) {
  CUDA_CHECK(cudaSetDevice(device));
  return device;
}
}  // namespace

GpuTimer::GpuTimer(int device) : device_(select_device(device)), nvml_(std::make_unique<Nvml>()) {
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  flush_ = cuda::DeviceBuffer<char>(static_cast<size_t>(prop.l2CacheSize) * 2, "L2 flush buffer");
  char bus[32] = {};
  CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof bus, device));
  nvml_->gpu = hw::nvml::Gpu::by_pci_bus_id(bus);
  if (nvml_->gpu) {
    if (auto m = nvml_->gpu->max_sm_clock_mhz()) max_clock_mhz_ = *m;
  }
  if (max_clock_mhz_ == 0) {
    int khz = 0;
    if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, device) == cudaSuccess) max_clock_mhz_ = khz / 1000.0;
  }
}

GpuTimer::~GpuTimer() = default;

double GpuTimer::sm_clock_mhz() const {
  if (!nvml_->gpu) return 0;
  auto c = nvml_->gpu->sm_clock_mhz();
  return c ? *c : 0;
}

bool GpuTimer::throttling_now() const {
  if (!nvml_->gpu) return false;
  auto r = nvml_->gpu->throttle_reasons();
  return r && hw::nvml::is_throttling(*r);
}

void GpuTimer::flush_l2() {
  CUDA_CHECK(cudaMemsetAsync(flush_.get(), 0, flush_.bytes(), stream_.get()));
}

Measurement GpuTimer::measure(const std::function<void(cudaStream_t)>& launch, const MeasureOptions& opts,
                              int launches_per_sample, const std::function<double()>& sample_clock_mhz) {
  cudaStream_t s = stream_.get();
  for (int i = 0; i < opts.warmup; ++i) {
    if (opts.flush_l2) flush_l2();
    launch(s);
  }
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cudaStreamSynchronize(s));
  cuda::Event start, stop;
  std::vector<double> samples, clocks, nvml_clocks;
  std::vector<bool> hints;
  bool kernel_clock = false;
  auto t_begin = std::chrono::steady_clock::now();
  for (;;) {
    if (opts.flush_l2) flush_l2();
    if (opts.launch_cover_us > 0) spin_gpu(s, opts.launch_cover_us);
    start.record(s);
    for (int i = 0; i < launches_per_sample; ++i) launch(s);
    stop.record(s);
    CUDA_CHECK_LAUNCH();
    // Read the clock while the work runs, then again after it: the lower of the
    // two is the one that matters for throttling.
    double c0 = sm_clock_mhz();
    bool thr = throttling_now();
    stop.sync();
    double ms = stop.since(start);
    samples.push_back(ms * 1e-3 / launches_per_sample);
    double c = c0;
    if (sample_clock_mhz) {
      double k = sample_clock_mhz();
      if (k > 0) {
        c = k;
        kernel_clock = true;
      }
      nvml_clocks.push_back(c0);
    }
    clocks.push_back(c);
    hints.push_back(thr);
    double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_begin).count();
    if (stopping_rule_met(samples, opts, elapsed)) break;
  }
  Measurement m = summarise_samples(std::move(samples), std::move(clocks), max_clock_mhz_, opts.throttle_fraction,
                                    std::move(hints));
  m.converged = m.time.rel_stdev <= opts.target_rel_stdev;
  m.clock_source = kernel_clock ? "in-kernel clock64/%globaltimer" : nvml_->gpu ? "nvml" : "";
  if (kernel_clock) {
    std::vector<double> known;
    for (double c : nvml_clocks)
      if (c > 0) known.push_back(c);
    m.nvml_clock_median_mhz = known.empty() ? 0 : summarize(known).median;
    m.nvml_clock_mhz = std::move(nvml_clocks);
  }
  return m;
}

}  // namespace roofline::measure

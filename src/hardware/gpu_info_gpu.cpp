// First version: CUDA runtime attributes and NVML. (The hardware area
// completes it: units per SM by architecture, memory type, derived peaks.)
#include <cuda_runtime.h>

#include "roofline/cuda/check.hpp"
#include "roofline/cuda/runtime.hpp"
#include "roofline/hardware/gpu_info.hpp"
#include "roofline/hardware/nvml.hpp"

namespace roofline::hw {

GpuInfo query_gpu(int ordinal) {
  cuda::require_gpu(ordinal);
  cudaDeviceProp p{};
  CUDA_CHECK(cudaGetDeviceProperties(&p, ordinal));
  GpuInfo g;
  g.ordinal = ordinal;
  g.name = p.name;
  g.cc_major = p.major;
  g.cc_minor = p.minor;
  g.sms = p.multiProcessorCount;
  g.memory_bytes = p.totalGlobalMem;
  g.memory_bus_bits = p.memoryBusWidth;
  g.l2_bytes = static_cast<std::uint64_t>(p.l2CacheSize);
  g.smem_per_sm = p.sharedMemPerMultiprocessor;
  g.smem_per_block_optin = p.sharedMemPerBlockOptin;
  g.regs_per_sm = p.regsPerMultiprocessor;
  g.max_threads_per_sm = p.maxThreadsPerMultiProcessor;
  g.warp_size = p.warpSize;
  int khz = 0;
  if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, ordinal) == cudaSuccess) g.sm_clock_max_mhz = khz / 1000.0;
  if (cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, ordinal) == cudaSuccess)
    g.mem_clock_max_mhz = khz / 1000.0;
  char bus[32] = {};
  CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof bus, ordinal));
  g.pci_bus_id = bus;
  cudaRuntimeGetVersion(&g.runtime_version);
  if (auto n = nvml::Gpu::by_pci_bus_id(bus)) {
    if (auto v = n->uuid()) g.uuid = *v;
    if (auto v = n->max_sm_clock_mhz()) g.sm_clock_max_mhz = *v;
    if (auto v = n->sm_clock_mhz()) g.sm_clock_now_mhz = *v;
    if (auto v = n->max_mem_clock_mhz()) g.mem_clock_max_mhz = *v;
    g.tdp_w = n->power_limit_w();
    if (auto v = n->driver_version()) g.driver_version = *v;
  }
  // DDR: two transfers per memory clock.
  g.bandwidth_theoretical = 2.0 * g.mem_clock_max_mhz * 1e6 * g.memory_bus_bits / 8.0;
  return g;
}

std::vector<GpuInfo> query_gpus() {
  std::vector<GpuInfo> out;
  for (int i = 0; i < cuda::gpu_count(); ++i) out.push_back(query_gpu(i));
  return out;
}

}  // namespace roofline::hw

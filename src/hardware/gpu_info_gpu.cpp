// GPU attributes from the CUDA runtime and NVML. NVML comes first for clocks
// and bus width: CUDA 13 deprecates cudaDevAttrClockRate/MemoryClockRate and
// some drivers report 0 there. Every figure records where it came from.
#include <cuda_runtime.h>

#include "roofline/cuda/check.hpp"
#include "roofline/cuda/runtime.hpp"
#include "roofline/hardware/gpu_info.hpp"
#include "roofline/hardware/nvml.hpp"

namespace roofline::hw {

namespace {

// A CUDA attribute, or 0 when the runtime does not report it (the error is
// cleared: a missing attribute is not a failure of the caller).
int attribute(cudaDeviceAttr a, int ordinal) {
  int v = 0;
  if (cudaDeviceGetAttribute(&v, a, ordinal) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return v;
}

}  // namespace

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
  g.l2_bytes = static_cast<std::uint64_t>(p.l2CacheSize);
  g.smem_per_sm = p.sharedMemPerMultiprocessor;
  g.smem_per_block_optin = p.sharedMemPerBlockOptin;
  g.regs_per_sm = p.regsPerMultiprocessor;
  g.max_threads_per_sm = p.maxThreadsPerMultiProcessor;
  g.warp_size = p.warpSize;
  char bus[32] = {};
  CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof bus, ordinal));
  g.pci_bus_id = bus;
  CUDA_CHECK(cudaRuntimeGetVersion(&g.runtime_version));

  std::optional<nvml::Gpu> n = nvml::Gpu::by_pci_bus_id(bus);
  if (n) {
    if (auto v = n->uuid()) g.uuid = *v;
    if (auto v = n->max_sm_clock_mhz(); v && *v > 0) {
      g.sm_clock_max_mhz = *v;
      g.sm_clock_source = "NVML max SM clock";
    }
    if (auto v = n->sm_clock_mhz()) g.sm_clock_now_mhz = *v;
    if (auto v = n->max_mem_clock_mhz(); v && *v > 0) {
      g.mem_clock_max_mhz = *v;
      g.mem_clock_source = "NVML max memory clock";
    }
    if (auto v = n->memory_bus_width(); v && *v > 0) {
      g.memory_bus_bits = static_cast<int>(*v);
      g.memory_bus_source = "NVML";
    }
    g.tdp_w = n->power_limit_w();
    if (auto v = n->driver_version()) g.driver_version = *v;
  }
  const std::string why_cuda =
      n ? " (NVML did not report it)" : " (NVML unavailable: " + nvml::unavailable_reason() + ")";
  if (g.sm_clock_max_mhz == 0) {
    if (int khz = attribute(cudaDevAttrClockRate, ordinal); khz > 0) {
      g.sm_clock_max_mhz = khz / 1000.0;
      g.sm_clock_source = "CUDA cudaDevAttrClockRate" + why_cuda;
    }
  }
  if (g.mem_clock_max_mhz == 0) {
    if (int khz = attribute(cudaDevAttrMemoryClockRate, ordinal); khz > 0) {
      g.mem_clock_max_mhz = khz / 1000.0;
      g.mem_clock_source = "CUDA cudaDevAttrMemoryClockRate" + why_cuda;
    }
  }
  if (g.memory_bus_bits == 0) {
    int bits = attribute(cudaDevAttrGlobalMemoryBusWidth, ordinal);
    if (bits <= 0) bits = p.memoryBusWidth;
    if (bits > 0) {
      g.memory_bus_bits = bits;
      g.memory_bus_source = "CUDA device attribute" + why_cuda;
    }
  }
  if (g.driver_version.empty()) {
    int v = 0;
    if (cudaDriverGetVersion(&v) == cudaSuccess && v > 0)
      g.driver_version = "CUDA " + std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
  }
  complete_gpu_info(g);
  return g;
}

std::vector<GpuInfo> query_gpus() {
  std::vector<GpuInfo> out;
  for (int i = 0; i < cuda::gpu_count(); ++i) out.push_back(query_gpu(i));
  return out;
}

}  // namespace roofline::hw

#include "roofline/hardware/gpu_info.hpp"

#include "roofline/core/error.hpp"
#include "roofline/cuda/runtime.hpp"

namespace roofline::hw {

nlohmann::json GpuInfo::to_json() const {
  nlohmann::json j = {{"kind", "gpu"},
                      {"ordinal", ordinal},
                      {"name", name},
                      {"uuid", uuid},
                      {"pci_bus_id", pci_bus_id},
                      {"compute_capability", std::to_string(cc_major) + "." + std::to_string(cc_minor)},
                      {"architecture", architecture},
                      {"sms", sms},
                      {"cuda_cores_per_sm", cuda_cores_per_sm},
                      {"fp64_units_per_sm", fp64_units_per_sm},
                      {"tensor_cores_per_sm", tensor_cores_per_sm},
                      {"sm_clock_max_mhz", sm_clock_max_mhz},
                      {"sm_clock_now_mhz", sm_clock_now_mhz},
                      {"mem_clock_max_mhz", mem_clock_max_mhz},
                      {"memory_bytes", memory_bytes},
                      {"memory_bus_bits", memory_bus_bits},
                      {"memory_type", memory_type},
                      {"bandwidth_theoretical", bandwidth_theoretical},
                      {"l2_bytes", l2_bytes},
                      {"smem_per_sm", smem_per_sm},
                      {"smem_per_block_optin", smem_per_block_optin},
                      {"regs_per_sm", regs_per_sm},
                      {"max_threads_per_sm", max_threads_per_sm},
                      {"warp_size", warp_size},
                      {"driver_version", driver_version},
                      {"runtime_version", runtime_version}};
  j["tdp_w"] = tdp_w ? nlohmann::json(*tdp_w) : nlohmann::json(nullptr);
  return j;
}

#if !ROOFLINE_HAVE_CUDA
GpuInfo query_gpu(int ordinal) {
  cuda::require_gpu(ordinal);  // throws: no GPU support in this build
  return {};
}
std::vector<GpuInfo> query_gpus() { return {}; }
#endif

}  // namespace roofline::hw

// What a GPU is: attributes from the CUDA runtime and NVML, per-architecture
// unit counts, and the theoretical figures derived from them.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace roofline::hw {

struct GpuInfo {
  int ordinal = 0;
  std::string name;  // "NVIDIA H100 80GB HBM3"
  std::string uuid;  // "GPU-…" when known
  std::string pci_bus_id;
  int cc_major = 0, cc_minor = 0;
  std::string architecture;  // "Hopper", "Ampere", ...
  int sms = 0;
  int cuda_cores_per_sm = 0;  // FP32 lanes per SM (0: architecture not in roofline's table)
  int fp64_units_per_sm = 0;
  int tensor_cores_per_sm = 0;
  std::string tensor_core_generation;  // "4th generation"
  double sm_clock_max_mhz = 0;         // boost limit
  double sm_clock_now_mhz = 0;         // when NVML is available
  std::string sm_clock_source;         // "NVML max SM clock", "CUDA cudaDevAttrClockRate"
  double mem_clock_max_mhz = 0;
  std::string mem_clock_source;
  std::uint64_t memory_bytes = 0;
  int memory_bus_bits = 0;
  std::string memory_bus_source;
  std::string memory_type;           // "HBM3", "GDDR6X", ... (from the datasheet entry or guessed)
  std::string memory_type_source;    // "datasheet <id>" or "guessed from ..."
  double bandwidth_theoretical = 0;  // bytes/s, from bus width x memory clock x 2 (0 when either is unknown)
  std::string datasheet_id;          // the matching datasheet entry, empty when none
  std::uint64_t l2_bytes = 0;
  std::uint64_t smem_per_sm = 0;
  std::uint64_t smem_per_block_optin = 0;
  int regs_per_sm = 0;
  int max_threads_per_sm = 0;
  int warp_size = 32;
  std::optional<double> tdp_w;  // NVML default power limit
  std::string driver_version;
  int runtime_version = 0;

  int cuda_cores() const { return sms * cuda_cores_per_sm; }
  int tensor_cores() const { return sms * tensor_cores_per_sm; }
  nlohmann::json to_json() const;
  // The inverse of to_json() (a device sheet read back from the store).
  static GpuInfo from_json(const nlohmann::json& j);
};

// Fills what follows from the queried attributes: architecture and units per
// SM (by compute capability), the datasheet entry, memory type, theoretical
// bandwidth. query_gpu() calls it; tests call it on hand-made GpuInfos.
void complete_gpu_info(GpuInfo& gpu);

// Every GPU the CUDA runtime sees (empty when none, or in a CPU-only build).
std::vector<GpuInfo> query_gpus();
// One GPU; throws Error(Device) when it does not exist.
GpuInfo query_gpu(int ordinal);

}  // namespace roofline::hw

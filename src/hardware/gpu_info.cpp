// GpuInfo's JSON form and everything derived from the queried attributes;
// plain C++ so the tests run it on hand-made GpuInfos.
#include "roofline/hardware/gpu_info.hpp"

#include <fmt/format.h>

#include "roofline/core/error.hpp"
#include "roofline/cuda/runtime.hpp"
#include "roofline/hardware/datasheet.hpp"
#include "roofline/hardware/gpu_arch.hpp"

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
                      {"tensor_core_generation", tensor_core_generation},
                      {"cuda_cores", cuda_cores()},
                      {"tensor_cores", tensor_cores()},
                      {"sm_clock_max_mhz", sm_clock_max_mhz},
                      {"sm_clock_now_mhz", sm_clock_now_mhz},
                      {"sm_clock_source", sm_clock_source},
                      {"mem_clock_max_mhz", mem_clock_max_mhz},
                      {"mem_clock_source", mem_clock_source},
                      {"memory_bytes", memory_bytes},
                      {"memory_bus_bits", memory_bus_bits},
                      {"memory_bus_source", memory_bus_source},
                      {"memory_type", memory_type},
                      {"memory_type_source", memory_type_source},
                      {"bandwidth_theoretical", bandwidth_theoretical},
                      {"datasheet_id", datasheet_id},
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

GpuInfo GpuInfo::from_json(const nlohmann::json& j) {
  GpuInfo g;
  g.ordinal = j.value("ordinal", 0);
  g.name = j.value("name", "");
  g.uuid = j.value("uuid", "");
  g.pci_bus_id = j.value("pci_bus_id", "");
  std::string cc = j.value("compute_capability", "0.0");
  if (auto dot = cc.find('.'); dot != std::string::npos) {
    g.cc_major = std::atoi(cc.substr(0, dot).c_str());
    g.cc_minor = std::atoi(cc.substr(dot + 1).c_str());
  }
  g.architecture = j.value("architecture", "");
  g.sms = j.value("sms", 0);
  g.cuda_cores_per_sm = j.value("cuda_cores_per_sm", 0);
  g.fp64_units_per_sm = j.value("fp64_units_per_sm", 0);
  g.tensor_cores_per_sm = j.value("tensor_cores_per_sm", 0);
  g.tensor_core_generation = j.value("tensor_core_generation", "");
  g.sm_clock_max_mhz = j.value("sm_clock_max_mhz", 0.0);
  g.sm_clock_now_mhz = j.value("sm_clock_now_mhz", 0.0);
  g.sm_clock_source = j.value("sm_clock_source", "");
  g.mem_clock_max_mhz = j.value("mem_clock_max_mhz", 0.0);
  g.mem_clock_source = j.value("mem_clock_source", "");
  g.memory_bytes = j.value("memory_bytes", std::uint64_t{0});
  g.memory_bus_bits = j.value("memory_bus_bits", 0);
  g.memory_bus_source = j.value("memory_bus_source", "");
  g.memory_type = j.value("memory_type", "");
  g.memory_type_source = j.value("memory_type_source", "");
  g.bandwidth_theoretical = j.value("bandwidth_theoretical", 0.0);
  g.datasheet_id = j.value("datasheet_id", "");
  g.l2_bytes = j.value("l2_bytes", std::uint64_t{0});
  g.smem_per_sm = j.value("smem_per_sm", std::uint64_t{0});
  g.smem_per_block_optin = j.value("smem_per_block_optin", std::uint64_t{0});
  g.regs_per_sm = j.value("regs_per_sm", 0);
  g.max_threads_per_sm = j.value("max_threads_per_sm", 0);
  g.warp_size = j.value("warp_size", 32);
  if (j.contains("tdp_w") && j["tdp_w"].is_number()) g.tdp_w = j["tdp_w"].get<double>();
  g.driver_version = j.value("driver_version", "");
  g.runtime_version = j.value("runtime_version", 0);
  return g;
}

namespace {

// Memory type when no datasheet entry says: HBM stacks come in 1024-bit
// interfaces, GDDR in 32-bit channels; the architecture narrows the generation.
std::string guess_memory_type(const GpuInfo& g) {
  if (g.cc_major == 8 && g.cc_minor == 7) return "LPDDR5";  // Jetson Orin: shared system memory
  if (g.memory_bus_bits >= 2048) {
    switch (g.cc_major) {
      case 6:
      case 7:
        return "HBM2";
      case 8:
        return "HBM2 or HBM2e";
      case 9:
        return "HBM3 or HBM3e";
      case 10:
        return "HBM3e";
      default:
        return "HBM";
    }
  }
  if (g.memory_bus_bits > 0) return g.cc_major >= 12 ? "GDDR7" : "GDDR (GDDR5/6/6X)";
  return "";
}

}  // namespace

void complete_gpu_info(GpuInfo& g) {
  g.architecture = architecture_name(g.cc_major, g.cc_minor);
  if (const GpuArch* a = gpu_arch(g.cc_major, g.cc_minor)) {
    g.cuda_cores_per_sm = a->fp32_lanes_per_sm;
    g.fp64_units_per_sm = a->fp64_units_per_sm;
    g.tensor_cores_per_sm = a->tensor_cores_per_sm;
    g.tensor_core_generation = a->tensor_generation;
  }
  DatasheetMatch m = explain_match(g);
  g.datasheet_id = m.entry ? m.entry->id : "";
  if (m.entry) {
    g.memory_type = m.entry->memory_type;
    g.memory_type_source = "datasheet " + m.entry->id;
  } else if (std::string guess = guess_memory_type(g); !guess.empty()) {
    g.memory_type = guess;
    g.memory_type_source = fmt::format("guessed from the {}-bit bus and compute capability {}.{} (no datasheet entry)",
                                       g.memory_bus_bits, g.cc_major, g.cc_minor);
  }
  // Double data rate: NVML and CUDA report the memory clock at half the
  // transfer rate for HBM and GDDR alike (H100: 2619 MHz x 2 x 640 B = 3.35 TB/s).
  g.bandwidth_theoretical = (g.mem_clock_max_mhz > 0 && g.memory_bus_bits > 0)
                                ? 2.0 * g.mem_clock_max_mhz * 1e6 * g.memory_bus_bits / 8.0
                                : 0.0;
}

}  // namespace roofline::hw

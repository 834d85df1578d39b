// Published figures of known GPUs, each with its source, and the theoretical
// roofline of any device: from its datasheet entry when one matches, else
// derived from its attributes (and marked as derived).
#pragma once
#include <map>
#include <string>
#include <vector>

#include "roofline/hardware/cpu_info.hpp"
#include "roofline/hardware/gpu_info.hpp"
#include "roofline/model/roofline.hpp"

namespace roofline::hw {

struct Datasheet {
  std::string id;            // "h100-sxm5-80gb"
  std::string name;          // "NVIDIA H100 SXM5 80GB"
  std::string architecture;  // "Hopper"
  std::string form_factor;   // "SXM5", "PCIe", ...
  std::string memory_type;   // "HBM3"
  double memory_gb = 0;
  double bandwidth = 0;      // bytes/s
  double tdp_w = 0;
  // Peak rates in FLOP/s (OP/s for int8), keyed like ceilings: "fp32.cuda",
  // "bf16.tensor" (dense), "bf16.tensor.sparse" (2:4 sparse), ...
  std::map<std::string, double> peaks;
  std::vector<std::string> sources;  // document titles and URLs
};

const std::vector<Datasheet>& datasheets();
// The entry describing this GPU (name, memory size and SM count decide
// between variants), or nullptr.
const Datasheet* match_datasheet(const GpuInfo& gpu);
const Datasheet* find_datasheet(const std::string& id_or_name);

// Theoretical ceilings: datasheet figures (Source::Datasheet) when an entry
// matches, else figures derived from the attributes (Source::Derived).
model::Roofline reference_roofline(const GpuInfo& gpu);
model::Roofline reference_roofline(const CpuInfo& cpu);

}  // namespace roofline::hw

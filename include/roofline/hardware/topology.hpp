// How the GPUs of one machine are linked, as `nvidia-smi topo -m` shows it:
// a pair joined by NVLink (how many links, which generation, what the
// datasheet gives them), or by PCIe only, and then through what (one PCIe
// switch, several, a host bridge, the host bridges of one NUMA node, or the
// link between sockets). NVML gives the facts (query_gpu_links); what they
// mean is a pure function (describe_link), tested without a GPU.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "roofline/core/report.hpp"
#include "roofline/hardware/gpu_info.hpp"

namespace roofline::hw {

// NVML's nvmlGpuTopologyLevel_t: where the PCIe paths of two GPUs meet.
namespace pcie_level {
inline constexpr int kBoard = 0;              // NVML_TOPOLOGY_INTERNAL: the same board
inline constexpr int kSingleSwitch = 10;      // NVML_TOPOLOGY_SINGLE
inline constexpr int kMultipleSwitches = 20;  // NVML_TOPOLOGY_MULTIPLE
inline constexpr int kHostBridge = 30;        // NVML_TOPOLOGY_HOSTBRIDGE
inline constexpr int kNumaNode = 40;          // NVML_TOPOLOGY_NODE
inline constexpr int kSystem = 50;            // NVML_TOPOLOGY_SYSTEM: across NUMA nodes (sockets)
}  // namespace pcie_level

// What NVML says about one pair of GPUs.
struct LinkFacts {
  int nvlinks = 0;                    // active NVLinks between them (0: PCIe only)
  bool nvswitch = false;              // the links meet at NVSwitches rather than GPU to GPU
  std::optional<int> nvlink_version;  // the NVLink generation: 2 (V100) ... 5 (B200)
  std::optional<int> pcie_level;      // a pcie_level value; nullopt when not reported
};

// What the facts mean.
struct LinkMeaning {
  std::string label;                // nvidia-smi's: "NV18", "PIX", "PXB", "PHB", "NODE", "SYS"; "?" when unknown
  std::string description;          // in words, with the datasheet figure for NVLink
  std::optional<double> bandwidth;  // bytes/s each way by the datasheet: NVLink of a known generation only
  std::string pcie;                 // the PCIe path's label ("PXB"), for NVLink pairs too; "?" when unknown
};
LinkMeaning describe_link(const LinkFacts& facts);

// One pair of GPUs of a machine.
struct GpuPairLink {
  int gpu_a = 0, gpu_b = 0;        // CUDA ordinals
  std::optional<LinkFacts> facts;  // empty when NVML cannot say; `remark` says why
  std::string remark;              // why the facts are missing, or a caveat on them
};
// Every pair of `gpus` (found in NVML by PCI bus id), in order. The NVLink
// generation is the architecture's (nvlink_generation_of) where the table has
// it, else NVML's; a remark says when they disagree. Without NVML: empty.
std::vector<GpuPairLink> query_gpu_links(const std::vector<GpuInfo>& gpus);
// Table "interconnect": one row per pair; `why_none`, when given, is the note
// of a table without rows.
void add_interconnect_table(Report& r, const std::vector<GpuPairLink>& links, const std::string& why_none = {});
// Both, for `roofline device`: nothing with fewer than two GPUs; without NVML
// an empty table whose note says why.
void add_interconnect(Report& r, const std::vector<GpuInfo>& gpus);

// The datasheet's bandwidth each way between two GPUs of this machine (NVLink
// of a known generation: links × the per-link figure), with its label
// ("datasheet: NV18, 18 NVLink 4 links ..."), for the p2p and NCCL ceilings' "theoretical"
// column; nullopt for PCIe-only pairs, an unknown generation or no NVML.
struct LinkFigure {
  double bytes_per_s = 0;
  std::string label;
};
std::optional<LinkFigure> datasheet_link(int gpu_a, int gpu_b);

}  // namespace roofline::hw

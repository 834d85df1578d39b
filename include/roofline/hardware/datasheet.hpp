// Published figures of known GPUs, each with its source, and the theoretical
// roofline of any device: from its datasheet entry when one matches, else
// derived from its attributes (and marked as derived).
//
// Dense and 2:4-sparse tensor rates are separate keys, CUDA-core and
// tensor-core rates are separate keys, and every board variant (SXM, PCIe,
// NVL; memory size) is its own entry: the three confusions that make
// published peaks wrong.
#pragma once
#include <cstdint>
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
  double bandwidth = 0;  // bytes/s
  double tdp_w = 0;
  // Peak rates in FLOP/s (OP/s for int8), keyed like ceilings: "fp32.cuda",
  // "bf16.tensor" (dense), "bf16.tensor.sparse" (2:4 sparse), ... A variant
  // sits between unit and ".sparse": "fp16.tensor.fp16acc" (FP16 accumulate,
  // where it differs from FP32 accumulate). Formats a GPU lacks are absent.
  std::map<std::string, double> peaks;
  std::vector<std::string> sources;  // document titles and URLs; basis cites them as [1], [2], ...

  // Added by the hardware area:
  int sms = 0;
  int memory_bus_bits = 0;
  double boost_mhz = 0;                      // max SM clock; 0 when NVIDIA publishes none
  std::vector<std::string> name_tokens;      // words that name the product in a driver name: {"h100"}
  std::string form_token;                    // how a driver name spells the form factor: "sxm", "pcie", "nvl"
  std::map<std::string, std::string> basis;  // per peak key: "[1]", "[1]: sparse 1,979 / 2", "derived: ..."
  std::string notes;

  // True when the figure is not printed by NVIDIA but derived by roofline
  // from one that is (e.g. FP64 on L4 as 1/64 of FP32); such figures carry
  // Source::Derived in ceilings.
  bool is_derived(const std::string& key) const;
};

const std::vector<Datasheet>& datasheets();
// The entry describing this GPU (name, memory size and SM count decide
// between variants), or nullptr.
const Datasheet* match_datasheet(const GpuInfo& gpu);
// An entry by id or full name (case-insensitive), or nullptr.
const Datasheet* find_datasheet(const std::string& id_or_name);
// Entries whose id or name contains `query` (case-insensitive).
std::vector<const Datasheet*> search_datasheets(const std::string& query);

// Why a GPU matched an entry (or why none did), for `roofline device`.
struct DatasheetMatch {
  const Datasheet* entry = nullptr;
  std::string reason;                 // the evidence for the match, or why there is none
  std::vector<std::string> rejected;  // "h100-pcie-80gb: 114 SMs, this GPU has 132"
  std::vector<const Datasheet*> fits; // every entry nothing speaks against (entry is set when there is one)
};
DatasheetMatch explain_match(const std::string& name, std::uint64_t memory_bytes, int sms);
DatasheetMatch explain_match(const GpuInfo& gpu);

// NVLink, per generation, from the datasheet of the SXM board that brought it:
// NVIDIA prints the total of every link in both directions (H100 SXM: 900
// GB/s over 18 links), so one link carries total / links / 2 each way.
struct NvlinkGeneration {
  int version = 0;                 // 2 (V100), 3 (A100), 4 (H100, H200), 5 (B200)
  std::string gpus;                // the boards the figure is printed for: "H100 SXM, H200 SXM"
  int cc_major = 0, cc_minor = 0;  // the architecture that carries it (GH100: 9.0)
  int links = 0;                   // links per GPU on that board
  double total_both_ways = 0;      // bytes/s, as printed
  std::string basis;               // where the figures come from
  double per_link_each_way() const { return links > 0 ? total_both_ways / links / 2 : 0; }
};
const std::vector<NvlinkGeneration>& nvlink_generations();
// The entry for an NVLink version, or nullptr.
const NvlinkGeneration* nvlink_generation(int version);
// The NVLink an architecture carries (compute capability 9.0: NVLink 4), or nullptr.
const NvlinkGeneration* nvlink_generation_of(int cc_major, int cc_minor);

// Theoretical ceilings: datasheet figures (Source::Datasheet) when an entry
// matches, else figures derived from the attributes (Source::Derived). Dense
// rates only: 2:4-sparse peaks are not reachable by dense work and would make
// every dense kernel look half as efficient as it is; peaks.hpp lists them.
model::Roofline reference_roofline(const GpuInfo& gpu);
model::Roofline reference_roofline(const CpuInfo& cpu);

}  // namespace roofline::hw

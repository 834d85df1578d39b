// NVML, loaded at run time (libnvidia-ml.so.1 ships with the NVIDIA driver, not
// the toolkit), for what the CUDA runtime does not say: current clocks, clock
// throttle reasons, power limits, temperature, and how GPUs are linked (NVLink,
// the PCIe path between them). Every query returns nullopt when NVML or the
// figure is not available; callers say so instead of guessing.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace roofline::hw::nvml {

bool available();
std::string unavailable_reason();

// A GPU identified by PCI bus id ("0000:18:00.0"), as cudaDeviceGetPCIBusId prints it.
class Gpu {
 public:
  static std::optional<Gpu> by_pci_bus_id(const std::string& bus_id);
  static std::optional<Gpu> by_index(unsigned index);

  std::optional<unsigned> sm_clock_mhz() const;        // current
  std::optional<unsigned> max_sm_clock_mhz() const;    // boost limit
  std::optional<unsigned> mem_clock_mhz() const;       // current
  std::optional<unsigned> max_mem_clock_mhz() const;
  std::optional<unsigned> memory_bus_width() const;    // bits
  std::optional<double> power_limit_w() const;         // default (TDP) limit
  std::optional<double> enforced_power_limit_w() const;
  std::optional<double> power_w() const;               // current draw
  std::optional<unsigned> temperature_c() const;
  // Bitmask of NVML clock event ("throttle") reasons; see throttle_text().
  std::optional<std::uint64_t> throttle_reasons() const;
  std::optional<std::string> name() const;
  std::optional<std::string> uuid() const;
  std::optional<std::string> driver_version() const;
  // As NVML prints it ("00000000:18:00.0": eight-digit domain, upper-case hex);
  // compare through normalized_bus_id().
  std::optional<std::string> pci_bus_id() const;

  // Active NVLinks between this GPU and `peer`: links whose far end is the
  // peer, or, where both GPUs' links end at NVSwitches, the fewer of the two
  // GPUs' switch links (every switch is assumed to reach every GPU, as on HGX
  // boards). 0 links when neither; nullopt when NVML cannot say.
  struct NvlinkPath {
    int links = 0;
    bool through_switch = false;
  };
  std::optional<NvlinkPath> nvlinks_to(const Gpu& peer) const;
  // The NVLink generation of this GPU's first active link (NVML's
  // nvmlNvlinkVersion_t, decoded by nvlink_generation_of_nvml); nullopt
  // without an active link or when NVML does not say.
  std::optional<int> nvlink_version() const;
  // Where the PCIe paths of this GPU and `peer` meet, NVML's
  // nvmlGpuTopologyLevel_t: 0 the same board, 10 one PCIe switch, 20 several
  // switches, 30 a host bridge, 40 within a NUMA node, 50 across NUMA nodes.
  std::optional<int> common_ancestor(const Gpu& peer) const;

 private:
  explicit Gpu(void* h) : h_(h) {}
  void* h_;
};

// A PCI bus id in one spelling for comparisons: lower-case hex, the domain
// with four digits where it fits ("00000000:1A:00.0" and CUDA's
// "0000:1a:00.0" both give "0000:1a:00.0"). Text that is no bus id comes back
// lower-cased.
std::string normalized_bus_id(const std::string& bus_id);
// NVML's nvmlNvlinkVersion_t (1 = 1.0, 2 = 2.0, 3 = 2.2, 4 = 3.0, 5 = 3.1,
// 6 = 4.0, 7 = 5.0, 8 = 6.0) as the NVLink generation (1..6); nullopt for 0
// (invalid) and values past the table.
std::optional<int> nvlink_generation_of_nvml(unsigned version);

// Reasons that lower clocks below what the workload asked for (power cap,
// thermal, hardware slowdown); idle and application-clock settings excluded.
bool is_throttling(std::uint64_t reasons);
std::string throttle_text(std::uint64_t reasons);

}  // namespace roofline::hw::nvml

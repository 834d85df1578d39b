// NVML, loaded at run time (libnvidia-ml.so.1 ships with the NVIDIA driver, not
// the toolkit), for what the CUDA runtime does not say: current clocks, clock
// throttle reasons, power limits, temperature. Every query returns nullopt
// when NVML or the figure is not available; callers say so instead of guessing.
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

 private:
  explicit Gpu(void* h) : h_(h) {}
  void* h_;
};

// Reasons that lower clocks below what the workload asked for (power cap,
// thermal, hardware slowdown); idle and application-clock settings excluded.
bool is_throttling(std::uint64_t reasons);
std::string throttle_text(std::uint64_t reasons);

}  // namespace roofline::hw::nvml

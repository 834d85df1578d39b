#include "roofline/hardware/nvml.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <iterator>
#include <mutex>
#include <vector>

namespace roofline::hw::nvml {

namespace {

using Ret = int;  // nvmlReturn_t; 0 is NVML_SUCCESS
using Handle = void*;

// nvmlPciInfo_t (nvml.h; the layout of nvmlDeviceGetPciInfo_v3 and nvmlDeviceGetNvLinkRemotePciInfo_v2).
struct PciInfo {
  char bus_id_legacy[16];  // NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE
  unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
  char bus_id[32];  // NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE: "00000000:18:00.0"
};

struct Api {
  void* lib = nullptr;
  std::string reason;
  Ret (*init)() = nullptr;
  Ret (*by_bus)(const char*, Handle*) = nullptr;
  Ret (*by_index)(unsigned, Handle*) = nullptr;
  Ret (*clock)(Handle, int, unsigned*) = nullptr;
  Ret (*max_clock)(Handle, int, unsigned*) = nullptr;
  Ret (*bus_width)(Handle, unsigned*) = nullptr;
  Ret (*power_default)(Handle, unsigned*) = nullptr;
  Ret (*power_enforced)(Handle, unsigned*) = nullptr;
  Ret (*power_usage)(Handle, unsigned*) = nullptr;
  Ret (*temperature)(Handle, int, unsigned*) = nullptr;
  Ret (*reasons)(Handle, unsigned long long*) = nullptr;
  Ret (*name)(Handle, char*, unsigned) = nullptr;
  Ret (*uuid)(Handle, char*, unsigned) = nullptr;
  Ret (*driver)(char*, unsigned) = nullptr;
  Ret (*pci)(Handle, PciInfo*) = nullptr;
  Ret (*link_state)(Handle, unsigned, int*) = nullptr;  // nvmlEnableState_t
  Ret (*link_remote_pci)(Handle, unsigned, PciInfo*) = nullptr;
  Ret (*link_remote_type)(Handle, unsigned, int*) = nullptr;  // nvmlIntNvLinkDeviceType_t
  Ret (*link_version)(Handle, unsigned, unsigned*) = nullptr;
  Ret (*common_ancestor)(Handle, Handle, int*) = nullptr;  // nvmlGpuTopologyLevel_t
};

template <class F>
void sym(void* lib, F& f, const char* name) {
  f = reinterpret_cast<F>(dlsym(lib, name));
}

const Api& api() {
  static Api a;
  static std::once_flag once;
  std::call_once(once, [] {
    a.lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!a.lib) {
      a.reason = "libnvidia-ml.so.1 (part of the NVIDIA driver) could not be loaded";
      return;
    }
    sym(a.lib, a.init, "nvmlInit_v2");
    sym(a.lib, a.by_bus, "nvmlDeviceGetHandleByPciBusId_v2");
    sym(a.lib, a.by_index, "nvmlDeviceGetHandleByIndex_v2");
    sym(a.lib, a.clock, "nvmlDeviceGetClockInfo");
    sym(a.lib, a.max_clock, "nvmlDeviceGetMaxClockInfo");
    sym(a.lib, a.bus_width, "nvmlDeviceGetMemoryBusWidth");
    sym(a.lib, a.power_default, "nvmlDeviceGetPowerManagementDefaultLimit");
    sym(a.lib, a.power_enforced, "nvmlDeviceGetEnforcedPowerLimit");
    sym(a.lib, a.power_usage, "nvmlDeviceGetPowerUsage");
    sym(a.lib, a.temperature, "nvmlDeviceGetTemperature");
    sym(a.lib, a.reasons, "nvmlDeviceGetCurrentClocksEventReasons");
    if (!a.reasons) sym(a.lib, a.reasons, "nvmlDeviceGetCurrentClocksThrottleReasons");
    sym(a.lib, a.name, "nvmlDeviceGetName");
    sym(a.lib, a.uuid, "nvmlDeviceGetUUID");
    sym(a.lib, a.driver, "nvmlSystemGetDriverVersion");
    sym(a.lib, a.pci, "nvmlDeviceGetPciInfo_v3");
    if (!a.pci) sym(a.lib, a.pci, "nvmlDeviceGetPciInfo_v2");  // the same layout
    sym(a.lib, a.link_state, "nvmlDeviceGetNvLinkState");
    sym(a.lib, a.link_remote_pci, "nvmlDeviceGetNvLinkRemotePciInfo_v2");
    sym(a.lib, a.link_remote_type, "nvmlDeviceGetNvLinkRemoteDeviceType");
    sym(a.lib, a.link_version, "nvmlDeviceGetNvLinkVersion");
    sym(a.lib, a.common_ancestor, "nvmlDeviceGetTopologyCommonAncestor");
    if (!a.init || a.init() != 0) {
      a.reason = "nvmlInit failed";
      a.lib = nullptr;
    }
  });
  return a;
}

constexpr int kClockSm = 1;   // NVML_CLOCK_SM
constexpr int kClockMem = 2;  // NVML_CLOCK_MEM
// Link indices tried: NVML_NVLINK_MAX_LINKS is 18 in CUDA 12's nvml.h and 36 in
// later ones; a GPU answers an index it lacks with an error, which is skipped.
constexpr unsigned kMaxLinks = 36;
constexpr int kFeatureEnabled = 1;  // NVML_FEATURE_ENABLED
constexpr int kRemoteGpu = 0;       // NVML_NVLINK_DEVICE_TYPE_GPU
constexpr int kRemoteSwitch = 2;    // NVML_NVLINK_DEVICE_TYPE_SWITCH

// What the active links of one GPU reach: how many end at `peer_bus` (normalised), how many at NVSwitches.
struct LinkCount {
  int to_peer = 0, to_switch = 0, active = 0;
};
std::optional<LinkCount> count_links(Handle h, const std::string& peer_bus) {
  const Api& a = api();
  if (!a.lib || !a.link_state) return std::nullopt;
  LinkCount c;
  for (unsigned link = 0; link < kMaxLinks; ++link) {
    int state = 0;
    // NOT_SUPPORTED (a GPU without NVLink) or INVALID_ARGUMENT (an index past its links): no link there.
    if (a.link_state(h, link, &state) != 0 || state != kFeatureEnabled) continue;
    ++c.active;
    int type = -1;
    if (a.link_remote_type && a.link_remote_type(h, link, &type) != 0) type = -1;
    if (type == kRemoteSwitch) {
      ++c.to_switch;
      continue;
    }
    if (type != kRemoteGpu && type != -1) continue;  // an IBM NPU or unknown: not a GPU of this machine
    PciInfo remote{};
    if (peer_bus.empty() || !a.link_remote_pci || a.link_remote_pci(h, link, &remote) != 0) continue;
    remote.bus_id[sizeof remote.bus_id - 1] = '\0';
    if (normalized_bus_id(remote.bus_id) == peer_bus) ++c.to_peer;
  }
  return c;
}

template <class F, class... A>
std::optional<unsigned> query_u(F f, A... args) {
  unsigned v = 0;
  if (!f || f(args..., &v) != 0) return std::nullopt;
  return v;
}

}  // namespace

bool available() { return api().lib != nullptr; }
std::string unavailable_reason() { return api().reason; }

std::optional<Gpu> Gpu::by_pci_bus_id(const std::string& bus_id) {
  const Api& a = api();
  Handle h = nullptr;
  if (!a.lib || !a.by_bus || a.by_bus(bus_id.c_str(), &h) != 0) return std::nullopt;
  return Gpu(h);
}

std::optional<Gpu> Gpu::by_index(unsigned index) {
  const Api& a = api();
  Handle h = nullptr;
  if (!a.lib || !a.by_index || a.by_index(index, &h) != 0) return std::nullopt;
  return Gpu(h);
}

std::optional<unsigned> Gpu::sm_clock_mhz() const { return query_u(api().clock, h_, kClockSm); }
std::optional<unsigned> Gpu::max_sm_clock_mhz() const { return query_u(api().max_clock, h_, kClockSm); }
std::optional<unsigned> Gpu::mem_clock_mhz() const { return query_u(api().clock, h_, kClockMem); }
std::optional<unsigned> Gpu::max_mem_clock_mhz() const { return query_u(api().max_clock, h_, kClockMem); }
std::optional<unsigned> Gpu::memory_bus_width() const { return query_u(api().bus_width, h_); }
std::optional<unsigned> Gpu::temperature_c() const { return query_u(api().temperature, h_, 0); }

std::optional<double> Gpu::power_limit_w() const {
  auto mw = query_u(api().power_default, h_);
  if (!mw) return std::nullopt;
  return *mw / 1000.0;
}
std::optional<double> Gpu::enforced_power_limit_w() const {
  auto mw = query_u(api().power_enforced, h_);
  if (!mw) return std::nullopt;
  return *mw / 1000.0;
}
std::optional<double> Gpu::power_w() const {
  auto mw = query_u(api().power_usage, h_);
  if (!mw) return std::nullopt;
  return *mw / 1000.0;
}

std::optional<std::uint64_t> Gpu::throttle_reasons() const {
  unsigned long long r = 0;
  if (!api().reasons || api().reasons(h_, &r) != 0) return std::nullopt;
  return static_cast<std::uint64_t>(r);
}

std::optional<std::string> Gpu::name() const {
  char buf[96] = {};
  if (!api().name || api().name(h_, buf, sizeof buf) != 0) return std::nullopt;
  return std::string(buf);
}
std::optional<std::string> Gpu::uuid() const {
  char buf[96] = {};
  if (!api().uuid || api().uuid(h_, buf, sizeof buf) != 0) return std::nullopt;
  return std::string(buf);
}
std::optional<std::string> Gpu::driver_version() const {
  char buf[96] = {};
  if (!api().driver || api().driver(buf, sizeof buf) != 0) return std::nullopt;
  return std::string(buf);
}

std::optional<std::string> Gpu::pci_bus_id() const {
  PciInfo p{};
  if (!api().pci || api().pci(h_, &p) != 0) return std::nullopt;
  p.bus_id[sizeof p.bus_id - 1] = '\0';
  return std::string(p.bus_id);
}

std::optional<Gpu::NvlinkPath> Gpu::nvlinks_to(const Gpu& peer) const {
  const auto peer_bus = peer.pci_bus_id();
  if (!peer_bus) return std::nullopt;
  const auto mine = count_links(h_, normalized_bus_id(*peer_bus));
  if (!mine) return std::nullopt;
  if (mine->to_peer > 0) return NvlinkPath{mine->to_peer, false};
  if (mine->to_switch == 0) return NvlinkPath{0, false};
  const auto theirs = count_links(peer.h_, "");
  if (!theirs) return std::nullopt;
  const int links = std::min(mine->to_switch, theirs->to_switch);
  return NvlinkPath{links, links > 0};
}

std::optional<int> Gpu::nvlink_version() const {
  const Api& a = api();
  if (!a.link_state || !a.link_version) return std::nullopt;
  for (unsigned link = 0; link < kMaxLinks; ++link) {
    int state = 0;
    if (a.link_state(h_, link, &state) != 0 || state != kFeatureEnabled) continue;
    unsigned v = 0;
    if (a.link_version(h_, link, &v) != 0) return std::nullopt;
    return nvlink_generation_of_nvml(v);
  }
  return std::nullopt;
}

std::optional<int> Gpu::common_ancestor(const Gpu& peer) const {
  int level = -1;
  if (!api().common_ancestor || api().common_ancestor(h_, peer.h_, &level) != 0 || level < 0) return std::nullopt;
  return level;
}

std::string normalized_bus_id(const std::string& bus_id) {
  std::string s;
  for (char ch : bus_id) {
    const auto c = static_cast<unsigned char>(ch);
    if (!std::isspace(c)) s += static_cast<char>(std::tolower(c));
  }
  // domain:bus:device.function, the domain in hex of any width.
  const auto colon = s.find(':');
  if (colon == std::string::npos || colon == 0 || s.find(':', colon + 1) == std::string::npos) return s;
  const std::string domain_text = s.substr(0, colon);
  char* end = nullptr;
  const unsigned long domain = std::strtoul(domain_text.c_str(), &end, 16);
  if (!end || *end != '\0' || domain > 0xffffffffUL) return s;
  return (domain <= 0xffff ? fmt::format("{:04x}", domain) : fmt::format("{:08x}", domain)) + s.substr(colon);
}

std::optional<int> nvlink_generation_of_nvml(unsigned version) {
  // nvmlNvlinkVersion_t: INVALID, 1_0, 2_0, 2_2, 3_0, 3_1, 4_0, 5_0, 6_0.
  constexpr int kGeneration[] = {0, 1, 2, 2, 3, 3, 4, 5, 6};
  if (version == 0 || version >= std::size(kGeneration)) return std::nullopt;
  return kGeneration[version];
}

// NVML clock event reason bits (nvml.h, nvmlClocksEventReason*).
namespace {
struct Reason {
  std::uint64_t bit;
  const char* text;
  bool throttles;
};
constexpr Reason kReasons[] = {
    {0x1, "gpu idle", false},
    {0x2, "application clocks setting", false},
    {0x4, "software power cap", true},
    {0x8, "hardware slowdown", true},
    {0x10, "sync boost", false},
    {0x20, "software thermal slowdown", true},
    {0x40, "hardware thermal slowdown", true},
    {0x80, "hardware power brake", true},
    {0x100, "display clock setting", false},
};
}  // namespace

bool is_throttling(std::uint64_t reasons) {
  for (const auto& r : kReasons)
    if (r.throttles && (reasons & r.bit)) return true;
  return false;
}

std::string throttle_text(std::uint64_t reasons) {
  std::string out;
  for (const auto& r : kReasons) {
    if (!(reasons & r.bit)) continue;
    if (!out.empty()) out += ", ";
    out += r.text;
  }
  return out.empty() ? "none" : out;
}

}  // namespace roofline::hw::nvml

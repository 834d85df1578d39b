#include "roofline/hardware/nvml.hpp"

#include <dlfcn.h>

#include <mutex>
#include <vector>

namespace roofline::hw::nvml {

namespace {

using Ret = int;  // nvmlReturn_t; 0 is NVML_SUCCESS
using Handle = void*;

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
    if (!a.init || a.init() != 0) {
      a.reason = "nvmlInit failed";
      a.lib = nullptr;
    }
  });
  return a;
}

constexpr int kClockSm = 1;   // NVML_CLOCK_SM
constexpr int kClockMem = 2;  // NVML_CLOCK_MEM

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

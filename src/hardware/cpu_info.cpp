// query_cpu(): /proc/cpuinfo for the model and ISA, the process's affinity
// mask for what it may use, sysfs (else CPUID) for caches, cpufreq (else the
// model name, else /proc/cpuinfo, else a measurement) for the clock.
#include "roofline/hardware/cpu_info.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

#if defined(__aarch64__)
#include <sys/prctl.h>
#endif

#include <fmt/format.h>

#include "roofline/core/strings.hpp"
#include "roofline/hardware/cpu_uarch.hpp"

namespace roofline::hw {

namespace fs = std::filesystem;

bool CpuInfo::has_flag(const std::string& f) const { return std::find(flags.begin(), flags.end(), f) != flags.end(); }

// Below this ratio a measured clock is taken as agreeing with the reported one.
constexpr double kMeasuredClockMargin = 1.1;

double CpuInfo::peak_clock_mhz() const {
  if (max_mhz > 0) return max_mhz;
  if (base_mhz > 0) return base_mhz;
  // "cpu MHz" in a VM is often the nominal TSC rate while the core runs much
  // faster: a theoretical peak below what is measured would be nonsense.
  if (current_mhz > 0 && measured_mhz > kMeasuredClockMargin * current_mhz) return measured_mhz;
  if (current_mhz > 0) return current_mhz;
  return measured_mhz;
}

std::string CpuInfo::peak_clock_source() const {
  if (max_mhz > 0) return "maximum boost clock (" + frequency_source + "); all-core vector clocks run lower";
  if (base_mhz > 0) return "base clock (" + frequency_source + "); boost clocks run higher";
  if (current_mhz > 0 && measured_mhz > kMeasuredClockMargin * current_mhz)
    return "measured with dependent adds on one core (the kernel's \"cpu MHz\" says " + format_sig(current_mhz, 4) +
           " MHz, the nominal rate this VM reports; the core runs faster)";
  if (current_mhz > 0)
    return "the kernel's \"cpu MHz\" (" + frequency_source +
           "); in a VM often the nominal TSC rate, not the boost clock";
  if (measured_mhz > 0) return "measured with dependent adds on one core";
  return "unknown";
}

nlohmann::json CpuInfo::to_json() const {
  nlohmann::json caches_j = nlohmann::json::array();
  for (const auto& c : caches)
    caches_j.push_back({{"level", c.level},
                        {"type", c.type},
                        {"bytes", c.bytes},
                        {"shared_by_threads", c.shared_by_threads},
                        {"line_bytes", c.line_bytes},
                        {"ways", c.ways},
                        {"source", c.source}});
  return {{"kind", "cpu"},
          {"vendor", vendor},
          {"model_name", model_name},
          {"family", family},
          {"model", model},
          {"stepping", stepping},
          {"isa", isa},
          {"microarchitecture", microarchitecture},
          {"sockets", sockets},
          {"cores", cores},
          {"threads", threads},
          {"simd", simd},
          {"simd_bits", simd_bits},
          {"fma", has_fma},
          {"flags", flags},
          {"caches", caches_j},
          {"cache_source", cache_source},
          {"base_mhz", base_mhz},
          {"max_mhz", max_mhz},
          {"current_mhz", current_mhz},
          {"measured_mhz", measured_mhz},
          {"frequency_source", frequency_source},
          {"peak_clock_mhz", peak_clock_mhz()}};
}

CpuInfo CpuInfo::from_json(const nlohmann::json& j) {
  CpuInfo c;
  c.vendor = j.value("vendor", "");
  c.model_name = j.value("model_name", "");
  c.family = j.value("family", 0);
  c.model = j.value("model", 0);
  c.stepping = j.value("stepping", 0);
  c.isa = j.value("isa", "");
  c.microarchitecture = j.value("microarchitecture", "");
  c.sockets = j.value("sockets", 1);
  c.cores = j.value("cores", 0);
  c.threads = j.value("threads", 0);
  c.simd = j.value("simd", "");
  c.simd_bits = j.value("simd_bits", 0);
  c.has_fma = j.value("fma", false);
  c.flags = j.value("flags", std::vector<std::string>{});
  for (const auto& jc : j.value("caches", nlohmann::json::array())) {
    CacheLevel l;
    l.level = jc.value("level", 0);
    l.type = jc.value("type", "");
    l.bytes = jc.value("bytes", std::uint64_t{0});
    l.shared_by_threads = jc.value("shared_by_threads", 0);
    l.line_bytes = jc.value("line_bytes", 0);
    l.ways = jc.value("ways", 0);
    l.source = jc.value("source", "");
    c.caches.push_back(std::move(l));
  }
  c.cache_source = j.value("cache_source", "");
  c.base_mhz = j.value("base_mhz", 0.0);
  c.max_mhz = j.value("max_mhz", 0.0);
  c.current_mhz = j.value("current_mhz", 0.0);
  c.measured_mhz = j.value("measured_mhz", 0.0);
  c.frequency_source = j.value("frequency_source", "");
  return c;
}

namespace {

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  if (!f) return {};
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

std::vector<int> affinity_cpus() {
  std::vector<int> out;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return out;
  for (int i = 0; i < CPU_SETSIZE; ++i)
    if (CPU_ISSET(i, &set)) out.push_back(i);
  return out;
}

// The measurement runs once per process: it takes ~50 ms and the answer does not change.
double measured_once() {
  static std::once_flag once;
  static double mhz = 0;
  std::call_once(once, [] { mhz = measure_cpu_mhz(); });
  return mhz;
}

}  // namespace

CpuInfo query_cpu_from(const CpuSources& src) {
  const std::string text = slurp(src.proc_cpuinfo);
  CpuInfo c = parse_proc_cpuinfo(text, src.allowed_cpus);
  if (c.threads == 0) {
    // No /proc/cpuinfo (or no processor lines): count what we may run on.
    c.threads = src.allowed_cpus.empty() ? static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN))
                                         : static_cast<int>(src.allowed_cpus.size());
    c.cores = c.threads;
  }
  const int first = src.allowed_cpus.empty() ? 0 : src.allowed_cpus.front();
  const fs::path cpu_dir = fs::path(src.sysfs_cpu) / ("cpu" + std::to_string(first));

#if defined(__aarch64__)
  if (c.simd == "SVE" && src.proc_cpuinfo == CpuSources{}.proc_cpuinfo) {
    int vl = prctl(PR_SVE_GET_VL);
    if (vl > 0) c.simd_bits = (vl & PR_SVE_VL_LEN_MASK) * 8;
  }
#endif

  // Caches: sysfs describes what this CPU shares with whom; CPUID when absent.
  c.caches = read_sysfs_caches((cpu_dir / "cache").string());
  if (!c.caches.empty()) {
    c.cache_source = "sysfs";
  } else if (src.use_cpuid && c.isa == "x86_64") {
    std::string why;
    c.caches = query_cpuid_caches(c.vendor, &why);
    c.cache_source = c.caches.empty() ? "none: no sysfs cache folder, and " + why : why;
  } else {
    c.cache_source = "none: no sysfs cache folder";
  }

  // Frequency.
  std::vector<std::string> sources;
  CpuFreq f = read_cpufreq((cpu_dir / "cpufreq").string());
  c.max_mhz = f.max_mhz;
  c.base_mhz = f.base_mhz;
  if (!f.source.empty()) sources.push_back(f.source);
  if (c.base_mhz == 0) {
    if (double mhz = mhz_from_model_name(c.model_name); mhz > 0) {
      c.base_mhz = mhz;
      sources.push_back("base clock from the model name");
    }
  }
  if (c.current_mhz > 0 && c.max_mhz == 0 && c.base_mhz == 0)
    sources.push_back(std::string("/proc/cpuinfo \"cpu MHz\"") +
                      (fs::exists(cpu_dir / "cpufreq") ? "" : "; no cpufreq in sysfs"));
  // With no cpufreq limits, /proc/cpuinfo's figure alone cannot be trusted
  // (VMs report the nominal rate): measure too, and let peak_clock_mhz() judge.
  if (c.max_mhz == 0 && c.base_mhz == 0 && src.allow_measure) {
    c.measured_mhz = measured_once();
    if (c.measured_mhz > 0) sources.push_back("measured (dependent adds, best of 12 trials)");
  }
  c.frequency_source = sources.empty() ? "none" : join(sources, "; ");

  c.microarchitecture = cpu_microarch(c).name;
  return c;
}

CpuInfo query_cpu() {
  CpuSources src;
  src.allowed_cpus = affinity_cpus();
  return query_cpu_from(src);
}

}  // namespace roofline::hw

// What the CPU is: model, cores, SIMD, caches, frequency, and the theoretical
// figures derivable from them. Every figure says where it came from (sysfs,
// CPUID, /proc/cpuinfo, a measurement), because in virtual machines and
// containers these sources disagree and often lie by omission.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace roofline::hw {

struct CacheLevel {
  int level = 0;              // 1, 2, 3
  std::string type;           // "data", "instruction", "unified"
  std::uint64_t bytes = 0;    // size of one instance
  int shared_by_threads = 0;  // logical CPUs sharing one instance; 0 when the source does not say
  int line_bytes = 0;
  int ways = 0;        // associativity; 0 when unknown, -1 fully associative
  std::string source;  // "sysfs", "cpuid leaf 4", "cpuid 0x8000001D", "cpuid 0x80000005/6"
};

struct CpuInfo {
  std::string vendor;  // "AuthenticAMD", "GenuineIntel", "ARM"
  std::string model_name;
  int family = 0, model = 0, stepping = 0;
  std::string isa;                // "x86_64", "aarch64"
  std::string microarchitecture;  // "Zen 5", "Sapphire Rapids", "" when not recognised
  int sockets = 1;
  int cores = 0;      // physical cores available to this process
  int threads = 0;    // logical CPUs available to this process
  std::string simd;   // widest vector ISA: "AVX-512", "AVX2", "SSE4.2", "NEON", "SVE"
  int simd_bits = 0;  // 512, 256, 128
  bool has_fma = false;
  std::vector<std::string> flags;  // ISA features of interest
  std::vector<CacheLevel> caches;
  std::string cache_source;          // where `caches` came from, or why they are missing
  double base_mhz = 0, max_mhz = 0;  // 0 when unknown
  double current_mhz = 0;            // /proc/cpuinfo "cpu MHz" (in a VM often the nominal TSC rate)
  double measured_mhz = 0;           // estimated by a dependent-add loop when nothing else says
  std::string frequency_source;

  bool has_flag(const std::string& f) const;
  // The clock the theoretical peaks use (max, else base, else current, else
  // measured) and a sentence saying which one it is.
  double peak_clock_mhz() const;
  std::string peak_clock_source() const;

  nlohmann::json to_json() const;
  // The inverse of to_json() (a device sheet read back from the store).
  static CpuInfo from_json(const nlohmann::json& j);
};

// This machine, from /proc/cpuinfo, sysfs, CPUID and (when nothing gives a
// clock) a short measurement.
CpuInfo query_cpu();

// --- pieces, separated from the machine so tests can feed them fixtures ---

// Where query_cpu_from() reads. Defaults: this machine.
struct CpuSources {
  std::string proc_cpuinfo = "/proc/cpuinfo";
  std::string sysfs_cpu = "/sys/devices/system/cpu";  // holds cpuN/cache, cpuN/cpufreq, cpuN/topology
  std::vector<int> allowed_cpus;                      // logical CPUs this process may use; empty: every CPU listed
  bool use_cpuid = true;                              // fall back to CPUID for caches (x86 only)
  bool allow_measure = true;                          // measure the clock when no source gives one
};
CpuInfo query_cpu_from(const CpuSources& src);

// /proc/cpuinfo text: vendor, model, flags, and cores/threads among `allowed`
// logical CPUs (all when empty). Sets frequency only from "cpu MHz".
CpuInfo parse_proc_cpuinfo(const std::string& text, const std::vector<int>& allowed = {});
// Caches described under a cpuN/cache directory (index0, index1, ...); empty
// when the directory does not exist.
std::vector<CacheLevel> read_sysfs_caches(const std::string& cache_dir);
// "0-3,8,10-11" -> 7
int count_cpu_list(const std::string& list);
// cpufreq: cpuinfo_max_freq, base_frequency (intel_pstate) or
// amd_pstate_nominal_freq, in kHz. Zeros when absent.
struct CpuFreq {
  double base_mhz = 0, max_mhz = 0;
  std::string source;
};
CpuFreq read_cpufreq(const std::string& cpufreq_dir);
// "Intel(R) Xeon(R) Platinum 8480+ @ 2.00GHz" -> 2000; 0 when the name has no clock.
double mhz_from_model_name(const std::string& model_name);

// CPUID registers, decoded without executing CPUID so tests can use recorded values.
struct CpuidRegs {
  std::uint32_t eax = 0, ebx = 0, ecx = 0, edx = 0;
};
// Intel leaf 4 and AMD leaf 0x8000001D share one layout; nullopt for the
// "no more caches" entry (type 0).
std::optional<CacheLevel> decode_cpuid_cache(const CpuidRegs& r, const std::string& source);
// AMD's legacy leaves 0x80000005 (L1) and 0x80000006 (L2, L3), used when
// 0x8000001D is hidden (as some hypervisors do). Sharing is not reported.
std::vector<CacheLevel> decode_amd_legacy_caches(const CpuidRegs& l80000005, const CpuidRegs& l80000006);
// Runs CPUID on this machine (x86 only): caches and the leaf they came from.
std::vector<CacheLevel> query_cpuid_caches(const std::string& vendor, std::string* source);

// A short estimate of the current core clock: a chain of dependent integer
// adds (one cycle each on every x86 and Arm core we know) timed with a steady
// clock; the best of a few trials of a few milliseconds. 0 where unsupported.
double measure_cpu_mhz();

}  // namespace roofline::hw

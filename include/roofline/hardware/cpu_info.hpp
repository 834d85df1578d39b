// What the CPU is: model, cores, SIMD, caches, frequency, and the theoretical
// figures derivable from them.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace roofline::hw {

struct CacheLevel {
  int level = 0;              // 1, 2, 3
  std::string type;           // "data", "instruction", "unified"
  std::uint64_t bytes = 0;    // size of one instance
  int shared_by_threads = 0;  // logical CPUs sharing one instance
  int line_bytes = 0;
  std::string source;         // "sysfs", "cpuid"
};

struct CpuInfo {
  std::string vendor;      // "AuthenticAMD", "GenuineIntel"
  std::string model_name;
  int family = 0, model = 0, stepping = 0;
  int sockets = 1;
  int cores = 0;           // physical cores available to us
  int threads = 0;         // logical CPUs available to us
  std::string simd;        // widest vector ISA: "AVX-512", "AVX2", "SSE4.2", "NEON"
  int simd_bits = 0;       // 512, 256, 128
  bool has_fma = false;
  std::vector<std::string> flags;  // ISA features of interest
  std::vector<CacheLevel> caches;
  double base_mhz = 0, max_mhz = 0;  // 0 when unknown
  std::string frequency_source;

  nlohmann::json to_json() const;
};

CpuInfo query_cpu();

}  // namespace roofline::hw

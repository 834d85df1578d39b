// First version: /proc/cpuinfo and sysconf. (The hardware area completes it:
// caches from sysfs or cpuid, frequency, derived peaks.)
#include "roofline/hardware/cpu_info.hpp"

#include <unistd.h>

#include <fstream>
#include <set>
#include <string>

#include "roofline/core/strings.hpp"

namespace roofline::hw {

nlohmann::json CpuInfo::to_json() const {
  nlohmann::json caches_j = nlohmann::json::array();
  for (const auto& c : caches)
    caches_j.push_back({{"level", c.level}, {"type", c.type}, {"bytes", c.bytes},
                        {"shared_by_threads", c.shared_by_threads}, {"line_bytes", c.line_bytes}, {"source", c.source}});
  return {{"kind", "cpu"},      {"vendor", vendor},     {"model_name", model_name}, {"family", family},
          {"model", model},     {"stepping", stepping}, {"sockets", sockets},       {"cores", cores},
          {"threads", threads}, {"simd", simd},         {"simd_bits", simd_bits},   {"fma", has_fma},
          {"flags", flags},     {"caches", caches_j},   {"base_mhz", base_mhz},     {"max_mhz", max_mhz},
          {"frequency_source", frequency_source}};
}

CpuInfo query_cpu() {
  CpuInfo c;
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  std::set<std::pair<std::string, std::string>> cores;
  std::string phys = "0";
  std::set<std::string> flagset;
  while (std::getline(f, line)) {
    auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = trim(line.substr(0, colon)), val = trim(line.substr(colon + 1));
    if (key == "vendor_id") c.vendor = val;
    else if (key == "model name" && c.model_name.empty()) c.model_name = val;
    else if (key == "cpu family") c.family = std::atoi(val.c_str());
    else if (key == "model") c.model = std::atoi(val.c_str());
    else if (key == "stepping") c.stepping = std::atoi(val.c_str());
    else if (key == "physical id") phys = val;
    else if (key == "core id") cores.insert({phys, val});
    else if (key == "flags" && flagset.empty())
      for (const auto& fl : split(val, ' ')) flagset.insert(fl);
  }
  c.threads = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  c.cores = cores.empty() ? c.threads : static_cast<int>(cores.size());
  c.has_fma = flagset.count("fma") > 0;
  if (flagset.count("avx512f")) {
    c.simd = "AVX-512";
    c.simd_bits = 512;
  } else if (flagset.count("avx2")) {
    c.simd = "AVX2";
    c.simd_bits = 256;
  } else if (flagset.count("sse4_2")) {
    c.simd = "SSE4.2";
    c.simd_bits = 128;
  }
  for (const char* fl : {"avx512f", "avx512bw", "avx512vl", "avx512_bf16", "avx512_fp16", "avx512_vnni", "avx2", "fma",
                         "f16c", "amx_bf16", "amx_tile"})
    if (flagset.count(fl)) c.flags.push_back(fl);
  return c;
}

}  // namespace roofline::hw

// Parsers for what Linux says about the CPU: /proc/cpuinfo, sysfs caches and
// cpufreq. They take text or paths so the tests run them on fixtures.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "roofline/core/strings.hpp"
#include "roofline/hardware/cpu_info.hpp"

namespace roofline::hw {

namespace fs = std::filesystem;

namespace {

std::string read_text(const fs::path& p) {
  std::ifstream f(p);
  if (!f) return {};
  std::ostringstream s;
  s << f.rdbuf();
  return trim(s.str());
}

long long to_ll(const std::string& s, int base = 10) {
  if (s.empty()) return 0;
  return std::strtoll(s.c_str(), nullptr, base);
}

std::string fmt_hex(long long v) {
  std::ostringstream s;
  s << std::hex << v;
  return s.str();
}

// Arm's MIDR implementer and part numbers for the cores we recognise.
std::string arm_vendor(long long implementer) {
  switch (implementer) {
    case 0x41:
      return "ARM";
    case 0x4e:
      return "NVIDIA";
    case 0x61:
      return "Apple";
    case 0xc0:
      return "Ampere";
    case 0x48:
      return "HiSilicon";
    default:
      return "Arm implementer 0x" + fmt_hex(implementer);
  }
}

}  // namespace

CpuInfo parse_proc_cpuinfo(const std::string& text, const std::vector<int>& allowed) {
  CpuInfo c;
  std::set<int> allow(allowed.begin(), allowed.end());
  std::set<std::pair<std::string, std::string>> cores;
  std::set<std::string> sockets;
  std::set<std::string> flagset;
  int threads = 0;
  bool have_core_ids = false;
  long long arm_implementer = -1, arm_part = -1;

  // One block per logical CPU, separated by blank lines.
  std::istringstream in(text + "\n\n");
  std::string line;
  std::map<std::string, std::string> block;
  auto finish_block = [&] {
    if (block.empty()) return;
    auto proc = block.find("processor");
    int id = proc == block.end() ? -1 : static_cast<int>(to_ll(proc->second));
    bool counted = allow.empty() || allow.count(id);
    if (counted && proc != block.end()) {
      ++threads;
      std::string phys = block.count("physical id") ? block["physical id"] : "0";
      sockets.insert(phys);
      if (block.count("core id")) {
        have_core_ids = true;
        cores.insert({phys, block["core id"]});
      }
    }
    // Descriptive fields from the first CPU that has them.
    auto take = [&](const char* key, std::string& into) {
      if (into.empty() && block.count(key)) into = block[key];
    };
    take("vendor_id", c.vendor);
    take("model name", c.model_name);
    if (c.family == 0 && block.count("cpu family")) c.family = static_cast<int>(to_ll(block["cpu family"]));
    if (c.model == 0 && block.count("model")) c.model = static_cast<int>(to_ll(block["model"]));
    if (c.stepping == 0 && block.count("stepping")) c.stepping = static_cast<int>(to_ll(block["stepping"]));
    if (c.current_mhz == 0 && block.count("cpu MHz")) c.current_mhz = std::atof(block["cpu MHz"].c_str());
    if (flagset.empty()) {
      const char* key = block.count("flags") ? "flags" : (block.count("Features") ? "Features" : nullptr);
      if (key)
        for (const auto& fl : split(block[key], ' ')) flagset.insert(fl);
    }
    if (arm_implementer < 0 && block.count("CPU implementer")) arm_implementer = to_ll(block["CPU implementer"], 16);
    if (arm_part < 0 && block.count("CPU part")) arm_part = to_ll(block["CPU part"], 16);
    block.clear();
  };
  while (std::getline(in, line)) {
    if (trim(line).empty()) {
      finish_block();
      continue;
    }
    auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    block[trim(line.substr(0, colon))] = trim(line.substr(colon + 1));
  }

  c.threads = threads;
  c.cores = have_core_ids ? static_cast<int>(cores.size()) : threads;
  c.sockets = sockets.empty() ? 1 : static_cast<int>(sockets.size());

  if (arm_implementer >= 0) {
    c.isa = "aarch64";
    c.vendor = arm_vendor(arm_implementer);
    c.model = static_cast<int>(arm_part);
    if (c.model_name.empty()) c.model_name = c.vendor + " part 0x" + fmt_hex(arm_part);
    c.has_fma = flagset.count("asimd") > 0;  // AdvSIMD has fused multiply-add (FMLA)
    if (flagset.count("sve")) {
      c.simd = "SVE";
      c.simd_bits = 128;  // the vector length is not in /proc/cpuinfo; query_cpu_from() reads it
    } else if (flagset.count("asimd")) {
      c.simd = "NEON";
      c.simd_bits = 128;
    }
  } else {
    c.isa = c.vendor.empty() ? "" : "x86_64";
    c.has_fma = flagset.count("fma") > 0;
    if (flagset.count("avx512f")) {
      c.simd = "AVX-512";
      c.simd_bits = 512;
    } else if (flagset.count("avx2")) {
      c.simd = "AVX2";
      c.simd_bits = 256;
    } else if (flagset.count("avx")) {
      c.simd = "AVX";
      c.simd_bits = 256;
    } else if (flagset.count("sse4_2")) {
      c.simd = "SSE4.2";
      c.simd_bits = 128;
    }
  }
  for (const char* fl :
       {"avx512f", "avx512bw", "avx512vl", "avx512_bf16", "avx512_fp16", "avx512_vnni", "avx_vnni", "avx2", "fma",
        "f16c", "amx_bf16", "amx_int8", "amx_tile", "asimd", "asimdhp", "sve", "sve2", "bf16", "i8mm"})
    if (flagset.count(fl)) c.flags.push_back(fl);
  return c;
}

int count_cpu_list(const std::string& list) {
  int n = 0;
  for (const auto& part : split(trim(list), ',')) {
    auto dash = part.find('-');
    if (dash == std::string::npos) {
      ++n;
    } else {
      long long a = to_ll(part.substr(0, dash)), b = to_ll(part.substr(dash + 1));
      if (b >= a) n += static_cast<int>(b - a + 1);
    }
  }
  return n;
}

namespace {
// sysfs sizes: "48K", "2048K", "36864K", "1M"
std::uint64_t parse_sysfs_size(const std::string& s) {
  if (s.empty()) return 0;
  std::uint64_t v = std::strtoull(s.c_str(), nullptr, 10);
  char u = s.back();
  if (u == 'K' || u == 'k')
    v <<= 10;
  else if (u == 'M' || u == 'm')
    v <<= 20;
  else if (u == 'G' || u == 'g')
    v <<= 30;
  return v;
}
}  // namespace

std::vector<CacheLevel> read_sysfs_caches(const std::string& cache_dir) {
  std::vector<CacheLevel> out;
  std::error_code ec;
  if (!fs::is_directory(cache_dir, ec)) return out;
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(cache_dir, ec))
    if (e.is_directory() && starts_with(e.path().filename().string(), "index")) dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());
  for (const auto& d : dirs) {
    CacheLevel l;
    l.level = static_cast<int>(to_ll(read_text(d / "level")));
    std::string type = to_lower(read_text(d / "type"));
    l.type = type == "data" ? "data" : type == "instruction" ? "instruction" : type == "unified" ? "unified" : type;
    l.bytes = parse_sysfs_size(read_text(d / "size"));
    l.line_bytes = static_cast<int>(to_ll(read_text(d / "coherency_line_size")));
    l.ways = static_cast<int>(to_ll(read_text(d / "ways_of_associativity")));
    std::string shared = read_text(d / "shared_cpu_list");
    l.shared_by_threads = shared.empty() ? 0 : count_cpu_list(shared);
    l.source = "sysfs";
    if (l.level > 0 && l.bytes > 0) out.push_back(l);
  }
  return out;
}

CpuFreq read_cpufreq(const std::string& cpufreq_dir) {
  CpuFreq f;
  fs::path d(cpufreq_dir);
  std::vector<std::string> used;
  if (auto v = to_ll(read_text(d / "cpuinfo_max_freq")); v > 0) {
    f.max_mhz = v / 1000.0;
    used.push_back("cpuinfo_max_freq");
  }
  for (const char* base : {"base_frequency", "amd_pstate_nominal_freq"}) {
    if (auto v = to_ll(read_text(d / base)); v > 0 && f.base_mhz == 0) {
      f.base_mhz = v / 1000.0;
      used.push_back(base);
    }
  }
  if (!used.empty()) f.source = "cpufreq (" + join(used, ", ") + ")";
  return f;
}

double mhz_from_model_name(const std::string& model_name) {
  static const std::regex re(R"(@\s*([0-9]+(?:\.[0-9]+)?)\s*([GM])Hz)", std::regex::icase);
  std::smatch m;
  if (!std::regex_search(model_name, m, re)) return 0;
  double v = std::atof(m[1].str().c_str());
  return (m[2].str() == "G" || m[2].str() == "g") ? v * 1000.0 : v;
}

}  // namespace roofline::hw

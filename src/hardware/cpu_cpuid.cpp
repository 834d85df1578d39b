// Cache descriptions from CPUID, for machines whose sysfs has no cache folder
// (common in virtual machines). Decoding is separate from executing CPUID so
// the tests can use register values recorded on real machines.
#include "roofline/hardware/cpu_info.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace roofline::hw {

std::optional<CacheLevel> decode_cpuid_cache(const CpuidRegs& r, const std::string& source) {
  // Intel SDM vol. 2A "CPUID leaf 04H"; AMD APM vol. 3 "Fn8000_001D" (same layout).
  const unsigned type = r.eax & 0x1f;
  if (type == 0) return std::nullopt;  // no more caches
  CacheLevel l;
  l.type = type == 1 ? "data" : type == 2 ? "instruction" : type == 3 ? "unified" : "unknown";
  l.level = static_cast<int>((r.eax >> 5) & 0x7);
  const bool fully_associative = (r.eax >> 9) & 1;
  // The field is the maximum number of logical processor IDs that may share
  // it, an upper bound rather than the count on this machine.
  l.shared_by_threads = static_cast<int>(((r.eax >> 14) & 0xfff) + 1);
  const std::uint64_t line = (r.ebx & 0xfff) + 1;
  const std::uint64_t partitions = ((r.ebx >> 12) & 0x3ff) + 1;
  const std::uint64_t ways = ((r.ebx >> 22) & 0x3ff) + 1;
  const std::uint64_t sets = static_cast<std::uint64_t>(r.ecx) + 1;
  l.line_bytes = static_cast<int>(line);
  l.ways = fully_associative ? -1 : static_cast<int>(ways);
  l.bytes = ways * partitions * line * sets;
  l.source = source;
  return l;
}

namespace {
// AMD APM vol. 3, Fn8000_0006: L2/L3 associativity codes. Most codes name a
// range ("8 to 15 ways"); only exact ones are reported, others as unknown (0).
int amd_l2l3_ways(unsigned code) {
  switch (code) {
    case 0x1:
      return 1;
    case 0x2:
      return 2;
    case 0x3:
      return 3;
    case 0xf:
      return -1;  // fully associative
    default:
      return 0;
  }
}
}  // namespace

std::vector<CacheLevel> decode_amd_legacy_caches(const CpuidRegs& l5, const CpuidRegs& l6) {
  std::vector<CacheLevel> out;
  const std::string src5 = "cpuid 0x80000005", src6 = "cpuid 0x80000006";
  auto l1 = [&](std::uint32_t reg, const char* type) {
    CacheLevel l;
    l.level = 1;
    l.type = type;
    l.bytes = static_cast<std::uint64_t>(reg >> 24) << 10;
    unsigned assoc = (reg >> 16) & 0xff;
    l.ways = assoc == 0xff ? -1 : static_cast<int>(assoc);
    l.line_bytes = static_cast<int>(reg & 0xff);
    l.source = src5;
    if (l.bytes) out.push_back(l);
  };
  l1(l5.ecx, "data");
  l1(l5.edx, "instruction");
  CacheLevel l2;
  l2.level = 2;
  l2.type = "unified";
  l2.bytes = static_cast<std::uint64_t>(l6.ecx >> 16) << 10;
  l2.ways = amd_l2l3_ways((l6.ecx >> 12) & 0xf);
  l2.line_bytes = static_cast<int>(l6.ecx & 0xff);
  l2.source = src6;
  if (l2.bytes) out.push_back(l2);
  CacheLevel l3;
  l3.level = 3;
  l3.type = "unified";
  l3.bytes = static_cast<std::uint64_t>(l6.edx >> 18) * (512ull << 10);  // units of 512 KiB
  l3.ways = amd_l2l3_ways((l6.edx >> 12) & 0xf);
  l3.line_bytes = static_cast<int>(l6.edx & 0xff);
  l3.source = src6;
  if (l3.bytes) out.push_back(l3);
  return out;
}

std::vector<CacheLevel> query_cpuid_caches(const std::string& vendor, std::string* source) {
  std::vector<CacheLevel> out;
#if defined(__x86_64__) || defined(__i386__)
  auto run = [](unsigned leaf, unsigned sub) {
    CpuidRegs r;
    __cpuid_count(leaf, sub, r.eax, r.ebx, r.ecx, r.edx);
    return r;
  };
  const unsigned max_std = __get_cpuid_max(0, nullptr);
  const unsigned max_ext = __get_cpuid_max(0x80000000, nullptr);
  if (vendor == "GenuineIntel" && max_std >= 4) {
    for (unsigned i = 0; i < 16; ++i) {
      auto l = decode_cpuid_cache(run(4, i), "cpuid leaf 4");
      if (!l) break;
      out.push_back(*l);
    }
    if (!out.empty() && source) *source = "cpuid leaf 4";
    return out;
  }
  if (vendor == "AuthenticAMD" || vendor == "HygonGenuine") {
    // 0x8000001D exists when TOPOEXT (Fn8000_0001 ECX bit 22) is set; some
    // hypervisors clear the bit or return zeros there.
    const bool topoext = max_ext >= 0x80000001 && ((run(0x80000001, 0).ecx >> 22) & 1);
    if (topoext && max_ext >= 0x8000001D) {
      for (unsigned i = 0; i < 16; ++i) {
        auto l = decode_cpuid_cache(run(0x8000001D, i), "cpuid 0x8000001D");
        if (!l) break;
        out.push_back(*l);
      }
      if (!out.empty()) {
        if (source) *source = "cpuid 0x8000001D";
        return out;
      }
    }
    if (max_ext >= 0x80000006) {
      out = decode_amd_legacy_caches(run(0x80000005, 0), run(0x80000006, 0));
      if (!out.empty() && source)
        *source = topoext ? "cpuid 0x80000005/6 (legacy leaves; 0x8000001D returned nothing)"
                          : "cpuid 0x80000005/6 (legacy leaves; 0x8000001D hidden: TOPOEXT not set)";
    }
    return out;
  }
  if (source) *source = "cpuid: no cache leaf known for vendor '" + vendor + "'";
#else
  (void)vendor;
  if (source) *source = "cpuid: not an x86 CPU";
#endif
  return out;
}

}  // namespace roofline::hw

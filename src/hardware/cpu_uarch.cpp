// FMA units per core and their width, from the vendors' optimisation manuals
// (Intel 64 and IA-32 Architectures Optimization Reference Manual; AMD
// Software Optimization Guides for families 17h, 19h, 1Ah; Arm Neoverse
// software optimisation guides).
#include "roofline/hardware/cpu_uarch.hpp"

#include <initializer_list>

namespace roofline::hw {

namespace {

CpuMicroarch known(std::string name, int pipes, int bits, std::string assumption) {
  return {std::move(name), pipes, bits, true, std::move(assumption)};
}

bool in(int v, std::initializer_list<int> set) {
  for (int s : set)
    if (v == s) return true;
  return false;
}

CpuMicroarch amd(const CpuInfo& c) {
  const int f = c.family, m = c.model;
  if (f == 0x17 && m < 0x30)
    return known("Zen / Zen+", 2, 128, "2 FMA pipes of 128 bits (256-bit AVX2 ops split in two)");
  if (f == 0x17) return known("Zen 2", 2, 256, "2 FMA pipes of 256 bits");
  if (f == 0x19 && c.has_flag("avx512f"))
    return known("Zen 4", 2, 256, "2 FMA pipes of 256 bits; AVX-512 ops take two passes");
  if (f == 0x19) return known("Zen 3", 2, 256, "2 FMA pipes of 256 bits");
  if (f == 0x1A) {
    if (m <= 0x1F) return known("Zen 5 (server)", 2, 512, "2 FMA pipes with the full 512-bit datapath of EPYC 9005");
    if ((m >= 0x40 && m <= 0x4F) || (m >= 0x70 && m <= 0x7F))
      return known("Zen 5 (desktop)", 2, 512, "2 FMA pipes with the full 512-bit datapath");
    return known("Zen 5 (mobile)", 2, 256, "2 FMA pipes of 256 bits; AVX-512 ops take two passes on mobile Zen 5");
  }
  return {};
}

CpuMicroarch intel(const CpuInfo& c) {
  const int m = c.model;
  if (c.family != 6) return {};
  if (m == 0x55)
    return known("Skylake-SP / Cascade Lake", 2, 512,
                 "2 FMA units of 512 bits, as on Xeon Gold 6xxx and Platinum; many Bronze, Silver and Gold 5xxx "
                 "SKUs have only 1 (half this peak)");
  if (in(m, {0x6A, 0x6C})) return known("Ice Lake-SP", 2, 512, "2 FMA units of 512 bits");
  if (m == 0x8F) return known("Sapphire Rapids", 2, 512, "2 FMA units of 512 bits");
  if (m == 0xCF) return known("Emerald Rapids", 2, 512, "2 FMA units of 512 bits");
  if (in(m, {0xAD, 0xAE})) return known("Granite Rapids", 2, 512, "2 FMA units of 512 bits");
  if (in(m, {0x57, 0x85})) return known("Knights Landing / Mill", 2, 512, "2 VPUs of 512 bits");
  if (in(m, {0x7D, 0x7E, 0x8C, 0x8D, 0xA7}))
    return known("Ice Lake / Tiger Lake / Rocket Lake (client)", 1, 512,
                 "1 FMA unit of 512 bits (ports 0 and 1 fused), the same rate as 2 of 256 bits");
  if (in(m, {0x3C, 0x3F, 0x45, 0x46})) return known("Haswell", 2, 256, "2 FMA units of 256 bits");
  if (in(m, {0x3D, 0x47, 0x4F, 0x56})) return known("Broadwell", 2, 256, "2 FMA units of 256 bits");
  if (in(m, {0x4E, 0x5E, 0x8E, 0x9E, 0xA5, 0xA6}))
    return known("Skylake / Kaby / Coffee / Comet Lake (client)", 2, 256, "2 FMA units of 256 bits");
  if (in(m, {0x97, 0x9A, 0xB7, 0xBA, 0xBF, 0xAA, 0xAC, 0xBD, 0xC5, 0xC6}))
    return known("Alder / Raptor / Meteor / Lunar / Arrow Lake (hybrid)", 2, 256,
                 "2 FMA units of 256 bits per P-core; E-cores have about half that, so a hybrid part's peak "
                 "is overstated");
  if (in(m, {0x2A, 0x2D, 0x3A, 0x3E}))
    return known("Sandy / Ivy Bridge", 1, 256,
                 "no FMA: one 256-bit add and one 256-bit multiply per cycle, counted as 1 FMA unit");
  return {};
}

CpuMicroarch arm(const CpuInfo& c) {
  if (c.vendor != "ARM") return {};
  switch (c.model) {
    case 0xd0c:
      return known("Neoverse N1", 2, 128, "2 FP/ASIMD pipes of 128 bits");
    case 0xd49:
      return known("Neoverse N2", 2, 128, "2 FP/ASIMD pipes of 128 bits");
    case 0xd40:
      return known("Neoverse V1", 4, 128, "4 FP/ASIMD pipes of 128 bits (2 of 256 bits for SVE)");
    case 0xd4f:
      return known("Neoverse V2", 4, 128, "4 FP/ASIMD pipes of 128 bits (as in NVIDIA Grace)");
    default:
      return {};
  }
}

}  // namespace

CpuMicroarch cpu_microarch(const CpuInfo& c) {
  CpuMicroarch u;
  if (c.vendor == "AuthenticAMD" || c.vendor == "HygonGenuine")
    u = amd(c);
  else if (c.vendor == "GenuineIntel")
    u = intel(c);
  else
    u = arm(c);
  if (u.known) return u;
  // Not in the table: the usual case for current server cores, marked as a guess.
  u.name = "";
  u.fma_pipes = c.simd_bits > 0 ? 2 : 0;
  u.datapath_bits = c.simd_bits;
  u.known = false;
  u.assumption = "microarchitecture not in roofline's table: assumed 2 FMA units as wide as " +
                 (c.simd.empty() ? std::string("the vector ISA") : c.simd) + "; check the vendor's manual";
  return u;
}

}  // namespace roofline::hw

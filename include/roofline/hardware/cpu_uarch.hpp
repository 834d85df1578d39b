// What a CPU core can do per cycle: vector FMA units and their width, by
// microarchitecture. A small table, each row with the assumption it makes,
// because CPUID says which instructions exist, not how many units run them.
#pragma once
#include <string>

#include "roofline/hardware/cpu_info.hpp"

namespace roofline::hw {

struct CpuMicroarch {
  std::string name;        // "Zen 5 (server)", "Sapphire Rapids"
  int fma_pipes = 0;       // vector FMA units per core
  int datapath_bits = 0;   // width of each unit (an AVX-512 op on a 256-bit unit takes two passes)
  bool known = false;      // false: a generic guess (see assumption)
  std::string assumption;  // what the figure rests on, shown next to every derived peak
};

// By vendor, family and model (x86) or implementer and part (Arm).
CpuMicroarch cpu_microarch(const CpuInfo& cpu);

}  // namespace roofline::hw

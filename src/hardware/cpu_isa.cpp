#include "roofline/hardware/cpu_isa.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "roofline/core/env.hpp"
#include "roofline/core/error.hpp"

namespace roofline::hw {

Isa detected_isa() {
  // libgcc's checks include the OS's XSAVE support (XCR0) for the AVX and
  // AVX-512 register state, not only the CPUID bits.
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw"))
    return Isa::Avx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return Isa::Avx2;
  return Isa::Sse2;
}

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::Avx512:
      return "avx512";
    case Isa::Avx2:
      return "avx2";
    case Isa::Sse2:
      return "sse2";
  }
  return "?";
}

namespace {
Isa choose() {
  const Isa best = detected_isa();
  const std::optional<std::string> chosen = env::get(env::Var::CpuIsa);
  if (!chosen) return best;
  const std::string v = *chosen;
  Isa want;
  if (v == "avx512")
    want = Isa::Avx512;
  else if (v == "avx2")
    want = Isa::Avx2;
  else if (v == "sse2")
    want = Isa::Sse2;
  else
    throw_usage(fmt::format("ROOFLINE_CPU_ISA={} names no instruction set", v),
                "use avx512, avx2 or sse2, or unset it to use the best this CPU has");
  if (static_cast<int>(want) > static_cast<int>(best))
    throw_unsupported(fmt::format("ROOFLINE_CPU_ISA={} but this CPU (or OS) supports at most {}", v, isa_name(best)),
                      fmt::format("unset ROOFLINE_CPU_ISA or set it to {} or lower", isa_name(best)));
  return want;
}
}  // namespace

Isa active_isa() {
  static const Isa isa = choose();
  return isa;
}

std::vector<Isa> supported_isas() {
  std::vector<Isa> out;
  for (int i = static_cast<int>(detected_isa()); i >= 0; --i) out.push_back(static_cast<Isa>(i));
  return out;
}

}  // namespace roofline::hw

// Theoretical peaks: a datasheet's figures, or the arithmetic that derives
// them from a device's attributes (units x lanes x clock), always saying which.
#include "roofline/hardware/peaks.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "roofline/core/strings.hpp"
#include "roofline/hardware/cpu_uarch.hpp"
#include "roofline/hardware/gpu_arch.hpp"

namespace roofline::hw {

std::string precision_title(const std::string& p) {
  std::string s = p;
  for (auto& ch : s) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return s;
}

std::string unit_title(const std::string& u) {
  if (u == "cuda") return "CUDA cores";
  if (u == "tensor") return "tensor cores";
  if (u == "simd") return "SIMD FMA";
  if (u == "amx") return "AMX tiles";
  return u;
}

std::string Peak::label() const {
  std::string s = precision_title(precision) + " " + unit_title(unit);
  if (variant == "fp16acc")
    s += " with FP16 accumulate";
  else if (!variant.empty())
    s += " (" + variant + ")";
  if (unit == "tensor") s += ", dense";
  return s + " (" + rate_unit() + ")";
}

namespace {

int precision_rank(const std::string& p) {
  static const char* order[] = {"fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "fp4", "int8", "int4"};
  for (int i = 0; i < 9; ++i)
    if (p == order[i]) return i;
  return 99;
}
int unit_rank(const std::string& u) { return u == "cuda" || u == "simd" ? 0 : u == "tensor" || u == "amx" ? 1 : 2; }

void sort_peaks(std::vector<Peak>& v) {
  std::stable_sort(v.begin(), v.end(), [](const Peak& a, const Peak& b) {
    if (precision_rank(a.precision) != precision_rank(b.precision))
      return precision_rank(a.precision) < precision_rank(b.precision);
    if (unit_rank(a.unit) != unit_rank(b.unit)) return unit_rank(a.unit) < unit_rank(b.unit);
    return a.variant < b.variant;
  });
}

// "bf16.tensor.fp16acc" -> precision, unit, variant
void split_key(const std::string& key, Peak& p) {
  auto parts = split(key, '.');
  p.id = key;
  p.precision = parts.size() > 0 ? parts[0] : key;
  p.unit = parts.size() > 1 ? parts[1] : "";
  p.variant = parts.size() > 2 ? parts[2] : "";
}

}  // namespace

std::vector<Peak> datasheet_peaks(const Datasheet& d) {
  std::vector<Peak> out;
  for (const auto& [key, value] : d.peaks) {
    if (ends_with(key, ".sparse")) continue;
    Peak p;
    split_key(key, p);
    p.dense = value;
    if (auto s = d.peaks.find(key + ".sparse"); s != d.peaks.end()) p.sparse = s->second;
    p.source = d.is_derived(key) ? model::Source::Derived : model::Source::Datasheet;
    auto b = d.basis.find(key);
    p.basis = b == d.basis.end() ? "" : b->second;
    out.push_back(std::move(p));
  }
  sort_peaks(out);
  return out;
}

std::vector<Peak> derived_gpu_peaks(const GpuInfo& g) {
  std::vector<Peak> out;
  const GpuArch* arch = gpu_arch(g.cc_major, g.cc_minor);
  if (!arch || g.sms <= 0 || g.sm_clock_max_mhz <= 0) return out;
  for (const auto& [key, per_clock] : arch->per_clock) {
    Peak p;
    split_key(key, p);
    p.dense = g.sms * per_clock * g.sm_clock_max_mhz * 1e6;
    if (arch->sparse_tensor && p.unit == "tensor" && p.precision != "fp64") p.sparse = 2 * p.dense;
    p.source = model::Source::Derived;
    p.basis = fmt::format("{} SMs x {} {}/clk/SM ({}) x {} MHz", g.sms, per_clock, p.integer() ? "OP" : "FLOP",
                          arch->name, format_sig(g.sm_clock_max_mhz, 4));
    out.push_back(std::move(p));
  }
  sort_peaks(out);
  return out;
}

std::vector<Peak> gpu_peaks(const GpuInfo& g) {
  const Datasheet* d = g.datasheet_id.empty() ? match_datasheet(g) : find_datasheet(g.datasheet_id);
  return d ? datasheet_peaks(*d) : derived_gpu_peaks(g);
}

std::vector<Peak> cpu_peaks(const CpuInfo& c) {
  std::vector<Peak> out;
  const CpuMicroarch u = cpu_microarch(c);
  const double mhz = c.peak_clock_mhz();
  if (c.cores <= 0 || mhz <= 0 || u.fma_pipes <= 0 || c.simd_bits <= 0) return out;
  // An instruction wider than the unit takes several passes: the unit's width counts.
  const int width_all = std::min(c.simd_bits, u.datapath_bits > 0 ? u.datapath_bits : c.simd_bits);
  const double core_hz = c.cores * mhz * 1e6;
  const std::string common = fmt::format("{} cores x {} MHz x {} FMA unit{}", c.cores, format_sig(mhz, 4), u.fma_pipes,
                                         u.fma_pipes == 1 ? "" : "s");
  const std::string tail = "; " + u.assumption + "; clock: " + c.peak_clock_source();
  // One SIMD instruction class at `bits` per instruction: `elem_bits` per
  // lane, `flops_per_lane` per lane per instruction.
  auto simd = [&](const std::string& prec, int bits, int elem_bits, int flops_per_lane, const std::string& what) {
    Peak p;
    const int width = std::min(bits, width_all);
    p.id = prec + ".simd";
    p.precision = prec;
    p.unit = "simd";
    const int lanes = width / elem_bits;
    p.dense = core_hz * u.fma_pipes * lanes * flops_per_lane;
    p.source = model::Source::Derived;
    p.basis = fmt::format("{} x {} lanes ({}-bit) x {} {} ({}){}", common, lanes, width, flops_per_lane,
                          prec.rfind("int", 0) == 0 ? "OP" : "FLOP", what, tail);
    out.push_back(std::move(p));
  };
  simd("fp64", c.simd_bits, 64, 2, "FMA");
  simd("fp32", c.simd_bits, 32, 2, "FMA");
  if (c.has_flag("avx512_fp16") || (c.isa == "aarch64" && c.has_flag("asimdhp")))
    simd("fp16", c.simd_bits, 16, 2, c.isa == "aarch64" ? "FP16 FMLA" : "AVX512-FP16 FMA");
  if (c.has_flag("avx512_bf16"))
    simd("bf16", 512, 32, 4, "VDPBF16PS: 2 BF16 products summed into each FP32 lane, on the FMA units");
  if (c.has_flag("avx512_vnni"))
    simd("int8", 512, 32, 8, "VPDPBUSD: 4 INT8 products summed into each INT32 lane, on the FMA units");
  else if (c.has_flag("avx_vnni"))
    simd("int8", 256, 32, 8, "AVX-VNNI VPDPBUSD: 4 INT8 products summed into each INT32 lane");
  // AMX: TDPBF16PS does 16x16x32 BF16 MACs in 16 cycles (1024 FLOP/cycle/core),
  // TDPBSSD 16x16x64 INT8 MACs in 16 cycles (2048 OP/cycle/core).
  auto amx = [&](const std::string& prec, double per_cycle, const std::string& what) {
    Peak p;
    p.id = prec + ".amx";
    p.precision = prec;
    p.unit = "amx";
    p.dense = core_hz * per_cycle;
    p.source = model::Source::Derived;
    p.basis = fmt::format("{} cores x {} MHz x {} {}/cycle ({}); clock: {}", c.cores, format_sig(mhz, 4), per_cycle,
                          prec == "int8" ? "OP" : "FLOP", what, c.peak_clock_source());
    out.push_back(std::move(p));
  };
  if (c.has_flag("amx_bf16")) amx("bf16", 1024, "TDPBF16PS, one tile multiply per 16 cycles");
  if (c.has_flag("amx_int8")) amx("int8", 2048, "TDPBSSD, one tile multiply per 16 cycles");
  sort_peaks(out);
  return out;
}

}  // namespace roofline::hw

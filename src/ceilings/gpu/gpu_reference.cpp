#include "src/ceilings/gpu/gpu_reference.hpp"

#include <fmt/format.h>

#include <map>

#include "roofline/core/strings.hpp"

namespace roofline::ceilings::gpu {

std::string reference_id(const std::string& figure_name) {
  auto parts = split(figure_name, '.');
  if (parts.empty()) return figure_name;
  const std::string& first = parts[0];
  if (first == "dram" || first == "l2" || first == "smem" || first == "pcie") return first;
  if (parts.size() >= 2) return parts[0] + "." + parts[1];
  return figure_name;
}

namespace {

// Dense rates per SM and clock. Hopper (9.0): 128 FP32 and 64 FP64 lanes, half2
// and bf16x2 at the FP32 instruction rate (4 FLOPs each), tensor cores 1024
// FP16 FMA per clock and SM (989 TFLOP/s dense on 132 SMs at 1830 MHz). Ampere
// A100 (8.0): 64 FP32, 32 FP64 lanes; FP16 non-tensor at 4x FP32, BF16 at 2x.
// GA10x/AD10x (8.6, 8.9): 128 FP32 lanes, 2 FP64 lanes; tensor rates differ
// between SKUs (half-rate FP32 accumulation on GeForce), so none are assumed.
const std::map<std::string, double>* arch_table(int major, int minor) {
  static const std::map<std::string, double> hopper = {
      {"fp64.cuda", 128},    {"fp32.cuda", 256},    {"fp16.cuda", 512},   {"bf16.cuda", 512},
      {"tf32.tensor", 2048}, {"fp16.tensor", 4096}, {"bf16.tensor", 4096}, {"fp8.tensor", 8192},
      {"int8.tensor", 8192}, {"fp64.tensor", 256},  {"smem", 128}};
  static const std::map<std::string, double> a100 = {
      {"fp64.cuda", 64},     {"fp32.cuda", 128},    {"fp16.cuda", 512},   {"bf16.cuda", 256},
      {"tf32.tensor", 1024}, {"fp16.tensor", 2048}, {"bf16.tensor", 2048}, {"int8.tensor", 4096},
      {"fp64.tensor", 128},  {"smem", 128}};
  static const std::map<std::string, double> ga10x = {
      {"fp64.cuda", 4}, {"fp32.cuda", 256}, {"fp16.cuda", 256}, {"bf16.cuda", 256}, {"smem", 128}};
  if (major == 9 && minor == 0) return &hopper;
  if (major == 8 && minor == 0) return &a100;
  if (major == 8 && (minor == 6 || minor == 7 || minor == 9)) return &ga10x;
  return nullptr;
}

bool is_compute(const measure::Figure& f) { return f.unit == "FLOP/s" || f.unit == "OP/s"; }
bool is_rate(const measure::Figure& f) { return is_compute(f) || f.unit == "B/s"; }
bool is_addmul(const std::string& name) { return ends_with(name, ".addmul"); }

}  // namespace

std::optional<double> per_sm_per_clock(const hw::GpuInfo& gpu, const std::string& key) {
  // Unit counts the hardware description knows win over the table.
  if (key == "fp32.cuda" && gpu.cuda_cores_per_sm > 0) return 2.0 * gpu.cuda_cores_per_sm;
  if (key == "fp64.cuda" && gpu.fp64_units_per_sm > 0) return 2.0 * gpu.fp64_units_per_sm;
  if (const auto* t = arch_table(gpu.cc_major, gpu.cc_minor)) {
    auto it = t->find(key);
    if (it != t->end()) return it->second;
  }
  return std::nullopt;
}

std::optional<double> peak_at_clock(const hw::GpuInfo& gpu, const std::string& key, double clock_mhz) {
  auto r = per_sm_per_clock(gpu, key);
  if (!r || gpu.sms <= 0 || clock_mhz <= 0) return std::nullopt;
  return *r * gpu.sms * clock_mhz * 1e6;
}

void attach_reference(measure::Figure& f, const hw::GpuInfo& gpu, const model::Roofline& sheet) {
  // Latencies (s) and bytes in flight (B) have no datasheet figure: comparing
  // them with a bandwidth (the "dram" reference) would be nonsense.
  if (!is_rate(f)) return;
  const std::string id = reference_id(f.name);
  const double clock = f.measurement.clock_median_mhz;
  // An add+multiply loop does one FLOP per instruction where an FMA does two:
  // its reference is half the FMA figure (what it reaches if adds and
  // multiplies issue at the FMA instruction rate).
  const double scale = is_addmul(f.name) ? 0.5 : 1.0;
  std::optional<double> at_clock;
  if (is_compute(f) || id == "smem") {
    at_clock = peak_at_clock(gpu, id, clock);
    if (at_clock) {
      *at_clock *= scale;
      f.params["peak_at_clock"] = *at_clock;
      f.params["peak_at_clock_mhz"] = clock;
    }
  }
  if (const model::Ceiling* c = sheet.find(id, model::Source::Datasheet)) {
    f.reference = c->value * scale;
    f.reference_label = c->note.empty() ? "datasheet" : "datasheet (" + c->note + ")";
    if (scale != 1.0) f.reference_label += ": half its " + id + " figure (one FLOP per instruction)";
    return;
  }
  if (at_clock) {
    f.reference = *at_clock;
    f.reference_label = fmt::format("derived: {}{} SMs x {} per clock x {:.0f} MHz (measured)",
                                    scale != 1.0 ? "half of " : "", gpu.sms, format_sig(*per_sm_per_clock(gpu, id)),
                                    clock);
    return;
  }
  if (id == "dram" && gpu.bandwidth_theoretical > 0) {
    f.reference = gpu.bandwidth_theoretical;
    f.reference_label = fmt::format("derived: {}-bit bus x {:.0f} MHz x 2", gpu.memory_bus_bits,
                                    gpu.mem_clock_max_mhz);
  }
}

}  // namespace roofline::ceilings::gpu

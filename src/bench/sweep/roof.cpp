#include <algorithm>

#include <fmt/format.h>

#include "roofline/bench/sweep_roof.hpp"
#include "roofline/core/strings.hpp"

namespace roofline::bench::sweep {

namespace {

// FMA lanes per SM (FP32, FP64) by compute capability, for the last-resort
// theoretical peak when neither a measurement nor the hardware database has one.
struct Lanes {
  int major, minor, fp32, fp64;
};
constexpr Lanes kLanes[] = {{7, 0, 64, 32},   {7, 5, 64, 2},   {8, 0, 64, 32},  {8, 6, 128, 2},
                            {8, 7, 128, 2},   {8, 9, 128, 2},  {9, 0, 128, 64}, {10, 0, 128, 64},
                            {10, 3, 128, 64}, {12, 0, 128, 2}};

std::string mix_note(const MixVerdict& mix) {
  if (mix.fraction_of_fma_peak == 1.0) return mix.from_sass ? " (FMA mix, SASS-checked)" : " (FMA mix, SASS not checked)";
  return fmt::format(" x {:.3g} for this mix ({})", mix.fraction_of_fma_peak,
                     mix.from_sass ? "SASS-checked" : "the source's mix; SASS not checked");
}

}  // namespace

Roof gpu_roof(Variant v, const model::Roofline& measured, const model::Roofline& reference, const MixVerdict& mix,
              const hw::GpuInfo& gpu, double clock_mhz) {
  const VariantInfo& vi = info(v);
  Roof r;
  const std::string id = std::string(vi.precision) + ".cuda";
  const double frac = mix.fraction_of_fma_peak;
  if (const model::Ceiling* c = measured.find(id, model::Source::Measured)) {
    r.peak = c->value * frac;
    r.peak_measured = true;
    r.peak_source = fmt::format("measured {} = {}{}", id, format_si(c->value, "FLOP/s"), mix_note(mix));
  } else if (const model::Ceiling* c2 = reference.find(id)) {
    r.peak = c2->value * frac;
    r.peak_source = fmt::format("no measured {} in the store (run `roofline ceilings --device gpu` first); {} {} = {}{}",
                                id, model::to_string(c2->source), id, format_si(c2->value, "FLOP/s"), mix_note(mix));
  } else {
    int fp32 = gpu.cuda_cores_per_sm, fp64 = gpu.fp64_units_per_sm;
    for (const auto& l : kLanes)
      if (l.major == gpu.cc_major && l.minor == gpu.cc_minor) {
        if (fp32 <= 0) fp32 = l.fp32;
        if (fp64 <= 0) fp64 = l.fp64;
      }
    // half2/bfloat162: two lanes' worth per FP32 lane.
    int lanes = v == Variant::Fp64 ? fp64 : (v == Variant::Fp16 || v == Variant::Bf16) ? 2 * fp32 : fp32;
    double mhz = clock_mhz > 0 ? clock_mhz : gpu.sm_clock_max_mhz;
    if (lanes > 0 && gpu.sms > 0 && mhz > 0) {
      double fma_peak = 2.0 * lanes * gpu.sms * mhz * 1e6;
      r.peak = fma_peak * frac;
      r.peak_source = fmt::format(
          "no measured {} in the store (run `roofline ceilings --device gpu` first): theoretical {} = {} FMA lanes/SM x "
          "2 x {} SMs x {:.0f} MHz ({}) = {}{}",
          id, id, lanes, gpu.sms, mhz, clock_mhz > 0 ? "clock measured during the sweep" : "boost clock",
          format_si(fma_peak, "FLOP/s"), mix_note(mix));
    } else {
      r.peak_source = fmt::format("no {} peak known for {} (compute capability {}.{}): run `roofline ceilings --device gpu`",
                                  id, gpu.name, gpu.cc_major, gpu.cc_minor);
    }
  }
  const model::Ceiling* bw = measured.find("dram.copy", model::Source::Measured);
  if (bw) {
    r.bandwidth = bw->value;
    r.bandwidth_measured = true;
    r.bandwidth_source = fmt::format("measured dram.copy = {} (this kernel reads one array and writes another: a copy-like stream)",
                                     format_si(bw->value, "B/s"));
  } else if ((bw = measured.memory("dram")) && bw->source == model::Source::Measured) {
    r.bandwidth = bw->value;
    r.bandwidth_measured = true;
    r.bandwidth_source = fmt::format("measured {} = {} (no dram.copy stored; the best DRAM figure)", bw->id,
                                     format_si(bw->value, "B/s"));
  } else if ((bw = reference.memory("dram"))) {
    r.bandwidth = bw->value;
    r.bandwidth_source = fmt::format("no measured DRAM bandwidth in the store; {} {} = {}", model::to_string(bw->source),
                                     bw->id, format_si(bw->value, "B/s"));
  } else if (gpu.bandwidth_theoretical > 0) {
    r.bandwidth = gpu.bandwidth_theoretical;
    r.bandwidth_source = fmt::format("no measured DRAM bandwidth in the store; theoretical {} (bus width x memory clock)",
                                     format_si(gpu.bandwidth_theoretical, "B/s"));
  } else {
    r.bandwidth_source = "no DRAM bandwidth known: run `roofline ceilings --device gpu`";
  }
  return r;
}

Roof cpu_roof(Variant v, const model::Roofline& measured) {
  const VariantInfo& vi = info(v);
  Roof r;
  std::string id = std::string(vi.precision) + (vi.fused ? ".simd" : ".simd.addmul");
  if (const model::Ceiling* c = measured.find(id, model::Source::Measured)) {
    r.peak = c->value;
    r.peak_measured = true;
    r.peak_source = fmt::format("measured {} = {} ({})", id, format_si(c->value, "FLOP/s"),
                                vi.fused ? "FMA rate" : "the rate of independent adds and multiplies, measured as such");
  } else {
    r.peak_source = fmt::format("no measured {} for this CPU", id);
  }
  if (const model::Ceiling* bw = measured.find("mem.copy", model::Source::Measured)) {
    r.bandwidth = bw->value;
    r.bandwidth_measured = true;
    r.bandwidth_source = fmt::format("measured mem.copy = {} (a read+write stream, like this kernel)", format_si(bw->value, "B/s"));
  } else {
    r.bandwidth_source = "no measured mem.copy for this CPU";
  }
  return r;
}

std::vector<std::string> cpu_ceilings_needed(const std::vector<Variant>& vs) {
  std::vector<std::string> out = {"mem.copy"};
  for (Variant v : vs) {
    const VariantInfo& vi = info(v);
    if (v == Variant::Fp16 || v == Variant::Bf16) continue;
    std::string id = std::string(vi.precision) + (vi.fused ? ".simd" : ".simd.addmul");
    if (std::find(out.begin(), out.end(), id) == out.end()) out.push_back(id);
  }
  return out;
}

}  // namespace roofline::bench::sweep

#include <algorithm>

#include <fmt/format.h>

#include "roofline/sweep/roof.hpp"
#include "roofline/core/strings.hpp"

namespace roofline::sweep {

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
  const std::string mix_id = vi.mix_ceiling;
  const std::string id = std::string(vi.precision) + ".cuda";  // the FMA ceiling of the precision
  const double frac = mix.fraction_of_fma_peak;
  if (const model::Ceiling* m = measured.find(mix_id, model::Source::Measured)) {
    // The mix's own ceiling: for add+multiply it is this very loop without
    // memory, so no fraction applies; for Horner it is the FMA rate, times the
    // SASS verdict (1 unless the compiler split some FMAs).
    const bool fma_mix = mix_id == id;
    r.peak = m->value * (fma_mix ? frac : 1.0);
    r.peak_id = mix_id;
    r.peak_measured = true;
    r.peak_source = fma_mix ? fmt::format("measured {} = {}{}", mix_id, format_si(m->value, "FLOP/s"), mix_note(mix))
                            : fmt::format("measured {} = {} (this loop's adds and multiplies without memory: the "
                                          "rate of the mix, measured as such)",
                                          mix_id, format_si(m->value, "FLOP/s"));
  } else if (const model::Ceiling* c = measured.find(id, model::Source::Measured)) {
    r.peak = c->value * frac;
    r.peak_id = id;
    r.peak_source = fmt::format("NOT the mix's own rate: no measured {} (run `roofline ceilings --device gpu --only {}`); "
                                "measured {} = {}{}, which assumes adds and multiplies issue at the FMA instruction rate",
                                mix_id, mix_id, id, format_si(c->value, "FLOP/s"), mix_note(mix));
  } else if (const model::Ceiling* c2 = reference.find(id)) {
    r.peak = c2->value * frac;
    r.peak_id = id;
    r.peak_source = fmt::format("no measured {} or {} in the store (run `roofline ceilings --device gpu` first); {} {} "
                                "= {}{}",
                                mix_id, id, model::to_string(c2->source), id, format_si(c2->value, "FLOP/s"),
                                mix_note(mix));
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
      r.peak_id = id;
      r.peak_source = fmt::format(
          "no measured {} in the store (run `roofline ceilings --device gpu` first): theoretical {} = {} FMA lanes/SM x "
          "2 x {} SMs x {:.0f} MHz ({}) = {}{}",
          mix_id, id, lanes, gpu.sms, mhz, clock_mhz > 0 ? "clock measured during the sweep" : "boost clock",
          format_si(fma_peak, "FLOP/s"), mix_note(mix));
    } else {
      r.peak_source = fmt::format("no {} peak known for {} (compute capability {}.{}): run `roofline ceilings --device gpu`",
                                  mix_id, gpu.name, gpu.cc_major, gpu.cc_minor);
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
  r.peak_id = id;
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

std::vector<std::string> gpu_ceilings_needed(const std::vector<Variant>& vs) {
  std::vector<std::string> out = {"dram.copy"};
  for (Variant v : vs) {
    const std::string id = info(v).mix_ceiling;
    if (std::find(out.begin(), out.end(), id) == out.end()) out.push_back(id);
  }
  return out;
}

InFlight in_flight(const std::string& kernel, double per_sm, int threads_per_sm, int sms, double bytes_in_flight,
                   double latency_s, double read_rate, std::int64_t at_k) {
  InFlight f;
  f.per_sm = per_sm;
  std::string text = fmt::format("Little's law ({}): at most {} of loads in flight per SM ({} resident threads x {})",
                                 kernel, format_bytes(per_sm), threads_per_sm,
                                 format_bytes(threads_per_sm > 0 ? per_sm / threads_per_sm : 0));
  if (bytes_in_flight > 0 && sms > 0) {
    f.needed_per_sm = bytes_in_flight / sms;
    f.fraction = per_sm / f.needed_per_sm;
    text += fmt::format("; DRAM needs {} per SM at its unloaded latency{} (dram.bytes_in_flight = {}): {:.2f}x that",
                        format_bytes(f.needed_per_sm),
                        latency_s > 0 ? " of " + format_seconds(latency_s) : std::string(),
                        format_bytes(bytes_in_flight), f.fraction);
  } else {
    text += "; no dram.bytes_in_flight stored to compare with (run `roofline ceilings --device gpu`)";
  }
  if (read_rate > 0 && sms > 0 && per_sm > 0) {
    f.implied_latency_s = per_sm * sms / read_rate;
    text += fmt::format(". At k={} it reads {}, so each load took {} or more on average", at_k,
                        format_si(read_rate, "B/s"), format_seconds(f.implied_latency_s));
    if (latency_s > 0) text += fmt::format(" ({:.1f}x the unloaded latency)", f.implied_latency_s / latency_s);
    if (f.fraction > 0 && f.fraction < 2)
      text += ": the loads in flight barely cover the unloaded latency, and the latency under load is longer, so "
              "DRAM stays partly idle";
    else if (f.fraction >= 2)
      text += ": enough in flight for the latency under load";
  }
  f.text = text;
  return f;
}

std::string no_overlap_note(const std::vector<Point>& points) {
  const Point* best = nullptr;
  double best_balance = 0;
  for (const auto& p : points) {
    if (p.t_mem_s <= 0 || p.t_comp_s <= 0 || p.no_overlap_gflops <= 0) continue;
    const double balance = std::min(p.t_mem_s, p.t_comp_s) / std::max(p.t_mem_s, p.t_comp_s);
    if (!best || balance > best_balance) best = &p, best_balance = balance;
  }
  if (!best) return {};
  const Point& p = *best;
  return fmt::format("near the ridge, k={}: t_mem {} + t_comp {} = {} -> {} with no overlap, measured {} ({:.2f}x the "
                     "no-overlap model); a kernel that overlaps them fully takes max(t_mem, t_comp) = {} -> {}",
                     p.k, format_seconds(p.t_mem_s), format_seconds(p.t_comp_s), format_seconds(p.t_mem_s + p.t_comp_s),
                     format_si(p.no_overlap_gflops * 1e9, "FLOP/s"), format_si(p.gflops * 1e9, "FLOP/s"),
                     p.gflops / p.no_overlap_gflops, format_seconds(std::max(p.t_mem_s, p.t_comp_s)),
                     format_si(p.predicted_gflops * 1e9, "FLOP/s"));
}

}  // namespace roofline::sweep

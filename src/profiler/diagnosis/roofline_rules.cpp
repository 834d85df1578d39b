// memory-bound-low-bandwidth and compute-bound-below-peak: with hardware
// counters and the device's roofline, kernels that take a real share of the
// time but reach a small fraction of the roof that bounds them.
#include <algorithm>

#include "src/profiler/diagnosis/facts.hpp"
#include "roofline/core/strings.hpp"
#include "roofline/profiler/metrics.hpp"

namespace roofline::prof::diag {

namespace {

struct Judged {
  const KernelCounters* k;
  model::Placement pl;
  const model::Ceiling* compute;
  const model::Ceiling* memory;
  std::string shown;
  double profile_ns;  // the kernel's whole time in the profile (counters cover some instances)
};

// The compute ceiling matching the kernel's dominant kind of FLOPs.
// The roof of the kernel's dominant work (never its register moves, which
// dominant_work leaves out).
const model::Ceiling* ceiling_for(const model::Roofline& r, const KernelCounters& k) {
  const DominantWork d = dominant_work(k);
  if (d.precision.empty()) return nullptr;
  const model::Ceiling* c = r.compute(d.precision, d.unit);
  return c ? c : r.compute(d.precision);
}

// Time above the roofline floor, scaled from the counted instances to every
// instance of the kernel in the profile.
double above_floor(const Judged& j) {
  double f = 1.0 - j.pl.floor_seconds * 1e9 / j.k->duration_ns;
  return std::max(0.0, f) * j.profile_ns;
}

std::vector<Judged> judge(const Facts& c, model::Bound want) {
  std::vector<Judged> out;
  if (!c.o.roofline || c.p.counters.empty()) return out;
  const model::Ceiling* mem = c.o.roofline->memory("dram");
  if (!mem) return out;
  double total = 0;
  for (const auto& k : c.p.counters) total += k.duration_ns;
  if (total <= 0) return out;
  for (const auto& k : c.p.counters) {
    if (k.duration_ns < c.o.min_kernel_share * total || k.dram_bytes() <= 0) continue;
    const model::Ceiling* comp = ceiling_for(*c.o.roofline, k);
    if (!comp && want == model::Bound::Compute) continue;
    model::Ceiling none;
    none.value = 1e30;  // no FLOPs: the kernel is placed against memory alone
    model::Placement pl =
        model::place(work_flops(k), k.dram_bytes(), k.duration_ns * 1e-9, comp ? *comp : none, *mem);
    if (pl.bound != want) continue;
    double eff = want == model::Bound::Memory ? pl.bandwidth / mem->value : pl.achieved / comp->value;
    if (eff >= c.o.low_efficiency) continue;
    const KernelAgg* agg = c.kernel(k.kernel);
    out.push_back(
        {&k, pl, comp, mem, agg ? agg->shown : shorten_kernel_name(k.kernel, 60), agg ? agg->total_ns : k.duration_ns});
  }
  std::sort(out.begin(), out.end(),
            [](const Judged& a, const Judged& b) { return a.k->duration_ns > b.k->duration_ns; });
  return out;
}

// The finding of either rule: the kernels judged below their roof (the first
// three described by `describe`) and the time above their floors.
template <class Describe>
std::optional<Diagnosis> below_roof(const Facts& c, const Rule& rule, model::Bound bound, Describe describe,
                                    const std::string& roof, const std::string& floor, std::string suggestion) {
  auto js = judge(c, bound);
  if (js.empty()) return std::nullopt;
  double impact = 0;
  std::vector<std::string> parts;
  for (const auto& j : js) {
    impact += above_floor(j);
    if (parts.size() < 3) parts.push_back(describe(j));
  }
  const char* kind = bound == model::Bound::Memory ? "memory-bound" : "compute-bound";
  return c.make(rule,
                count(js.size()) + " " + kind + " kernel(s) below " + pct(c.o.low_efficiency) + " of " + roof + ": " +
                    join(parts, "; ") + "; time above their " + floor + " floor: " + t(impact),
                std::move(suggestion), impact);
}

}  // namespace

std::optional<Diagnosis> memory_bound_low_bandwidth(const Facts& c, const Rule& rule) {
  return below_roof(
      c, rule, model::Bound::Memory,
      [](const Judged& j) {
        return j.shown + ": " + format_si(j.pl.bandwidth, "B/s") + " of " + format_si(j.memory->value, "B/s") +
               " DRAM (" + pct(j.pl.bandwidth / j.memory->value) + "), " + format_sig(j.pl.ai, 3) + " FLOP/B, " +
               t(j.profile_ns) + " in all" +
               (j.k->achieved_occupancy > 0 ? ", occupancy " + pct(j.k->achieved_occupancy) : "");
      },
      "DRAM bandwidth", "bandwidth",
      "make each access count: coalesced, vectorised (16-byte) loads, more bytes in flight per SM (higher "
      "occupancy, more work per thread); fuse with neighbouring kernels so data is read once; tiny "
      "kernels cannot reach DRAM bandwidth at all (see launch-bound)");
}

std::optional<Diagnosis> compute_below_peak(const Facts& c, const Rule& rule) {
  return below_roof(
      c, rule, model::Bound::Compute,
      [](const Judged& j) {
        return j.shown + ": " + format_si(j.pl.achieved, "FLOP/s") + " of " + format_si(j.compute->value, "FLOP/s") +
               " " + j.compute->label + " (" + pct(j.pl.achieved / j.compute->value) + "), " + t(j.profile_ns) +
               " in all";
      },
      "their compute roof", "compute",
      "check the precision and unit (FP32 on CUDA cores vs TF32/bf16 on tensor cores), tile shapes against "
      "the problem shape (partial last waves), and occupancy; cuBLAS/cuDNN pick better kernels for "
      "dimensions that are multiples of 8 or 16");
}

}  // namespace roofline::prof::diag

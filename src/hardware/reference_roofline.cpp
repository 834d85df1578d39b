// The theoretical roofline of a device, for comparing measured figures with
// what the hardware allows. Other areas (ceilings, charts, profiler) call
// reference_roofline() and read ceilings by the ids of bench/figure.hpp.
#include <fmt/format.h>

#include "roofline/core/strings.hpp"
#include "roofline/hardware/datasheet.hpp"
#include "roofline/hardware/peaks.hpp"

namespace roofline::hw {

namespace {

// Dense rates of the plain variants become compute ceilings. Variants such as
// FP16-accumulate stay out: a roofline's "fp16 tensor" roof must be the one
// ordinary (FP32-accumulate) work can reach.
void add_compute(model::Roofline& r, const std::vector<Peak>& peaks, const std::string& where) {
  for (const auto& p : peaks) {
    if (!p.variant.empty() || p.dense <= 0) continue;
    model::Ceiling c;
    c.id = p.id;
    c.label = p.label();
    c.kind = model::CeilingKind::Compute;
    c.value = p.dense;
    c.source = p.source;
    c.precision = p.precision;
    c.unit = p.unit;
    c.note = where.empty() ? p.basis : where + " " + p.basis;
    r.add(std::move(c));
  }
}

}  // namespace

model::Roofline reference_roofline(const GpuInfo& gpu) {
  model::Roofline r(gpu.name);
  const Datasheet* d = gpu.datasheet_id.empty() ? match_datasheet(gpu) : find_datasheet(gpu.datasheet_id);
  if (d) {
    add_compute(r, datasheet_peaks(*d), "datasheet " + d->id + ":");
    model::Ceiling m;
    m.id = "dram";
    m.label = fmt::format("DRAM ({}) bandwidth (B/s)", d->memory_type);
    m.kind = model::CeilingKind::Memory;
    m.value = d->bandwidth;
    m.source = model::Source::Datasheet;
    m.unit = "dram";
    m.note = "datasheet " + d->id + ": " + (d->sources.empty() ? std::string() : d->sources.front());
    r.add(std::move(m));
    return r;
  }
  add_compute(r, derived_gpu_peaks(gpu), "");
  if (gpu.bandwidth_theoretical > 0) {
    model::Ceiling m;
    m.id = "dram";
    m.label = "DRAM bandwidth (B/s)";
    m.kind = model::CeilingKind::Memory;
    m.value = gpu.bandwidth_theoretical;
    m.source = model::Source::Derived;
    m.unit = "dram";
    m.note = fmt::format("{}-bit bus x {} MHz memory clock x 2 transfers per clock", gpu.memory_bus_bits,
                         format_sig(gpu.mem_clock_max_mhz, 4));
    r.add(std::move(m));
  }
  return r;
}

model::Roofline reference_roofline(const CpuInfo& cpu) {
  // No memory ceiling: DRAM bandwidth needs the channel count and speed (DMI),
  // which an unprivileged process cannot read; `roofline ceilings` measures it.
  model::Roofline r(cpu.model_name);
  add_compute(r, cpu_peaks(cpu), "");
  return r;
}

}  // namespace roofline::hw

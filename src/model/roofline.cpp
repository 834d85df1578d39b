#include "roofline/model/roofline.hpp"

#include <algorithm>
#include <limits>

#include "roofline/core/error.hpp"

namespace roofline::model {

const char* to_string(CeilingKind k) { return k == CeilingKind::Compute ? "compute" : "memory"; }
const char* to_string(Source s) {
  switch (s) {
    case Source::Measured: return "measured";
    case Source::Datasheet: return "datasheet";
    case Source::Derived: return "derived";
  }
  return "derived";
}
const char* to_string(Bound b) { return b == Bound::Memory ? "memory" : "compute"; }

void Roofline::add(Ceiling c) {
  ROOFLINE_ASSERT(c.value >= 0, "a ceiling cannot be negative: " + c.id);
  for (auto& e : ceilings_) {
    if (e.id == c.id && e.source == c.source) {
      e = std::move(c);
      return;
    }
  }
  ceilings_.push_back(std::move(c));
}

const Ceiling* Roofline::find(const std::string& id, std::optional<Source> source) const {
  const Ceiling* best = nullptr;
  for (const auto& c : ceilings_) {
    if (c.id != id) continue;
    if (source && c.source != *source) continue;
    if (!best || static_cast<int>(c.source) < static_cast<int>(best->source)) best = &c;
  }
  return best;
}

namespace {
// Measured beats datasheet beats derived; within one source, the larger value.
bool better(const Ceiling& a, const Ceiling* b) {
  if (!b) return true;
  if (a.source != b->source) return static_cast<int>(a.source) < static_cast<int>(b->source);
  return a.value > b->value;
}
}  // namespace

const Ceiling* Roofline::compute(const std::string& precision, const std::string& unit) const {
  const Ceiling* best = nullptr;
  for (const auto& c : ceilings_)
    if (c.kind == CeilingKind::Compute && c.precision == precision && (unit.empty() || c.unit == unit) &&
        better(c, best))
      best = &c;
  return best;
}

const Ceiling* Roofline::memory(const std::string& level) const {
  const Ceiling* best = nullptr;
  for (const auto& c : ceilings_)
    if (c.kind == CeilingKind::Memory && c.unit == level && better(c, best)) best = &c;
  return best;
}

std::vector<const Ceiling*> Roofline::of_kind(CeilingKind kind) const {
  std::vector<const Ceiling*> r;
  for (const auto& c : ceilings_)
    if (c.kind == kind) r.push_back(&c);
  return r;
}

double attainable(double ai, double peak, double bandwidth) {
  if (ai <= 0) return 0;
  return std::min(peak, ai * bandwidth);
}

double ridge_point(double peak, double bandwidth) {
  if (bandwidth <= 0) return std::numeric_limits<double>::infinity();
  return peak / bandwidth;
}

double time_floor(double flops, double bytes, double peak, double bandwidth) {
  double tc = peak > 0 ? flops / peak : 0;
  double tm = bandwidth > 0 ? bytes / bandwidth : 0;
  return std::max(tc, tm);
}

Placement place(double flops, double bytes, double seconds, const Ceiling& compute,
                const Ceiling& memory) {
  ROOFLINE_ASSERT(compute.kind == CeilingKind::Compute, "place(): first ceiling must be compute");
  ROOFLINE_ASSERT(memory.kind == CeilingKind::Memory, "place(): second ceiling must be memory");
  Placement p;
  p.flops = flops;
  p.bytes = bytes;
  p.seconds = seconds;
  p.ai = bytes > 0 ? flops / bytes : std::numeric_limits<double>::infinity();
  p.achieved = seconds > 0 ? flops / seconds : 0;
  p.bandwidth = seconds > 0 ? bytes / seconds : 0;
  p.ridge = ridge_point(compute.value, memory.value);
  p.attainable = bytes > 0 ? attainable(p.ai, compute.value, memory.value) : compute.value;
  p.bound = p.ai < p.ridge ? Bound::Memory : Bound::Compute;
  // Under the slope, achieved/attainable equals achieved bandwidth over the
  // memory ceiling; computing it that way also covers work with no FLOPs.
  if (p.bound == Bound::Memory)
    p.efficiency = memory.value > 0 ? p.bandwidth / memory.value : 0;
  else
    p.efficiency = p.attainable > 0 ? p.achieved / p.attainable : 0;
  p.floor_seconds = time_floor(flops, bytes, compute.value, memory.value);
  return p;
}

std::string classify(const Placement& p, double low) {
  if (p.efficiency < low) return "latency-bound";
  return p.bound == Bound::Memory ? "memory-bound" : "compute-bound";
}

std::string compute_ceiling_id(const std::string& device_kind, const std::string& precision) {
  if (device_kind == "cpu") return "fp32.simd";
  if (precision == "fp32") return "fp32.cuda";  // TF32 off: the CUDA cores
  return precision + ".tensor";
}

}  // namespace roofline::model

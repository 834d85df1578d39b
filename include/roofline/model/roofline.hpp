// The roofline model: a set of ceilings (compute per precision and unit,
// bandwidth per memory level) and what follows from them. Everything that
// places a kernel, layer or model against the hardware goes through here.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace roofline::model {

enum class CeilingKind { Compute, Memory };
// Measured on this machine, taken from a datasheet, or derived from device
// attributes (clock x units x ops per clock) when no datasheet entry exists.
enum class Source { Measured, Datasheet, Derived };

const char* to_string(CeilingKind k);
const char* to_string(Source s);

struct Ceiling {
  std::string id;         // stable key, e.g. "fp32.cuda", "bf16.tensor", "dram", "l2"
  std::string label;      // for people, e.g. "BF16 tensor core (dense)"
  CeilingKind kind = CeilingKind::Compute;
  double value = 0;       // FLOP/s (or OP/s for integers) for compute; bytes/s for memory
  Source source = Source::Measured;
  std::string precision;  // compute: fp64 fp32 tf32 fp16 bf16 fp8 int8; empty for memory
  std::string unit;       // compute: "cuda" (CUDA cores), "tensor", "simd" (CPU); memory: level
                          // "dram", "l2", "l1", "smem", "l3", "pcie"
  std::string note;       // how it was obtained (kernel, library, datasheet source)
};

class Roofline {
 public:
  Roofline() = default;
  explicit Roofline(std::string device) : device_(std::move(device)) {}

  void add(Ceiling c);  // replaces an existing ceiling with the same id and source
  const std::vector<Ceiling>& ceilings() const { return ceilings_; }
  const std::string& device() const { return device_; }

  const Ceiling* find(const std::string& id, std::optional<Source> source = std::nullopt) const;
  // Highest compute ceiling for a precision (any unit when `unit` is empty),
  // preferring measured over datasheet over derived figures.
  const Ceiling* compute(const std::string& precision, const std::string& unit = {}) const;
  // Bandwidth of a memory level, preferring measured figures.
  const Ceiling* memory(const std::string& level = "dram") const;
  std::vector<const Ceiling*> of_kind(CeilingKind kind) const;

 private:
  std::string device_;
  std::vector<Ceiling> ceilings_;
};

// attainable(AI) = min(peak, AI x bandwidth)
double attainable(double ai, double peak, double bandwidth);
// AI where the bandwidth slope meets the compute roof.
double ridge_point(double peak, double bandwidth);
// The least time the work can take: max(flops / peak, bytes / bandwidth).
double time_floor(double flops, double bytes, double peak, double bandwidth);

enum class Bound { Memory, Compute };
const char* to_string(Bound b);

struct Placement {
  double flops = 0, bytes = 0, seconds = 0;
  double ai = 0;           // flops / bytes
  double achieved = 0;     // flops / seconds
  double bandwidth = 0;    // bytes / seconds
  double attainable = 0;   // min(peak, ai x bw)
  double efficiency = 0;   // achieved / attainable
  double ridge = 0;
  double floor_seconds = 0;
  Bound bound = Bound::Memory;  // which roof is the lower one at this AI
};

// Places measured work (FLOPs, bytes moved at the ceiling's memory level, time)
// under a compute and a memory ceiling.
Placement place(double flops, double bytes, double seconds, const Ceiling& compute,
                const Ceiling& memory);

// The compute ceiling work of a precision is held against: the precision's
// tensor roof on a GPU ("bf16.tensor"; fp32 the CUDA cores, "fp32.cuda", as
// TF32 is off), the vector FMA roof on a CPU ("fp32.simd"). device_kind "cpu"
// or "gpu"; ids as in roofline/measure/figure.hpp.
std::string compute_ceiling_id(const std::string& device_kind, const std::string& precision);

// A coarse verdict: "memory-bound", "compute-bound", or, when the work reaches
// less than `low` of what the roof allows, "latency-bound" (too little work in
// flight or launch overhead: neither roof is the limit).
std::string classify(const Placement& p, double low = 0.2);

}  // namespace roofline::model

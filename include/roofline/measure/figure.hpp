// A measured figure (a ceiling, a latency, a sweep point) with its timing,
// the clock it ran at, how it was obtained and what it is compared with.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "roofline/measure/measure.hpp"
#include "roofline/model/roofline.hpp"
#include "roofline/store/db.hpp"

namespace roofline::measure {

// Measurement names (the `name` column of the store, and the id of the
// roofline ceiling they become):
//   memory   dram.read dram.write dram.copy dram.memcpy l2.read smem.read
//            pcie.h2d.pinned pcie.d2h.pinned pcie.h2d.pageable pcie.d2h.pageable
//            cpu: mem.read mem.copy cache.l1 cache.l2 cache.l3          (unit B/s)
//   compute  <precision>.<unit>: fp64.cuda fp32.cuda fp16.cuda bf16.cuda
//            tf32.tensor fp16.tensor bf16.tensor fp8.tensor int8.tensor fp64.tensor
//            cpu: fp32.simd fp64.simd                                    (FLOP/s; int8: OP/s)
//            library reference figures add a suffix: bf16.tensor.cublaslt
//   latency  launch.latency launch.overhead launch.graph launch.cooperative sync.grid
//            dram.latency l2.latency (s);
//            dram.bytes_in_flight l2.bytes_in_flight (B, Little's law)
struct Figure {
  std::string name;       // see above
  std::string label;      // for people: "DRAM read", "BF16 tensor core (dense, wgmma)"
  std::string unit;       // "B/s", "FLOP/s", "OP/s", "s", "B"
  double value = 0;       // the headline figure, from the median sample time
  std::string precision;  // compute figures
  std::string level;      // memory level ("dram", "l2", "smem", "pcie", "cache.l1"...) or
                          // compute unit ("cuda", "tensor", "simd"); empty for latencies
  std::string method;     // how: "own kernel (float4 loads, 4 in flight)", "cuBLASLt 8192^3", "cudaMemcpy"
  Measurement measurement;
  std::optional<double> reference;  // the datasheet (or derived) figure it is compared with
  std::string reference_label;      // where that reference comes from
  nlohmann::json params = nlohmann::json::object();  // sizes, k, grid, anything to reproduce it
  std::vector<std::string> notes;

  // The figure as a roofline ceiling (compute or memory); nullopt for latencies.
  std::optional<model::Ceiling> ceiling() const;
};

using Progress = std::function<void(const std::string&)>;

// Writes one figure to `measurements` (category: "ceiling", "sweep", ...).
std::int64_t store_figure(store::Db& db, std::int64_t run_id, std::optional<std::int64_t> device_id,
                          const std::string& category, const Figure& f);

// The newest measured ceilings of a device (by name) from the store.
model::Roofline load_measured_roofline(store::Db& db, const std::string& device_name);

}  // namespace roofline::measure

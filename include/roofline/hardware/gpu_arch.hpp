// Per-SM units and per-clock rates of each NVIDIA architecture, by compute
// capability: what the CUDA runtime does not report (FP32 lanes, FP64 units,
// tensor cores per SM, and how many FLOPs each does per clock).
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace roofline::hw {

struct GpuArch {
  int cc_major = 0, cc_minor = 0;
  std::string name;               // "Hopper"
  std::string tensor_generation;  // "4th generation"; empty without tensor cores
  int fp32_lanes_per_sm = 0;      // "CUDA cores"
  int fp64_units_per_sm = 0;      // 0 when not known
  int tensor_cores_per_sm = 0;
  // Dense FLOPs (OPs for integers) per clock per SM, keyed like ceilings:
  // "fp32.cuda", "bf16.tensor". Absent: the architecture lacks the format or
  // the rate is not published.
  std::vector<std::pair<std::string, double>> per_clock;
  bool sparse_tensor = false;  // 2:4 structured sparsity doubles the tensor rates (not FP64)
  std::string note;            // caveats that apply to derived figures
};

// The entry for a compute capability, or nullptr when roofline has no table for it.
const GpuArch* gpu_arch(int cc_major, int cc_minor);
// "Hopper", "Ampere", ...; "unknown (CC x.y)" when not recognised.
std::string architecture_name(int cc_major, int cc_minor);

}  // namespace roofline::hw

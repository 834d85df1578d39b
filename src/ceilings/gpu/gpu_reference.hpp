// What each GPU figure is compared with: the datasheet figure when the
// hardware database has one, else a figure derived from the device (units per
// SM x clock), computed at the clock the figure was measured at and labelled
// "derived". Plain C++ (no CUDA): used by the measurement code and tested on CPU.
#pragma once
#include <optional>
#include <string>

#include "roofline/measure/figure.hpp"
#include "roofline/hardware/gpu_info.hpp"
#include "roofline/model/roofline.hpp"

namespace roofline::ceilings::gpu {

// The roofline ceiling a figure is compared with: "dram.read" -> "dram",
// "bf16.tensor.cublaslt" -> "bf16.tensor", "l2.read" -> "l2".
std::string reference_id(const std::string& figure_name);

// Work one SM does per clock at `key` ("fp32.cuda", "bf16.tensor" in FLOP or
// OP, dense; "smem" in bytes), from the architecture (compute capability) or
// the unit counts in `gpu` when those are known; nullopt when unknown.
std::optional<double> per_sm_per_clock(const hw::GpuInfo& gpu, const std::string& key);

// SMs x per_sm_per_clock x clock.
std::optional<double> peak_at_clock(const hw::GpuInfo& gpu, const std::string& key, double clock_mhz);

// Sets f.reference and f.reference_label (datasheet first, else derived; left
// empty when neither is known), and for compute and shared-memory figures
// params "peak_at_clock" / "peak_at_clock_mhz": the peak at the clock measured
// with the figure (its Measurement's median clock).
void attach_reference(measure::Figure& f, const hw::GpuInfo& gpu, const model::Roofline& sheet);

}  // namespace roofline::ceilings::gpu

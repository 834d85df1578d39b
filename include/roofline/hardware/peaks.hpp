// Theoretical peak rates of a device, one row per precision and unit, dense
// and 2:4-sparse side by side, each with its source and the arithmetic or
// document behind it. reference_roofline() turns the dense rates into ceilings.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "roofline/hardware/cpu_info.hpp"
#include "roofline/hardware/datasheet.hpp"
#include "roofline/hardware/gpu_info.hpp"
#include "roofline/model/roofline.hpp"

namespace roofline::hw {

struct Peak {
  std::string id;                // the dense key and ceiling id: "bf16.tensor", "fp16.tensor.fp16acc", "fp64.simd"
  std::string precision;         // "bf16"
  std::string unit;              // "cuda" (CUDA cores), "tensor", "simd" (CPU vector FMA), "amx"
  std::string variant;           // "" or e.g. "fp16acc"
  double dense = 0;              // FLOP/s, OP/s for integer precisions
  std::optional<double> sparse;  // with 2:4 structured sparsity, where the hardware has it
  model::Source source = model::Source::Derived;
  std::string basis;  // "[1]" (a datasheet source) or the arithmetic: "132 SMs x 4096 FLOP/clk x 1980 MHz"

  bool integer() const { return precision.rfind("int", 0) == 0; }
  const char* rate_unit() const { return integer() ? "OP/s" : "FLOP/s"; }
  // "BF16 tensor cores, dense (FLOP/s)"
  std::string label() const;
};

// A datasheet entry's figures.
std::vector<Peak> datasheet_peaks(const Datasheet& d);
// Figures derived from the GPU's attributes: SMs x per-SM rate of its
// architecture x max SM clock. Empty when the architecture or clock is unknown.
std::vector<Peak> derived_gpu_peaks(const GpuInfo& gpu);
// The datasheet's figures when an entry matches, else the derived ones.
std::vector<Peak> gpu_peaks(const GpuInfo& gpu);
// cores x clock x FMA units x lanes x 2, per precision the CPU has
// instructions for (FP64, FP32; BF16/FP16/INT8 with AVX512_BF16, AVX512_FP16,
// VNNI; AMX tiles).
std::vector<Peak> cpu_peaks(const CpuInfo& cpu);

// "fp32" -> "FP32", "fp8" -> "FP8"; "cuda" -> "CUDA cores"
std::string precision_title(const std::string& precision);
std::string unit_title(const std::string& unit);

}  // namespace roofline::hw

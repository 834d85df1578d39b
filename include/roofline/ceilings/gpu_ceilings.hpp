// GPU ceilings: DRAM/L2/shared-memory bandwidth, CUDA-core FMA rates,
// tensor-core rates, host<->device bandwidth, launch and DRAM latency, and
// Little's law. In a CPU-only build both entry points throw Unsupported.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "roofline/ceilings/options.hpp"
#include "roofline/measure/figure.hpp"
#include "roofline/core/error.hpp"

namespace roofline::ceilings {

// A figure that could not be measured, and why (the Error's text and hint).
struct FigureFailure {
  std::string name;   // "bf16.tensor", "dram.read", ...
  std::string label;
  std::string what;
  std::string hint;
  ErrorKind kind = ErrorKind::Internal;  // of the Error that stopped it
};

struct GpuCeilingsResult {
  std::string device_name;
  std::vector<measure::Figure> figures;          // in the order measured
  std::vector<FigureFailure> failures;  // figures that failed (each also reported as it happened)
  std::vector<std::string> notes;       // what was chosen and why
  std::vector<std::string> warnings;    // what the user must not miss (a failed self-check, ...)
};

// Measures every figure `opts` wants on GPU `device`. A figure that fails is
// recorded in `failures` and the others still run; throws only when the device
// cannot be used at all.
GpuCeilingsResult run_gpu_ceilings(int device, const CeilingOptions& opts, const measure::Progress& progress,
                                   const FigureSink& sink = {});

// The figures alone; throws the first failure's Error when nothing was measured.
std::vector<measure::Figure> measure_gpu_ceilings(int device, const CeilingOptions& opts, const measure::Progress& progress);

}  // namespace roofline::ceilings

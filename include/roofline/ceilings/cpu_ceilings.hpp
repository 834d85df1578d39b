// CPU ceilings: memory bandwidth on all cores, cache plateaus from a
// working-set sweep, FP32/FP64 FMA peak with the widest SIMD present.
#pragma once
#include <vector>

#include "roofline/ceilings/options.hpp"
#include "roofline/measure/figure.hpp"

namespace roofline::ceilings {

// Every figure is passed to `sink` as soon as it is measured, then returned
// with the others.
std::vector<measure::Figure> measure_cpu_ceilings(const CeilingOptions& opts, const measure::Progress& progress,
                                                  const FigureSink& sink = {});

}  // namespace roofline::ceilings

// CPU ceilings: memory bandwidth on all cores, cache plateaus from a
// working-set sweep, FP32/FP64 FMA peak with the widest SIMD present.
#pragma once
#include <vector>

#include "roofline/bench/figure.hpp"

namespace roofline::bench {

struct CeilingOptions {
  bool quick = false;              // --quick: fewer sizes and samples
  std::vector<std::string> only;   // measure only figures whose name starts with one of these
  MeasureOptions measure;          // sampling discipline (quick() when quick)
  bool wants(const std::string& name) const;
};

std::vector<Figure> measure_cpu_ceilings(const CeilingOptions& opts, const Progress& progress);

}  // namespace roofline::bench

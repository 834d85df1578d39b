// What a `roofline ceilings` pass measures and how carefully: shared by the
// CPU and GPU ceilings.
#pragma once
#include <string>
#include <vector>

#include "roofline/measure/measure.hpp"

namespace roofline::ceilings {

struct CeilingOptions {
  bool quick = false;                // --quick: fewer sizes and samples
  std::vector<std::string> only;     // measure only figures whose name starts with one of these
  measure::MeasureOptions measure;   // sampling discipline (quick() when quick)
  bool wants(const std::string& name) const;
};

}  // namespace roofline::ceilings

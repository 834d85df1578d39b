// What a `roofline ceilings` pass measures and how carefully: shared by the
// CPU and GPU ceilings.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "roofline/measure/figure.hpp"
#include "roofline/measure/measure.hpp"

namespace roofline::ceilings {

struct CeilingOptions {
  bool quick = false;                // --quick: fewer sizes and samples
  std::vector<std::string> only;     // measure only figures whose name starts with one of these
  measure::MeasureOptions measure;   // sampling discipline (quick() when quick)
  bool wants(const std::string& name) const;
};

// Called with each figure as soon as it is measured (to store it at once, so an
// interrupted run keeps what it had).
using FigureSink = std::function<void(const measure::Figure&)>;

}  // namespace roofline::ceilings

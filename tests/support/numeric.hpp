// Numeric comparisons shared by the CPU and GPU tests.
#pragma once
#include <algorithm>
#include <cmath>
#include <vector>

namespace roofline::test {

// ‖got − want‖₂ / ‖want‖₂ over want's elements (got may be longer, e.g. with
// guard floats after them); infinite if any of those is not finite.
inline double rel_error(const std::vector<float>& got, const std::vector<double>& want) {
  double num = 0, den = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    if (!std::isfinite(got[i])) return INFINITY;
    num += (got[i] - want[i]) * (got[i] - want[i]);
    den += want[i] * want[i];
  }
  return std::sqrt(num / std::max(den, 1e-300));
}

// max |got − want| / max |want| over want's elements (the absolute largest
// error when want is all zeros); infinite if any of got's is not finite.
inline double max_rel_error(const std::vector<float>& got, const std::vector<double>& want) {
  double num = 0, den = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    if (!std::isfinite(got[i])) return INFINITY;
    num = std::max(num, std::fabs(got[i] - want[i]));
    den = std::max(den, std::fabs(want[i]));
  }
  return den > 0 ? num / den : num;
}

}  // namespace roofline::test

#include "roofline/ceilings/options.hpp"
#include "roofline/core/strings.hpp"

namespace roofline::ceilings {

bool CeilingOptions::wants(const std::string& name) const {
  if (only.empty()) return true;
  for (const auto& p : only)
    if (starts_with(name, p)) return true;
  return false;
}

}  // namespace roofline::ceilings

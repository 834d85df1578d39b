#include "roofline/core/clock.hpp"

#include <chrono>

namespace roofline {

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace roofline

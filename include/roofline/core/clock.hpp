// The host's monotonic clock for timing code.
#pragma once

namespace roofline {

// Seconds on std::chrono::steady_clock from an arbitrary start: differences of
// two readings are elapsed times.
double now_seconds();

}  // namespace roofline

// Core clock estimate for machines that publish none (no cpufreq, no
// "cpu MHz"): a chain of dependent integer adds retires one add per cycle on
// every x86 and Arm core we know, so adds / seconds is the clock. The added
// value is a register, not an immediate: recent Intel cores (Golden Cove and
// later) fold chains of immediate adds in the renamer, and `add $1` measured
// 16.3 GHz on the GPU host's Emerald Rapids VM (2026-11-24, against 2.1 GHz in
// /proc/cpuinfo), which made every derived CPU peak 4-8x too high.
#include <algorithm>
#include <chrono>
#include <cstdint>

#include "roofline/hardware/cpu_info.hpp"

namespace roofline::hw {

namespace {

constexpr int kAddsPerIteration = 32;

#if defined(__x86_64__)
#define ROOFLINE_ADD1 "add %1, %0\n\t"
#elif defined(__aarch64__)
#define ROOFLINE_ADD1 "add %0, %0, %1\n\t"
#endif

#ifdef ROOFLINE_ADD1
#define ROOFLINE_ADD4 ROOFLINE_ADD1 ROOFLINE_ADD1 ROOFLINE_ADD1 ROOFLINE_ADD1
#define ROOFLINE_ADD32 \
  ROOFLINE_ADD4 ROOFLINE_ADD4 ROOFLINE_ADD4 ROOFLINE_ADD4 ROOFLINE_ADD4 ROOFLINE_ADD4 ROOFLINE_ADD4 ROOFLINE_ADD4

// The asm keeps the compiler from folding the chain into one multiply; the
// loop counter and branch run on other ports, in the shadow of the chain.
__attribute__((noinline)) std::uint64_t add_chain(std::uint64_t x, std::uint64_t iterations) {
  std::uint64_t one = 1;
  asm volatile("" : "+r"(one));  // a value the compiler cannot see: it stays a register operand
  for (std::uint64_t i = 0; i < iterations; ++i) asm volatile(ROOFLINE_ADD32 : "+r"(x) : "r"(one));
  return x;
}
#endif

}  // namespace

double measure_cpu_mhz() {
#ifdef ROOFLINE_ADD1
  using clock = std::chrono::steady_clock;
  // Warm up (lets the core leave an idle clock state), then keep the fastest
  // of several ~4 ms trials: interruptions only ever make a trial slower.
  volatile std::uint64_t sink = add_chain(0, 1u << 18);
  double best = 0;
  std::uint64_t iterations = 1u << 12;
  for (int trial = 0; trial < 12; ++trial) {
    auto t0 = clock::now();
    sink = add_chain(sink, iterations);
    double s = std::chrono::duration<double>(clock::now() - t0).count();
    if (s < 2e-3) {  // too short to time well: grow and retry
      iterations *= 2;
      --trial;
      continue;
    }
    best = std::max(best, static_cast<double>(iterations) * kAddsPerIteration / s / 1e6);
  }
  (void)sink;
  return best;
#else
  return 0;
#endif
}

}  // namespace roofline::hw

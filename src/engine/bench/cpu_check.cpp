// The host's CPU as the engine's own threads find it before a CPU run: one
// thread's FMA rate against all of them at once (bench.hpp, CpuScaling).
#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "roofline/core/clock.hpp"
#include "roofline/engine/bench.hpp"
#include "src/ceilings/cpu/simd.hpp"
#include "src/engine/cpu/thread_pool.hpp"

namespace roofline::engine {

CpuScaling measure_cpu_scaling(int threads) {
  const auto& k = ceilings::cpu::simd_loops();
  CpuScaling s;
  s.threads = std::max(1, threads);
  double sink = 0;  // every loop's result, stored to a volatile at the end so no loop is dropped
  // Iterations of the register-only FMA loop that take ~3 ms on one thread.
  std::int64_t iters = 1 << 12;
  for (;;) {
    const double t0 = now_seconds();
    sink = sink + k.fma_f32(iters);
    if (now_seconds() - t0 >= 3e-3 || iters >= (std::int64_t{1} << 34)) break;
    iters *= 2;
  }
  const double flops = k.fma_flops(iters, false);
  double one = 0, all = 0;
  for (int rep = 0; rep < 3; ++rep) {  // best of three each: the rate the host can give
    double t0 = now_seconds();
    sink = sink + k.fma_f32(iters);
    one = std::max(one, flops / (now_seconds() - t0));
    std::vector<double> part(static_cast<size_t>(s.threads), 0.0);
    auto body = [&](int t) { part[static_cast<size_t>(t)] = k.fma_f32(iters); };
    t0 = now_seconds();
    fast::run_on_threads(s.threads, body);
    all = std::max(all, flops * s.threads / (now_seconds() - t0));
    for (double v : part) sink = sink + v;
  }
  s.one_gflops = one / 1e9;
  s.all_gflops = all / 1e9;
  volatile double keep = sink;
  (void)keep;
  return s;
}

std::string cpu_scaling_note(const CpuScaling& s) {
  if (s.threads <= 0 || s.one_gflops <= 0) return "";
  std::string n = fmt::format(
      "CPU check before timing: {} threads ran a register-only FMA loop at {:.1f}× one thread's rate ({:.0f} against "
      "{:.0f} GFLOP/s)",
      s.threads, s.ratio(), s.all_gflops, s.one_gflops);
  if (s.contended())
    n += fmt::format(
        " — under 0.4 × {}: this host's vCPUs share cores or are contended beyond what hyperthreads give, so its CPU "
        "times (roofline's and the peer's) are not those of its cores; compare CPU runs from hosts whose check reads "
        "alike",
        s.threads);
  return n;
}

}  // namespace roofline::engine

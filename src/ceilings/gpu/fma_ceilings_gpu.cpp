// CUDA-core FMA throughput: FP64, FP32, FP16 (half2) and BF16 (bf16x2), each
// reported with the SM clock read inside the kernel (clock64 over %globaltimer)
// and the theoretical peak at that clock.
#include <fmt/format.h>

#include <vector>

#include "roofline/core/strings.hpp"
#include "roofline/cuda/check.hpp"
#include "src/ceilings/gpu/session.hpp"

namespace roofline::ceilings::gpu {

namespace {

struct FmaFigure {
  FmaType type;
  const char* name;
  const char* precision;
  const char* label;
  const char* instruction;
};

const FmaFigure kFigures[] = {
    {FmaType::FP64, "fp64.cuda", "fp64", "FP64 FMA, CUDA cores", "DFMA (fma.rn.f64)"},
    {FmaType::FP32, "fp32.cuda", "fp32", "FP32 FMA, CUDA cores", "FFMA (fma.rn.f32)"},
    {FmaType::FP16x2, "fp16.cuda", "fp16", "FP16 FMA, CUDA cores (half2)", "HFMA2 (__hfma2 on half2, 4 FLOPs)"},
    {FmaType::BF16x2, "bf16.cuda", "bf16", "BF16 FMA, CUDA cores (bf16x2)",
     "HFMA2.BF16 (__hfma2 on bf16x2, 4 FLOPs)"},
};

// Timing runs use x = -x + 1.5: every FMA changes every chain (no fixed point,
// so the switching activity, and power, is that of live data), and the values
// stay exact and never zero.
constexpr double kA = -1.0, kB = 1.5;
constexpr uint32_t kSentinel = 0x7fc0deadu;

void measure_one(Session& s, const FmaFigure& ff) {
  const FmaConfig cfg = fma_config(ff.type);
  const int grid = fma_grid(ff.type, s.device());
  const size_t threads = static_cast<size_t>(grid) * cfg.threads;
  cuda::DeviceBuffer<char> out(threads * cfg.bytes_per_result, "FMA results");
  auto run = [&](int iters, ClockProbe* probe) {
    return [&, iters, probe](cudaStream_t st) {
      launch_fma(ff.type, grid, iters, kA, kB, out.get(), false, kSentinel, probe, st);
    };
  };
  s.time_once(run(16, nullptr));
  const double t0 = s.time_once(run(128, nullptr));
  const int iters = static_cast<int>(scaled_count(128, t0, s.quick() ? 5e-3 : 10e-3, 1 << 28));
  measure::Measurement m = s.timer().measure(run(iters, s.probe()), s.measure_options(), 1, s.probe_clock());
  const double flops =
      static_cast<double>(threads) * iters * cfg.unroll * cfg.chains * static_cast<double>(cfg.flops_per_fma);
  measure::Figure f;
  f.name = ff.name;
  f.label = ff.label;
  f.unit = "FLOP/s";
  f.precision = ff.precision;
  f.level = "cuda";
  f.method = fmt::format("{}: {} independent chains x {} per loop trip, {} blocks x {} threads", ff.instruction,
                         cfg.chains, cfg.unroll, grid, cfg.threads);
  f.value = flops / m.time.median;
  f.measurement = std::move(m);
  f.params["flops_per_run"] = flops;
  f.params["iters"] = iters;
  f.params["grid"] = grid;
  f.params["threads"] = cfg.threads;
  f.params["chains"] = cfg.chains;
  f.params["unroll"] = cfg.unroll;
  s.add(std::move(f));
}

}  // namespace

void measure_fma(Session& s) {
  for (const auto& ff : kFigures)
    if (s.wants(ff.name)) s.attempt(ff.name, ff.label, [&] { measure_one(s, ff); });
}

}  // namespace roofline::ceilings::gpu

// CUDA-core FMA throughput: FP64, FP32, FP16 (half2) and BF16 (bf16x2), each
// reported with the SM clock read inside the kernel (clock64 over %globaltimer)
// and the theoretical peak at that clock.
#include <fmt/format.h>

#include <random>
#include <vector>

#include "roofline/core/strings.hpp"
#include "roofline/cuda/check.hpp"
#include "src/bench/gpu/session.hpp"

namespace roofline::bench::gpu {

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
  Measurement m = s.timer().measure(run(iters, s.probe()), s.measure_options(), 1, s.probe_clock());
  const double flops =
      static_cast<double>(threads) * iters * cfg.unroll * cfg.chains * static_cast<double>(cfg.flops_per_fma);
  Figure f;
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

// A (8x4) and B (4x8) of small integers, as the DMMA kernel's lanes hold them,
// and the product D = A . B (8x8).
struct DmmaOperands {
  std::vector<double> ab;  // 64: a then b, by lane
  double d[8][8] = {};
};
DmmaOperands dmma_operands(uint32_t seed) {
  DmmaOperands o;
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> v(1, 8), sign(0, 1);
  o.ab.resize(64);
  for (double& x : o.ab) x = v(rng) * (sign(rng) ? -1.0 : 1.0);
  // lane l holds A[l/4][l%4] at ab[l] and B[l%4][l/4] at ab[32 + l].
  for (int r = 0; r < 8; ++r)
    for (int n = 0; n < 8; ++n)
      for (int k = 0; k < 4; ++k) o.d[r][n] += o.ab[4 * r + k] * o.ab[32 + 4 * n + k];
  return o;
}

void measure_dmma(Session& s) {
  if (s.prop().major < 8)
    throw_unsupported(fmt::format("FP64 tensor cores (DMMA) need compute capability 8.0 or newer; this GPU is {}.{}",
                                  s.prop().major, s.prop().minor));
  // Self-check first: one block, 3 passes, every accumulator of every thread.
  const DmmaOperands o = dmma_operands(0x5eed5000u);
  cuda::DeviceBuffer<double> ab(64, "DMMA operands");
  ab.upload(o.ab.data(), 64, s.stream());
  cuda::DeviceBuffer<int> err(1, "error flag");
  CUDA_CHECK(cudaMemsetAsync(err.get(), 0, sizeof(int), s.stream()));
  const int passes = 3;
  {
    cuda::DeviceBuffer<double> out(static_cast<size_t>(kDmmaThreads) * kDmmaChains * 2, "DMMA check");
    CUDA_CHECK(cudaMemsetAsync(out.get(), 0xFF, out.bytes(), s.stream()));
    launch_dmma(1, passes, ab.get(), out.get(), true, nullptr, err.get(), s.stream());
    std::vector<double> h(out.size());
    out.download(h.data(), h.size(), s.stream());
    int e = 0;
    CUDA_CHECK(cudaMemcpyAsync(&e, err.get(), sizeof e, cudaMemcpyDeviceToHost, s.stream()));
    CUDA_CHECK(cudaStreamSynchronize(s.stream()));
    if (e != 0) throw_unsupported("the DMMA kernel is not built for this GPU");
    for (int tid = 0; tid < kDmmaThreads; ++tid)
      for (int c = 0; c < kDmmaChains; ++c)
        for (int i = 0; i < 2; ++i) {
          const int lane = tid % 32;
          const double want = passes * o.d[lane / 4][2 * (lane % 4) + i];
          const double got = h[(static_cast<size_t>(tid) * kDmmaChains + c) * 2 + i];
          if (got != want)
            throw Error(ErrorKind::Numeric,
                        fmt::format("the DMMA kernel failed its self-check: thread {} accumulator {} element {} is {}, "
                                    "expected {}",
                                    tid, c, i, got, want));
        }
  }
  const int grid = dmma_grid(s.device());
  cuda::DeviceBuffer<double> out(static_cast<size_t>(grid) * kDmmaThreads, "DMMA guard output");
  auto run = [&](int iters, ClockProbe* probe) {
    return [&, iters, probe](cudaStream_t st) {
      launch_dmma(grid, iters, ab.get(), out.get(), false, probe, err.get(), st);
    };
  };
  s.time_once(run(64, nullptr));
  const double t0 = s.time_once(run(512, nullptr));
  const int iters = static_cast<int>(scaled_count(512, t0, s.quick() ? 5e-3 : 10e-3, 1 << 28));
  Measurement m = s.timer().measure(run(iters, s.probe()), s.measure_options(), 1, s.probe_clock());
  const double flops = static_cast<double>(grid) * (kDmmaThreads / 32) * iters * kDmmaChains * 512.0;
  Figure f;
  f.name = "fp64.tensor";
  f.label = "FP64 tensor core (DMMA, dense)";
  f.unit = "FLOP/s";
  f.precision = "fp64";
  f.level = "tensor";
  f.method = fmt::format("own kernel: mma.sync m8n8k4 f64 (DMMA), {} independent accumulators per warp, {} blocks x {} "
                         "threads, registers only; self-check passed",
                         kDmmaChains, grid, kDmmaThreads);
  f.value = flops / m.time.median;
  f.measurement = std::move(m);
  f.params["flops_per_run"] = flops;
  f.params["iters"] = iters;
  f.params["grid"] = grid;
  s.add(std::move(f));
}

}  // namespace

void measure_fma(Session& s) {
  for (const auto& ff : kFigures)
    if (s.wants(ff.name)) s.attempt(ff.name, ff.label, [&] { measure_one(s, ff); });
  if (s.wants("fp64.tensor")) s.attempt("fp64.tensor", "FP64 tensor core (DMMA)", [&] { measure_dmma(s); });
}

}  // namespace roofline::bench::gpu

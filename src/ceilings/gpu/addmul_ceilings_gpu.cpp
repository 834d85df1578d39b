// CUDA-core add+multiply throughput (<precision>.cuda.addmul): the rate of an
// add and a multiply per term, the seed sweep's instruction mix. Measured
// rather than taken as half the FMA rate: on Hopper, half2 FMAs issue on two
// pipes (HFMA2 and HFMA2.MMA), and how many of a loop's adds and multiplies
// the compiler moves to the second is its choice, so only a measurement of
// the same loop says what the mix can reach.
#include <fmt/format.h>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <vector>

#include "kernels/poly_terms.cuh"
#include "roofline/core/strings.hpp"
#include "roofline/cuda/check.hpp"
#include "src/ceilings/gpu/session.hpp"

namespace roofline::ceilings::gpu {

namespace {

struct AddmulFigure {
  FmaType type;
  const char* name;
  const char* precision;
  const char* label;
  const char* instructions;
};

const AddmulFigure kFigures[] = {
    {FmaType::FP64, "fp64.cuda.addmul", "fp64", "FP64 add + multiply, CUDA cores", "DADD + DMUL"},
    {FmaType::FP32, "fp32.cuda.addmul", "fp32", "FP32 add + multiply, CUDA cores", "FADD + FMUL"},
    {FmaType::FP16x2, "fp16.cuda.addmul", "fp16", "FP16 add + multiply, CUDA cores (half2)", "HADD2 + HMUL2"},
    {FmaType::BF16x2, "bf16.cuda.addmul", "bf16", "BF16 add + multiply, CUDA cores (bf16x2)",
     "HADD2.BF16 + HMUL2.BF16"},
};

constexpr uint32_t kSentinel = 0x7fc0beefu;

// E copies of v in the type's device layout.
std::vector<uint8_t> multipliers(FmaType t, double v, int e) {
  std::vector<uint8_t> out;
  auto put = [&out](const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    out.insert(out.end(), b, b + n);
  };
  for (int i = 0; i < e; ++i) {
    switch (t) {
      case FmaType::FP64: put(&v, 8); break;
      case FmaType::FP32: {
        const auto f = static_cast<float>(v);
        put(&f, 4);
        break;
      }
      case FmaType::FP16x2: {
        const __half2 h = __float2half2_rn(static_cast<float>(v));
        put(&h, 4);
        break;
      }
      case FmaType::BF16x2: {
        const __nv_bfloat162 h = __float2bfloat162_rn(static_cast<float>(v));
        put(&h, 4);
        break;
      }
    }
  }
  return out;
}

void measure_one(Session& s, const AddmulFigure& af) {
  const int e = addmul_elements(af.type);
  const int grid = addmul_grid(af.type, s.device());
  const size_t threads = static_cast<size_t>(grid) * kAddmulThreads;
  const int value_bytes = af.type == FmaType::FP64 ? 8 : 4;
  // x = -1: p flips sign every term and r returns to its start every second
  // term, so values stay exact, nonzero and bounded over any number of terms.
  const std::vector<uint8_t> xs = multipliers(af.type, -1.0, e);
  cuda::DeviceBuffer<uint8_t> d_xs(xs.size(), "add+multiply factors");
  d_xs.upload(xs.data(), xs.size(), s.stream());
  cuda::DeviceBuffer<char> out(threads * value_bytes, "add+multiply results");
  auto run = [&](int iters, ClockProbe* probe) {
    return [&, iters, probe](cudaStream_t st) {
      launch_addmul(af.type, grid, iters, d_xs.get(), out.get(), false, kSentinel, probe, st);
    };
  };
  s.time_once(run(8, nullptr));
  const double t0 = s.time_once(run(64, nullptr));
  const int iters = static_cast<int>(scaled_count(64, t0, s.quick() ? 5e-3 : 10e-3, 1 << 24));
  measure::Measurement m = s.timer().measure(run(iters, s.probe()), s.measure_options(), 1, s.probe_clock());
  const int lanes = (af.type == FmaType::FP16x2 || af.type == FmaType::BF16x2) ? 2 : 1;
  // Per term and element: one add and one multiply, each `lanes` FLOPs.
  const double flops = static_cast<double>(threads) * iters * kernels::kPolyUnroll * e * 2.0 * lanes;
  measure::Figure f;
  f.name = af.name;
  f.label = af.label;
  f.unit = "FLOP/s";
  f.precision = af.precision;
  f.level = "cuda";
  f.method = fmt::format("{} (the sweep's loop r += p; p *= x, _rn intrinsics): {} independent elements x {} terms "
                         "per loop trip, {} blocks x {} threads",
                         af.instructions, e, kernels::kPolyUnroll, grid, kAddmulThreads);
  f.value = flops / m.time.median;
  f.measurement = std::move(m);
  f.params["flops_per_run"] = flops;
  f.params["iters"] = iters;
  f.params["grid"] = grid;
  f.params["threads"] = kAddmulThreads;
  f.params["elements"] = e;
  f.params["unroll"] = kernels::kPolyUnroll;
  f.params["instructions"] = af.instructions;
  if (const measure::Figure* fma = s.find(std::string(af.precision) + ".cuda"); fma && fma->value > 0)
    f.params["fraction_of_fma"] = f.value / fma->value;
  s.add(std::move(f));
}

}  // namespace

void measure_addmul(Session& s) {
  for (const auto& af : kFigures)
    if (s.wants(af.name)) s.attempt(af.name, af.label, [&] { measure_one(s, af); });
  std::vector<std::string> parts;
  for (const auto& af : kFigures) {
    const measure::Figure* am = s.find(af.name);
    const measure::Figure* fma = s.find(std::string(af.precision) + ".cuda");
    if (am && fma && fma->value > 0)
      parts.push_back(fmt::format("{} {:.2f}", af.precision, am->value / fma->value));
  }
  if (!parts.empty())
    s.note(fmt::format("add+multiply rate / FMA rate (0.50 when adds and multiplies issue at the FMA instruction "
                       "rate): {}",
                       join(parts, ", ")));
}

}  // namespace roofline::ceilings::gpu

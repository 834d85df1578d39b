// FP64 tensor cores (fp64.tensor): own DMMA kernels, every shape the GPU has:
// mma.sync m8n8k4 f64 (sm_80 and later) and, on sm_90, m16n8k4, m16n8k8 and
// m16n8k16 f64. The first run of m8n8k4 on an H100 reached 33.2 TFLOP/s, half
// the 66.9 of the datasheet: the Ampere shape issues one small product per
// instruction; Hopper's larger shapes do 2, 4 and 8 times the work per
// instruction. Each shape checks itself against a CPU product first; the
// fastest that passed is the figure, the others are in its params and a note.
#include <fmt/format.h>

#include <random>
#include <vector>

#include "roofline/core/strings.hpp"
#include "roofline/cuda/check.hpp"
#include "src/ceilings/gpu/dmma_layout.hpp"
#include "src/ceilings/gpu/session.hpp"

namespace roofline::ceilings::gpu {

namespace {

// A (8x4) and B (4x8) of small integers, as the m8n8k4 kernel's lanes hold
// them, and the product D = A . B (8x8).
struct Dmma8Operands {
  std::vector<double> ab;  // 64: a then b, by lane
  double d[8][8] = {};
};
Dmma8Operands dmma8_operands(uint32_t seed) {
  Dmma8Operands o;
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

int read_flag(const cuda::DeviceBuffer<int>& err, cudaStream_t st) {
  int e = 0;
  CUDA_CHECK(cudaMemcpyAsync(&e, err.get(), sizeof e, cudaMemcpyDeviceToHost, st));
  CUDA_CHECK(cudaStreamSynchronize(st));
  return e;
}

[[noreturn]] void self_check_failed(const std::string& shape, size_t tid, int c, int i, double got, double want) {
  throw Error(ErrorKind::Numeric,
              fmt::format("the DMMA {} kernel failed its self-check: thread {} accumulator {} element {} is {}, expected {}",
                          shape, tid, c, i, got, want),
              "the kernel or its fragment layout is wrong for this GPU: report it with this output");
}

struct Shape {
  int k = 0;  // 0: m8n8k4; else m16n8k<k>
  std::string name() const { return k == 0 ? "m8n8k4" : fmt::format("m16n8k{}", k); }
  double flops_per_mma() const { return k == 0 ? 2.0 * 8 * 8 * 4 : 2.0 * 16 * 8 * k; }
  int chains() const { return k == 0 ? kDmmaChains : kDmma16Chains; }
  int threads() const { return k == 0 ? kDmmaThreads : kDmma16Threads; }
};

// Self-check (one block, 3 passes, every accumulator of every thread), then
// the timing; returns FLOP/s and fills `m`.
double measure_shape(Session& s, const Shape& sh, measure::Measurement& m, int& grid_out) {
  cuda::DeviceBuffer<int> err(1, "error flag");
  CUDA_CHECK(cudaMemsetAsync(err.get(), 0, sizeof(int), s.stream()));
  const int passes = 3;
  const uint32_t seed = std::random_device{}();
  cuda::DeviceBuffer<double> operands;
  if (sh.k == 0) {
    const Dmma8Operands o = dmma8_operands(seed);
    operands = cuda::DeviceBuffer<double>(64, "DMMA operands");
    operands.upload(o.ab.data(), 64, s.stream());
    cuda::DeviceBuffer<double> out(static_cast<size_t>(kDmmaThreads) * kDmmaChains * 2, "DMMA check");
    CUDA_CHECK(cudaMemsetAsync(out.get(), 0xFF, out.bytes(), s.stream()));
    launch_dmma(1, passes, operands.get(), out.get(), true, nullptr, err.get(), s.stream());
    std::vector<double> h(out.size());
    out.download(h.data(), h.size(), s.stream());
    if (read_flag(err, s.stream()) != 0) throw_unsupported("the DMMA m8n8k4 kernel is not built for this GPU");
    for (int tid = 0; tid < kDmmaThreads; ++tid)
      for (int c = 0; c < kDmmaChains; ++c)
        for (int i = 0; i < 2; ++i) {
          const int lane = tid % 32;
          const double want = passes * o.d[lane / 4][2 * (lane % 4) + i];
          const double got = h[(static_cast<size_t>(tid) * kDmmaChains + c) * 2 + i];
          if (got != want) self_check_failed(sh.name(), tid, c, i, got, want);
        }
  } else {
    if (s.prop().major < 9)
      throw_unsupported(fmt::format("DMMA {} needs compute capability 9.0; this GPU is {}.{}", sh.name(),
                                    s.prop().major, s.prop().minor));
    const Dmma16Operands o = dmma16_operands(sh.k, seed);
    operands = cuda::DeviceBuffer<double>(o.frag.size(), "DMMA operands");
    operands.upload(o.frag.data(), o.frag.size(), s.stream());
    cuda::DeviceBuffer<double> out(static_cast<size_t>(kDmma16Threads) * kDmma16Chains * 4, "DMMA check");
    CUDA_CHECK(cudaMemsetAsync(out.get(), 0xFF, out.bytes(), s.stream()));
    launch_dmma16(sh.k, 1, passes, operands.get(), out.get(), true, nullptr, err.get(), s.stream());
    std::vector<double> h(out.size());
    out.download(h.data(), h.size(), s.stream());
    if (read_flag(err, s.stream()) != 0) throw_unsupported("the DMMA " + sh.name() + " kernel is not built for this GPU");
    for (int tid = 0; tid < kDmma16Threads; ++tid)
      for (int c = 0; c < kDmma16Chains; ++c)
        for (int i = 0; i < 4; ++i) {
          const double want = dmma16_expected(o, tid % 32, i, passes);
          const double got = h[(static_cast<size_t>(tid) * kDmma16Chains + c) * 4 + i];
          if (got != want) self_check_failed(sh.name(), tid, c, i, got, want);
        }
  }
  const int grid = sh.k == 0 ? dmma_grid(s.device()) : dmma16_grid(sh.k, s.device());
  cuda::DeviceBuffer<double> guard(static_cast<size_t>(grid) * sh.threads(), "DMMA guard output");
  auto run = [&](int iters, ClockProbe* probe) {
    return [&, iters, probe](cudaStream_t st) {
      if (sh.k == 0) launch_dmma(grid, iters, operands.get(), guard.get(), false, probe, err.get(), st);
      else launch_dmma16(sh.k, grid, iters, operands.get(), guard.get(), false, probe, err.get(), st);
    };
  };
  // Iterations in proportion to the work per instruction: the same run time.
  const int base = static_cast<int>(512 * 512.0 / sh.flops_per_mma());
  s.time_once(run(base / 8, nullptr));
  const double t0 = s.time_once(run(base, nullptr));
  const int iters = static_cast<int>(scaled_count(base, t0, s.quick() ? 5e-3 : 10e-3, 1 << 28));
  m = s.timer().measure(run(iters, s.probe()), s.measure_options(), 1, s.probe_clock());
  grid_out = grid;
  const double flops = static_cast<double>(grid) * (sh.threads() / 32) * iters * sh.chains() * sh.flops_per_mma();
  return flops / m.time.median;
}

void measure_fp64_tensor(Session& s) {
  if (s.prop().major < 8)
    throw_unsupported(fmt::format("FP64 tensor cores (DMMA) need compute capability 8.0 or newer; this GPU is {}.{}",
                                  s.prop().major, s.prop().minor));
  std::vector<Shape> shapes = {{0}};
  if (s.prop().major >= 9) shapes.insert(shapes.end(), {{4}, {8}, {16}});
  struct Result {
    Shape shape;
    double value = 0;
    measure::Measurement m;
    int grid = 0;
    std::string error;
  };
  std::vector<Result> results;
  for (const Shape& sh : shapes) {
    Result r;
    r.shape = sh;
    try {
      r.value = measure_shape(s, sh, r.m, r.grid);
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::Numeric) s.warn(e.what());  // a wrong kernel is news, not a detail
      r.error = e.what();
      cudaGetLastError();
    }
    results.push_back(std::move(r));
  }
  const Result* best = nullptr;
  nlohmann::json tried = nlohmann::json::array();
  std::vector<std::string> parts;
  for (const auto& r : results) {
    nlohmann::json j = {{"shape", r.shape.name()}};
    if (r.error.empty()) {
      j["value"] = r.value;
      j["grid"] = r.grid;
      parts.push_back(fmt::format("{} {}", r.shape.name(), format_si(r.value, "FLOP/s")));
      if (!best || r.value > best->value) best = &r;
    } else {
      j["error"] = r.error;
      parts.push_back(fmt::format("{} failed ({})", r.shape.name(), shorten(r.error, 80)));
    }
    tried.push_back(std::move(j));
  }
  if (!best)
    throw Error(ErrorKind::Device, "every DMMA shape failed: " + results.front().error,
                "see the warnings above; fp64.tensor is not measured");
  measure::Figure f;
  f.name = "fp64.tensor";
  f.label = "FP64 tensor core (DMMA, dense)";
  f.unit = "FLOP/s";
  f.precision = "fp64";
  f.level = "tensor";
  f.method = fmt::format("own kernel: mma.sync {} f64 (DMMA), {} independent accumulators per warp, {} blocks x {} "
                         "threads, registers only; self-check passed",
                         best->shape.name(), best->shape.chains(), best->grid, best->shape.threads());
  f.value = best->value;
  f.measurement = best->m;
  f.params["shape"] = best->shape.name();
  f.params["grid"] = best->grid;
  f.params["shapes"] = tried;
  s.note("fp64.tensor: " + join(parts, ", ") + fmt::format("; the figure is {}", best->shape.name()));
  s.add(std::move(f));
}

}  // namespace

void measure_dmma(Session& s) {
  if (s.wants("fp64.tensor")) s.attempt("fp64.tensor", "FP64 tensor core (DMMA)", [&] { measure_fp64_tensor(s); });
}

}  // namespace roofline::ceilings::gpu

// Dense tensor-core ceilings. The ceiling <type>.tensor is our own wgmma kernel
// (operands resident in shared memory: the unit's own rate, not a GEMM's), run
// only after it passed its self-check against a CPU product in this very run.
// cuBLASLt's best large GEMM is measured beside it (<type>.tensor.cublaslt) as
// the library reference. When the own kernel cannot run or fails its check, the
// ceiling is cuBLASLt's figure, and the report says so as a warning.
#include <fmt/format.h>

#include <optional>

#include "roofline/core/strings.hpp"
#include "roofline/cuda/check.hpp"
#include "src/ceilings/gpu/session.hpp"

namespace roofline::ceilings::gpu {

namespace {

const char* instruction(TensorType t) {
  switch (t) {
    case TensorType::TF32: return "wgmma.mma_async m64n256k8 TF32 -> FP32";
    case TensorType::FP16: return "wgmma.mma_async m64n256k16 FP16 -> FP32";
    case TensorType::BF16: return "wgmma.mma_async m64n256k16 BF16 -> FP32";
    case TensorType::FP8: return "wgmma.mma_async m64n256k32 FP8 E4M3 -> FP32";
    case TensorType::INT8: return "wgmma.mma_async m64n256k32 INT8 -> INT32";
  }
  return "";
}

const char* layout_name(bool swizzle) { return swizzle ? "128-byte swizzle" : "no swizzle"; }

struct Own {
  std::optional<measure::Figure> figure;
  std::string why_not;  // when there is no figure
};

// Runs the check mode (one block, 2 passes over K, D poisoned first) and
// compares every warpgroup's D with the CPU product.
TileCheck self_check(Session& s, TensorType t, bool swizzle, uint32_t seed) {
  const WgmmaInfo w = wgmma_info(t);
  const TensorTiles tiles = make_tiles(t, seed);
  const int passes = 2;
  const std::vector<double> ref = reference_product(tiles, passes);
  cuda::DeviceBuffer<uint8_t> a(tiles.a.size(), "wgmma check A"), b(tiles.b.size(), "wgmma check B");
  const size_t per_wg = static_cast<size_t>(w.m) * w.n;
  cuda::DeviceBuffer<uint32_t> d(per_wg * w.warpgroups, "wgmma check D");
  a.upload(tiles.a.data(), tiles.a.size(), s.stream());
  b.upload(tiles.b.data(), tiles.b.size(), s.stream());
  CUDA_CHECK(cudaMemsetAsync(d.get(), 0xFF, d.bytes(), s.stream()));  // poison: NaN / -1
  launch_wgmma(t, swizzle, 1, passes, a.get(), b.get(), d.get(), true, nullptr, s.stream());
  std::vector<uint32_t> host(d.size());
  d.download(host.data(), host.size(), s.stream());
  CUDA_CHECK(cudaStreamSynchronize(s.stream()));
  TileCheck total;
  for (int g = 0; g < w.warpgroups; ++g) {
    TileCheck c = compare_product(t, host.data() + g * per_wg, ref);
    total.checked += c.checked;
    total.mismatches += c.mismatches;
    total.max_abs_error = std::max(total.max_abs_error, c.max_abs_error);
    if (total.first.empty() && !c.first.empty()) total.first = fmt::format("warpgroup {}: {}", g, c.first);
  }
  return total;
}

measure::Figure throughput(Session& s, TensorType t, bool swizzle, const TileCheck& check) {
  const WgmmaInfo w = wgmma_info(t);
  const TensorTiles tiles = make_tiles(t, 0x5eed2000u + static_cast<uint32_t>(t));  // real values, never zeros
  cuda::DeviceBuffer<uint8_t> a(tiles.a.size(), "wgmma A"), b(tiles.b.size(), "wgmma B");
  a.upload(tiles.a.data(), tiles.a.size(), s.stream());
  b.upload(tiles.b.data(), tiles.b.size(), s.stream());
  const int grid = s.prop().multiProcessorCount;  // 2 warpgroups x ~244 registers: one block per SM
  cuda::DeviceBuffer<uint32_t> d(static_cast<size_t>(grid) * w.threads, "wgmma guard output");
  auto run = [&](int iters, ClockProbe* probe) {
    return [&, iters, probe](cudaStream_t st) {
      launch_wgmma(t, swizzle, grid, iters, a.get(), b.get(), d.get(), false, probe, st);
    };
  };
  s.time_once(run(64, nullptr));
  const double t0 = s.time_once(run(512, nullptr));
  const int iters = static_cast<int>(scaled_count(512, t0, s.quick() ? 5e-3 : 10e-3, 1 << 26));
  measure::Measurement m = s.timer().measure(run(iters, s.probe()), s.measure_options(), 1, s.probe_clock());
  const double flops = w.flops_per_iteration_per_block * grid * static_cast<double>(iters);
  measure::Figure f;
  f.name = std::string(to_string(t)) + ".tensor";
  f.label = fmt::format("{} tensor core (dense)", to_string(t));
  f.unit = t == TensorType::INT8 ? "OP/s" : "FLOP/s";
  f.precision = to_string(t);
  f.level = "tensor";
  f.method = fmt::format("own kernel: {}, A and B in shared memory ({}), {} warpgroups x {} SMs, no global traffic in "
                         "the loop; self-check passed ({} elements vs CPU)",
                         instruction(t), layout_name(swizzle), w.warpgroups, grid, check.checked);
  f.value = flops / m.time.median;
  f.measurement = std::move(m);
  f.params["layout"] = swizzle ? "swizzle128" : "interleave";
  f.params["iters"] = iters;
  f.params["grid"] = grid;
  f.params["warpgroups"] = w.warpgroups;
  f.params["flops_per_run"] = flops;
  f.params["check_elements"] = check.checked;
  f.params["check_max_abs_error"] = check.max_abs_error;
  return f;
}

Own measure_own(Session& s, TensorType t) {
  Own own;
  if (!s.hopper()) {
    own.why_not = fmt::format("the wgmma kernels need compute capability 9.0 (sm_90a); this GPU is {}.{}",
                              s.prop().major, s.prop().minor);
    return own;
  }
  std::vector<std::string> failed;
  for (bool swizzle : {true, false}) {
    const TileCheck c = self_check(s, t, swizzle, 0x5eed3000u + 16u * static_cast<uint32_t>(t) + swizzle);
    if (!c.ok()) {
      failed.push_back(fmt::format("{}: {} of {} elements wrong, first {}", layout_name(swizzle), c.mismatches,
                                   c.checked, c.first));
      continue;
    }
    measure::Figure f = throughput(s, t, swizzle, c);
    if (!own.figure || f.value > own.figure->value) own.figure = std::move(f);
  }
  if (!failed.empty() && own.figure) {
    s.warn(fmt::format("{}.tensor: the own wgmma kernel FAILED its self-check in one layout ({}); the ceiling uses the "
                       "{} layout, which passed",
                       to_string(t), join(failed, "; "), own.figure->params["layout"].get<std::string>()));
  } else if (!failed.empty()) {
    // Reported (loudly) by the caller, with the figure that replaces it.
    own.why_not = fmt::format("the own {} wgmma kernel FAILED its self-check ({})", to_string(t), join(failed, "; "));
  }
  return own;
}

constexpr TensorType kTypes[] = {TensorType::TF32, TensorType::FP16, TensorType::BF16, TensorType::FP8,
                                 TensorType::INT8};
constexpr int kLibraryN = 8192;

std::string own_name(TensorType t) { return std::string(to_string(t)) + ".tensor"; }
std::string own_label(TensorType t) { return fmt::format("{} tensor core (dense)", to_string(t)); }

}  // namespace

void measure_tensor_library(Session& s) {
  for (TensorType t : kTypes) {
    const std::string name = own_name(t) + ".cublaslt";
    if (s.wants(name)) s.attempt(name, own_label(t) + ", cuBLASLt", [&] { measure_cublaslt(s, t, kLibraryN); });
  }
}

void measure_tensor_own(Session& s) {
  for (TensorType t : kTypes) {
    const std::string name = own_name(t), label = own_label(t);
    if (!s.wants(name)) continue;
    Own own;
    try {
      own = measure_own(s, t);
    } catch (const std::exception& e) {
      // A fault here may have ended the CUDA context: what follows is host-side.
      cudaGetLastError();
      own.figure.reset();
      own.why_not = fmt::format("the own {} wgmma kernel failed to run: {}", to_string(t), e.what());
      s.warn(own.why_not);
    }
    if (own.figure) {
      const measure::Figure mine = *own.figure;
      s.add(std::move(*own.figure));
      if (const measure::Figure* lib = s.find(name + ".cublaslt")) {
        const double ratio = mine.value / lib->value;
        s.note(fmt::format("{}: own wgmma kernel {} ({}), cuBLASLt {}^3 {} (own / cuBLASLt = {:.2f})", name,
                           format_si(mine.value, mine.unit), mine.params["layout"].get<std::string>(), kLibraryN,
                           format_si(lib->value, lib->unit), ratio));
        if (ratio < 1.0)
          s.warn(fmt::format("{}: cuBLASLt ({}) beat the own kernel ({}): the own kernel does not saturate the tensor "
                             "cores here",
                             name, format_si(lib->value, lib->unit), format_si(mine.value, mine.unit)));
      }
      continue;
    }
    if (const measure::Figure* lib = s.find(name + ".cublaslt")) {
      measure::Figure f = *lib;
      f.name = name;
      f.label = label;
      f.method = "cuBLASLt, because " + own.why_not + " | " + lib->method;
      f.notes.push_back(own.why_not);
      s.add(std::move(f));
      s.warn(fmt::format("{}: the ceiling is cuBLASLt's GEMM, not the own kernel: {}", name, own.why_not));
    } else {
      s.fail(name, label, own.why_not + "; and no cuBLASLt figure to fall back on", "", ErrorKind::Device);
    }
  }
}

}  // namespace roofline::ceilings::gpu

// The sweep on the CPU: the same polynomial over n elements, every core
// through OpenMP, each core's range through the widest SIMD kernel present.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <cstring>
#include <memory>

#include <fmt/format.h>

#include "roofline/sweep/sweep.hpp"
#include "roofline/sweep/input.hpp"
#include "roofline/core/error.hpp"
#include "roofline/core/strings.hpp"
#include "roofline/hardware/cpu_info.hpp"
#include "src/ceilings/cpu/host.hpp"
#include "src/ceilings/cpu/simd.hpp"
#include "src/sweep/reference.hpp"

namespace roofline::sweep {

namespace {

// Elements per OpenMP work item: a multiple of every kernel's vector block.
constexpr std::int64_t kChunk = 1 << 14;

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};

template <class T>
std::unique_ptr<T[], FreeDeleter> alloc(std::int64_t n) {
  size_t bytes = ((static_cast<size_t>(n) * sizeof(T) + 63) / 64) * 64;
  void* p = std::aligned_alloc(64, bytes);
  if (!p)
    throw Error(ErrorKind::Input, fmt::format("could not allocate {} for the CPU sweep", format_bytes(double(bytes))),
                "use a smaller --n");
  return std::unique_ptr<T[], FreeDeleter>(static_cast<T*>(p));
}

template <class T>
std::vector<Point> run_typed(Variant v, const Options& o, const measure::Progress& progress) {
  const auto& kern = ceilings::cpu::simd_loops();
  const VariantInfo& vi = info(v);
  const std::int64_t n = o.n;
  auto a = alloc<T>(n);
  auto b = alloc<T>(n);
  // First touch by the thread that later works on the range (NUMA placement).
#pragma omp parallel for schedule(static)
  for (std::int64_t c = 0; c < (n + kChunk - 1) / kChunk; ++c)
    for (std::int64_t i = c * kChunk; i < std::min(n, (c + 1) * kChunk); ++i) {
      a[i] = static_cast<T>(input_value(static_cast<std::uint64_t>(i), o.seed));
      b[i] = std::numeric_limits<T>::quiet_NaN();  // poison: an unwritten output shows
    }
  ceilings::cpu::Frequency freq = ceilings::cpu::measure_frequency();
  hw::CpuInfo cpu_info = hw::query_cpu();

  std::vector<Point> out;
  for (std::int64_t k : o.k) {
    // Denormals flushed in every thread (see ceilings::cpu::FlushDenormals): the high
    // powers of a in [0.5, 1) underflow, and their assists would be timed.
    auto run_once = [&] {
#pragma omp parallel
      {
        ceilings::cpu::FlushDenormals ftz;
#pragma omp for schedule(static)
        for (std::int64_t c = 0; c < (n + kChunk - 1) / kChunk; ++c) {
          std::int64_t i0 = c * kChunk, len = std::min(kChunk, n - i0);
          if constexpr (std::is_same_v<T, double>) kern.poly_f64(a.get() + i0, b.get() + i0, len, k);
          else if (v == Variant::Fma) kern.horner_f32(a.get() + i0, b.get() + i0, len, k);
          else kern.poly_f32(a.get() + i0, b.get() + i0, len, k);
        }
      }
    };
    measure::MeasureOptions mo;
    mo.warmup = o.warmup;
    mo.min_samples = o.runs;
    mo.max_samples = o.runs;
    mo.max_seconds = 1e9;  // the seed's fixed count of runs
    measure::Measurement m = measure::measure_cpu(run_once, mo);

    Point p;
    p.device = "cpu";
    p.device_name = cpu_info.model_name;
    p.variant = v;
    p.kernel = Kernel::Cpu;
    p.k = k;
    p.n = n;
    p.timing = timing_of(m.samples);
    p.clock_mhz = m.clock_median_mhz > 0 ? m.clock_median_mhz : freq.mhz;

    auto idx = ref::sample_indices(n, o.check_samples, o.seed + static_cast<std::uint32_t>(k));
    std::vector<double> got;
    for (auto i : idx) got.push_back(static_cast<double>(b[i]));
    p.check = ref::compare(v, k, o.seed, idx, got);
    std::int64_t bad = 0;
#pragma omp parallel for reduction(+ : bad)
    for (std::int64_t i = 0; i < n; ++i) bad += !std::isfinite(b[i]);
    p.check.nonfinite = bad;
    if (progress)
      progress(fmt::format("cpu {} k={}: {:.3f} ms, {:.2f} GFLOP/s, {:.2f} GB/s ({} kernels, {} threads, denormals flushed)", vi.name,
                           k, p.timing.mean_s * 1e3, VariantInfo::flops_per_element(k) * double(n) / 1e9 / p.timing.mean_s,
                           vi.bytes_per_element() * double(n) / 1e9 / p.timing.mean_s, kern.isa, ceilings::cpu::threads()));
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace

void check_cpu_memory(Variant v, const Options& o) {
  const VariantInfo& vi = info(v);
  double need = static_cast<double>(o.n) * vi.bytes_per_element();
  double avail = static_cast<double>(ceilings::cpu::available_memory_bytes());
  // Leave a quarter of what is available to everything else.
  if (avail > 0 && need > 0.75 * avail)
    throw_usage(fmt::format("n = {} needs {} of host memory for the {} CPU sweep (input and output), but only {} "
                            "is available",
                            o.n, format_bytes(need), vi.name, format_bytes(avail)),
                fmt::format("use a smaller --n, at most about {}",
                            static_cast<std::int64_t>(0.75 * avail / vi.bytes_per_element())));
}

std::vector<Point> run_cpu(Variant v, const Options& o, const measure::Progress& progress) {
  validate(o);
  const VariantInfo& vi = info(v);
  if (v == Variant::Fp16 || v == Variant::Bf16)
    throw_unsupported(fmt::format("the CPU sweep has no {} variant: this build does no native half-precision "
                                  "arithmetic on the CPU",
                                  vi.name),
                      "use --variants fp32,fma,fp64 for the CPU (fp16 and bf16 run on the GPU)");
  check_cpu_memory(v, o);
  if (v == Variant::Fp64) return run_typed<double>(v, o, progress);
  return run_typed<float>(v, o, progress);
}

}  // namespace roofline::sweep

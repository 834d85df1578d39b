// CPU ceilings: DRAM bandwidth on all cores (read, copy, triad over arrays far
// larger than the last-level cache), the cache levels from a working-set sweep,
// and the FP32/FP64 rates with the widest SIMD present (FMA, and add+multiply,
// whose pipes differ between cores). Every figure goes through measure_cpu:
// warm-up, at least 10 samples, a stopping rule on the spread, median/IQR.
#include "roofline/ceilings/cpu_ceilings.hpp"

#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>

#include <fmt/format.h>

#include "roofline/core/error.hpp"
#include "roofline/core/strings.hpp"
#include "roofline/hardware/cpu_info.hpp"
#include "roofline/hardware/datasheet.hpp"
#include "src/ceilings/cpu/host.hpp"
#include "src/ceilings/cpu/plateaus.hpp"
#include "src/ceilings/cpu/simd.hpp"

namespace roofline::ceilings {

namespace {

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};
using FloatArray = std::unique_ptr<float[], FreeDeleter>;

FloatArray alloc_floats(std::int64_t n, const char* what) {
  size_t bytes = ((static_cast<size_t>(n) * sizeof(float) + 4095) / 4096) * 4096;
  void* p = std::aligned_alloc(4096, bytes);
  if (!p)
    throw Error(ErrorKind::Input, fmt::format("could not allocate {} for {}", format_bytes(double(bytes)), what),
                "free host memory, or run with --quick (smaller arrays)");
  return FloatArray(static_cast<float*>(p));
}

// Each thread touches its own static range first, so pages land near it.
void first_touch(float* p, std::int64_t n, float v) {
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < n; ++i) p[i] = v + static_cast<float>(i & 1023) * 1e-6f;
}

volatile double g_sink;  // keeps results of timed loops alive

struct Ctx {
  const CeilingOptions& opts;
  const measure::Progress& progress;
  const FigureSink& sink;
  const cpu::SimdLoops& kern;
  int threads;
  cpu::Frequency freq;
  model::Roofline reference;
  std::vector<measure::Figure> out;

  void say(const std::string& s) const {
    if (progress) progress(s);
  }
  void finish(measure::Figure f) {
    if (f.measurement.clock_median_mhz <= 0 && freq.mhz > 0) {
      f.measurement.clock_median_mhz = freq.mhz;
      f.measurement.clock_source = "add-chain";
    }
    if (freq.mhz > 0) f.params["cpu_mhz_measured"] = freq.mhz;
    f.params["threads"] = threads;
    f.params["isa"] = kern.isa;
    const model::Ceiling* ref = reference.find(f.name);
    if (!ref && f.unit == "FLOP/s") ref = reference.compute(f.precision, "simd");
    if (!ref && f.unit == "B/s") ref = reference.memory(f.level);
    if (ref) {
      f.reference = ref->value;
      f.reference_label = fmt::format("{} ({})", ref->label.empty() ? ref->id : ref->label, model::to_string(ref->source));
    }
    // Stored before it is printed: a run killed in between keeps every figure it showed.
    if (sink) sink(f);
    say(fmt::format("  {:<18} {}", f.name, format_si(f.value, f.unit)));
    out.push_back(std::move(f));
  }
};

measure::Figure memory_figure(const std::string& name, const std::string& label, const std::string& level, double bytes,
                     const measure::Measurement& m, const std::string& method) {
  measure::Figure f;
  f.name = name;
  f.label = label;
  f.unit = "B/s";
  f.level = level;
  f.method = method;
  f.measurement = m;
  f.value = m.time.median > 0 ? bytes / m.time.median : 0;
  f.params["bytes_per_sample"] = bytes;
  return f;
}

// DRAM: arrays of `n` floats each, far beyond the last-level cache.
void measure_dram(Ctx& c, std::int64_t n) {
  bool read = c.opts.wants("mem.read"), copy = c.opts.wants("mem.copy"), triad = c.opts.wants("mem.triad");
  if (!read && !copy && !triad) return;
  const double bytes = static_cast<double>(n) * sizeof(float);
  c.say(fmt::format("CPU memory: arrays of {} each, {} threads", format_bytes(bytes), c.threads));
  FloatArray a = alloc_floats(n, "the CPU memory benchmark");
  first_touch(a.get(), n, 1.0f);
  if (read) {
    measure::Measurement m = measure::measure_cpu(
        [&] {
          double total = 0;
#pragma omp parallel reduction(+ : total)
          {
            int t = omp_get_thread_num(), nt = omp_get_num_threads();
            std::int64_t per = (n / nt) / c.kern.read_block * c.kern.read_block;
            total += c.kern.read_f32(a.get() + t * per, per, 1);
          }
          g_sink = total;
        },
        c.opts.measure);
    c.finish(memory_figure("mem.read", "Memory read (all cores)", "dram", bytes, m,
                           fmt::format("sum of a {} array, {} loads, 8 accumulators per thread", format_bytes(bytes),
                                       c.kern.isa)));
  }
  if (!copy && !triad) return;
  FloatArray b = alloc_floats(n, "the CPU memory benchmark");
  first_touch(b.get(), n, 2.0f);
  if (copy) {
    measure::Measurement m = measure::measure_cpu(
        [&] {
#pragma omp parallel for schedule(static)
          for (std::int64_t i = 0; i < n; ++i) b[i] = a[i];
        },
        c.opts.measure);
    c.finish(memory_figure("mem.copy", "Memory copy (all cores)", "dram", 2 * bytes, m,
                           "b[i] = a[i] (STREAM copy; bytes = read + written, write-allocate traffic not counted)"));
  }
  if (triad) {
    FloatArray d = alloc_floats(n, "the CPU memory benchmark");
    first_touch(d.get(), n, 3.0f);
    const float s = 0.5f;
    measure::Measurement m = measure::measure_cpu(
        [&] {
#pragma omp parallel for schedule(static)
          for (std::int64_t i = 0; i < n; ++i) a[i] = b[i] + s * d[i];
        },
        c.opts.measure);
    c.finish(memory_figure("mem.triad", "Memory triad (all cores)", "dram", 3 * bytes, m,
                           "a[i] = b[i] + s * c[i] (STREAM triad; bytes = 2 read + 1 written)"));
  }
}

// Working-set sweep: every thread re-reads its own slice; the slice grows by
// `step` from 16 KiB until all threads together pass `max_total`.
void measure_caches(Ctx& c, double max_total, double step, const hw::CpuInfo& cpu) {
  if (!c.opts.wants("cache")) return;
  const double min_slice = 16 * 1024;
  std::vector<double> slices;
  for (double s = min_slice; s * c.threads <= max_total * 1.0001; s *= step) slices.push_back(s);
  const std::int64_t block = c.kern.read_block;
  auto largest = static_cast<std::int64_t>(slices.back() / sizeof(float)) / block * block;
  FloatArray buf = alloc_floats(largest * c.threads, "the cache sweep");
  first_touch(buf.get(), largest * c.threads, 1.0f);
  c.say(fmt::format("CPU caches: working-set sweep {} to {} per thread, {} threads", format_bytes(slices.front()),
                    format_bytes(slices.back()), c.threads));

  measure::MeasureOptions mo = c.opts.measure;
  mo.max_seconds = std::min(mo.max_seconds, c.opts.quick ? 0.25 : 1.0);
  const double bytes_per_sample_per_thread = c.opts.quick ? 16.0 * (1 << 20) : 64.0 * (1 << 20);
  std::vector<cpu::SweepSample> samples;
  std::vector<measure::Measurement> measurements;
  nlohmann::json curve = nlohmann::json::array();
  for (double slice : slices) {
    std::int64_t n = std::max<std::int64_t>(block, static_cast<std::int64_t>(slice / sizeof(float)) / block * block);
    std::int64_t reps = std::max<std::int64_t>(1, static_cast<std::int64_t>(bytes_per_sample_per_thread / (n * 4.0)));
    measure::Measurement m = measure::measure_cpu(
        [&] {
          double total = 0;
#pragma omp parallel reduction(+ : total)
          {
            int t = omp_get_thread_num();
            total += c.kern.read_f32(buf.get() + t * largest, n, reps);
          }
          g_sink = total;
        },
        mo);
    double bytes = static_cast<double>(n) * 4.0 * static_cast<double>(reps) * c.threads;
    double bw = m.time.median > 0 ? bytes / m.time.median : 0;
    samples.push_back({static_cast<double>(n) * 4.0, bw});
    measurements.push_back(m);
    curve.push_back({{"bytes_per_thread", n * 4}, {"bytes_total", n * 4 * c.threads}, {"bandwidth", bw},
                     {"rel_iqr", m.time.rel_iqr()}});
  }
  cpu::CacheSizes sizes;
  for (const auto& cl : cpu.caches) {
    if (cl.type == "instruction" || cl.bytes == 0) continue;
    double per_thread = static_cast<double>(cl.bytes) / std::max(1, cl.shared_by_threads);
    if (cl.level == 1) sizes.l1 = per_thread;
    if (cl.level == 2) sizes.l2 = per_thread;
    if (cl.level == 3) sizes.l3 = per_thread;
  }
  double mem_min_total = std::max(64.0 * (1 << 20), 2.0 * sizes.l3 * c.threads);
  cpu::PlateauResult pr = cpu::find_plateaus(samples, sizes, c.threads, mem_min_total);
  for (const auto& note : pr.notes) c.say("  " + note);
  static const char* labels[] = {"L1 data cache", "L2 cache", "L3 cache"};
  static const char* levels[] = {"l1", "l2", "l3"};
  const double level_bytes[] = {sizes.l1, sizes.l2, sizes.l3};
  for (int li = 0; li < 3; ++li) {
    // With the cache sizes known, a level's figure is the best bandwidth among
    // the working sets that fit in it with room to spare (at most half of it,
    // more than the level below): noise only ever lowers a bandwidth, so the
    // best of several sizes is steadier than a plateau found in noisy data.
    size_t first = 0, last = 0, best = samples.size();
    std::string how;
    if (sizes.known() && level_bytes[li] > 0) {
      double lo = li == 0 ? 0.0 : level_bytes[li - 1];
      for (size_t i = 0; i < samples.size(); ++i) {
        double b = samples[i].bytes_per_thread;
        if (b <= lo || b > 0.5 * level_bytes[li]) continue;
        if (best == samples.size()) first = i;
        last = i;
        if (best == samples.size() || samples[i].bandwidth > samples[best].bandwidth) best = i;
      }
      how = fmt::format("best of the sweep sizes between {} and half of the {} per thread this level holds",
                        format_bytes(lo), format_bytes(level_bytes[li]));
    }
    double value = 0;
    if (best < samples.size()) {
      value = samples[best].bandwidth;
    } else if (const cpu::Plateau* p = pr.find(levels[li])) {
      first = p->first;
      last = p->last;
      best = (p->first + p->last) / 2;
      value = p->bandwidth;
      how = pr.method;
    } else {
      continue;
    }
    measure::Figure f;
    f.name = std::string("cache.") + levels[li];
    f.label = std::string(labels[li]) + " read (all cores)";
    f.unit = "B/s";
    f.level = levels[li];
    f.value = value;
    f.measurement = measurements[best];
    f.params["representative_bytes_per_thread"] = samples[best].bytes_per_thread;
    f.method = fmt::format("working-set sweep: each thread re-reads its own slice ({} loads, 8 accumulators); {}",
                           c.kern.isa, how);
    f.params["range_bytes_per_thread"] = {samples[first].bytes_per_thread, samples[last].bytes_per_thread};
    f.params["sweep"] = curve;
    f.notes = pr.notes;
    c.finish(std::move(f));
  }
  if (const cpu::Plateau* p = pr.find("mem"))
    c.say(fmt::format("  memory plateau of the sweep: {} (from {} per thread)", format_si(p->bandwidth, "B/s"),
                      format_bytes(samples[p->first].bytes_per_thread)));
}

void measure_compute(Ctx& c) {
  struct Kind {
    const char* name;
    const char* label;
    const char* precision;
    bool f64, fma;
  };
  static const Kind kinds[] = {
      {"fp32.simd", "FP32 SIMD FMA (all cores)", "fp32", false, true},
      {"fp64.simd", "FP64 SIMD FMA (all cores)", "fp64", true, true},
      {"fp32.simd.addmul", "FP32 SIMD add + multiply (all cores)", "fp32", false, false},
      {"fp64.simd.addmul", "FP64 SIMD add + multiply (all cores)", "fp64", true, false},
  };
  // About 20 ms per sample at a few GHz (fewer in quick mode).
  const std::int64_t iters = c.opts.quick ? (1 << 19) : (1 << 21);
  for (const auto& k : kinds) {
    if (!c.opts.wants(k.name)) continue;
    auto fn = k.fma ? (k.f64 ? c.kern.fma_f64 : c.kern.fma_f32) : (k.f64 ? c.kern.addmul_f64 : c.kern.addmul_f32);
    measure::Measurement m = measure::measure_cpu(
        [&] {
          double total = 0;
#pragma omp parallel reduction(+ : total)
          total += fn(iters);
          g_sink = total;
        },
        c.opts.measure);
    double flops = (k.fma ? c.kern.fma_flops(iters, k.f64) : c.kern.addmul_flops(iters, k.f64)) * c.threads;
    measure::Figure f;
    f.name = k.name;
    f.label = k.label;
    f.unit = "FLOP/s";
    f.precision = k.precision;
    f.level = "simd";
    f.value = m.time.median > 0 ? flops / m.time.median : 0;
    f.measurement = m;
    int lanes = k.f64 ? c.kern.f64_lanes : c.kern.f32_lanes;
    f.method = k.fma ? fmt::format("{} FMA, {} independent accumulators of {} lanes per thread", c.kern.isa,
                                   c.kern.fma_chains, lanes)
                     : fmt::format("{} add and multiply, {} independent chains of each, {} lanes, per thread",
                                   c.kern.isa, c.kern.addmul_chains, lanes);
    f.params["flops_per_sample"] = flops;
    f.params["lanes"] = lanes;
    if (c.freq.mhz > 0)
      f.params["flops_per_cycle_per_core"] = f.value / (c.freq.mhz * 1e6) / c.threads;
    c.finish(std::move(f));
  }
}

}  // namespace

std::vector<measure::Figure> measure_cpu_ceilings(const CeilingOptions& opts, const measure::Progress& progress,
                                                  const FigureSink& sink) {
  hw::CpuInfo cpu = hw::query_cpu();
  Ctx c{opts, progress, sink, cpu::simd_loops(), cpu::threads(), cpu::measure_frequency(), hw::reference_roofline(cpu), {}};
  c.say(fmt::format("CPU: {} ({} threads, {} kernels, clock under load {})", cpu.model_name, c.threads, c.kern.isa,
                    c.freq.mhz > 0 ? fmt::format("{:.0f} MHz", c.freq.mhz) : std::string("not measured")));

  double llc_total = 0;
  for (const auto& cl : cpu.caches)
    if (cl.level == 3 && cl.bytes > 0)
      llc_total = std::max(llc_total, static_cast<double>(cl.bytes) * std::max(1, c.threads / std::max(1, cl.shared_by_threads)));
  // Far beyond any last-level cache: 4x the known L3 and at least 1 GiB
  // (256 MiB in quick mode), but never more than 4 GiB (512 MiB quick) per
  // array: virtual machines report implausible L3 sizes, and three arrays of
  // that size would exhaust memory and time.
  constexpr double MiB = 1 << 20;
  double dram_bytes = std::max(opts.quick ? 256 * MiB : 1024 * MiB, 4 * llc_total);
  dram_bytes = std::min(dram_bytes, opts.quick ? 512 * MiB : 4096 * MiB);
  double avail = static_cast<double>(cpu::available_memory_bytes());
  if (avail > 0 && 3 * dram_bytes > 0.5 * avail) dram_bytes = std::max(64 * MiB, 0.5 * avail / 3);
  double sweep_total = opts.quick ? std::min(dram_bytes, 256 * MiB) : dram_bytes;

  measure_compute(c);
  measure_dram(c, static_cast<std::int64_t>(dram_bytes / sizeof(float)));
  measure_caches(c, sweep_total, 2.0, cpu);
  return std::move(c.out);
}

}  // namespace roofline::ceilings

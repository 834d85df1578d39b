// The sweep's definitions, checks and arithmetic (shared by the CPU and GPU runners).
#include "roofline/sweep/sweep.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "roofline/core/error.hpp"
#include "roofline/core/strings.hpp"

namespace roofline::sweep {

const std::vector<VariantInfo>& variants() {
  static const std::vector<VariantInfo> v = {
      {Variant::Fp32, "fp32", "fp32", "compute_k_terms", "overlap_k_terms", "ws_k_terms",
       "fp32.cuda.addmul", 4, false, 1,
       "b[i] = a[i] + a[i]^2 + ... + a[i]^k (the lecture's loop: result += power; power *= x)", "FADD + FMUL"},
      {Variant::Fma, "fma", "fp32", "compute_k_terms_fma", "overlap_k_terms_fma", "ws_k_terms_fma",
       "fp32.cuda", 4, true, 1,
       "b[i] = 1 + a[i] + ... + a[i]^k by Horner's rule (r = fmaf(r, x, 1) k times)", "FFMA"},
      {Variant::Fp64, "fp64", "fp64", "compute_k_terms_fp64", "overlap_k_terms_fp64", "ws_k_terms_fp64",
       "fp64.cuda.addmul", 8, false, 1,
       "the lecture's loop in double", "DADD + DMUL"},
      {Variant::Fp16, "fp16", "fp16", "compute_k_terms_fp16", "overlap_k_terms_fp16", "ws_k_terms_fp16",
       "fp16.cuda.addmul", 2, false, 2,
       "the lecture's loop in half, two elements per thread (__hadd2_rn, __hmul2_rn)", "HADD2 + HMUL2"},
      {Variant::Bf16, "bf16", "bf16", "compute_k_terms_bf16", "overlap_k_terms_bf16", "ws_k_terms_bf16",
       "bf16.cuda.addmul", 2, false, 2,
       "the lecture's loop in bfloat16, two elements per thread (__hadd2_rn, __hmul2_rn)", "HADD2.BF16 + HMUL2.BF16"},
  };
  return v;
}

const std::vector<KernelInfo>& kernel_infos() {
  static const std::vector<KernelInfo> k = {
      {Kernel::Seed, "seed",
       "the lecture's kernel: one element per thread, one load, k terms, one store; blocks of --block threads"},
      {Kernel::Overlap, "overlap",
       "persistent grid, each thread 48 bytes (three 16-byte vectors) per chunk, cp.async copies 4 chunks ahead of "
       "the arithmetic, unrolled k loop"},
      {Kernel::Cpu, "cpu", "OpenMP over all cores, each core's range through the widest SIMD kernel present"},
      {Kernel::Ws, "ws",
       "warp-specialized persistent grid: per block one producer warp bulk-copies (TMA) 12 KiB chunks into a 6-stage "
       "shared-memory ring (mbarriers), 8 consumer warps compute 48 bytes per thread per chunk and store"},
  };
  return k;
}

const KernelInfo& info(Kernel k) {
  for (const auto& i : kernel_infos())
    if (i.kernel == k) return i;
  ROOFLINE_ASSERT(false, "unknown sweep kernel");
}

std::vector<Kernel> parse_kernels(const std::string& list) {
  std::vector<Kernel> out;
  const char* hint = "use --kernel with any of seed, overlap, ws (e.g. seed,overlap,ws)";
  for (const auto& raw : split(list, ',')) {
    std::string p = to_lower(trim(raw));
    Kernel k;
    if (p == "seed") k = Kernel::Seed;
    else if (p == "overlap") k = Kernel::Overlap;
    else if (p == "ws") k = Kernel::Ws;
    else throw_usage(fmt::format("unknown sweep kernel '{}'", trim(raw)), hint);
    if (std::find(out.begin(), out.end(), k) == out.end()) out.push_back(k);
  }
  if (out.empty()) throw_usage("--kernel is empty", hint);
  return out;
}

const VariantInfo& info(Variant v) {
  for (const auto& i : variants())
    if (i.variant == v) return i;
  ROOFLINE_ASSERT(false, "unknown sweep variant");
}

std::vector<Variant> parse_variants(const std::string& list) {
  std::vector<Variant> out;
  std::vector<std::string> names;
  for (const auto& i : variants()) names.push_back(i.name);
  for (const auto& raw : split(list, ',')) {
    std::string p = to_lower(trim(raw));
    bool found = false;
    for (const auto& i : variants())
      if (p == i.name) {
        if (std::find(out.begin(), out.end(), i.variant) == out.end()) out.push_back(i.variant);
        found = true;
      }
    if (!found)
      throw_usage(fmt::format("unknown sweep variant '{}'", trim(raw)),
                  fmt::format("use --variants with any of {}", join(names, ",")));
  }
  if (out.empty()) throw_usage("--variants is empty", fmt::format("use --variants with any of {}", join(names, ",")));
  return out;
}

const std::vector<std::int64_t>& seed_k_values() {
  static const std::vector<std::int64_t> k = {1, 2, 5, 10, 20, 50, 100, 200, 500, 1000};
  return k;
}

void validate(const Options& o) {
  if (o.k.empty()) throw_usage("--k is empty", "give one or more positive integers, e.g. --k 1,10,100");
  for (auto k : o.k) {
    if (k <= 0)
      throw_usage(fmt::format("k must be a positive integer (the number of polynomial terms), got {}", k),
                  "use --k with values of 1 or more, e.g. --k 1,2,5,10");
    if (k > std::numeric_limits<int>::max())
      throw_usage(fmt::format("k = {} is too large: the kernels count terms with int", k),
                  fmt::format("use k up to {}", std::numeric_limits<int>::max()));
  }
  if (o.n <= 0)
    throw_usage(fmt::format("n must be a positive number of elements, got {}", o.n),
                "use --n with a positive count, e.g. --n 67108864 (2^26, the lecture's size) or --n 64M");
  if (o.block <= 0 || o.block % 32 != 0 || o.block > 1024)
    throw_usage(fmt::format("--block must be a multiple of 32 (a warp) between 32 and 1024, got {}", o.block),
                "use --block 256 (the lecture's block) or another multiple of 32 up to 1024");
  if (o.runs < 2) throw_usage(fmt::format("--runs must be at least 2 to give a spread, got {}", o.runs), "use --runs 10");
  if (o.warmup < 0) throw_usage(fmt::format("--warmup must not be negative, got {}", o.warmup), "use --warmup 3");
}

Timing timing_of(const std::vector<double>& s) {
  Timing t;
  t.samples_s = s;
  if (s.empty()) return t;
  double sum = 0;
  for (double v : s) sum += v;
  t.mean_s = sum / static_cast<double>(s.size());
  double sq = 0;
  for (double v : s) sq += (v - t.mean_s) * (v - t.mean_s);
  double rms = std::sqrt(sq / static_cast<double>(s.size()));  // the seed divides by nruns
  t.rms_pct = t.mean_s > 0 ? 100.0 * rms / t.mean_s : 0;
  std::vector<double> sorted = s;
  std::sort(sorted.begin(), sorted.end());
  t.min_s = sorted.front();
  t.max_s = sorted.back();
  size_t m = sorted.size() / 2;
  t.median_s = sorted.size() % 2 ? sorted[m] : 0.5 * (sorted[m - 1] + sorted[m]);
  return t;
}

double predicted_flops(double ai, const Roof& roof) {
  if (roof.peak <= 0 && roof.bandwidth <= 0) return 0;
  if (roof.bandwidth <= 0) return roof.peak;
  if (roof.peak <= 0) return ai * roof.bandwidth;
  return std::min(roof.peak, ai * roof.bandwidth);
}

void finish_point(Point& p, const Roof& roof) {
  const VariantInfo& vi = info(p.variant);
  double n = static_cast<double>(p.n);
  p.flops = n * VariantInfo::flops_per_element(p.k);
  p.bytes = n * vi.bytes_per_element();
  p.ai = vi.ai(p.k);
  double t = p.timing.mean_s;
  p.gflops = t > 0 ? p.flops / 1e9 / t : 0;
  p.bandwidth = t > 0 ? p.bytes / 1e9 / t : 0;
  p.percent_peak = roof.peak > 0 ? 100.0 * p.gflops * 1e9 / roof.peak : 0;
  double pred = predicted_flops(p.ai, roof);
  p.predicted_gflops = pred / 1e9;
  p.ratio = pred > 0 ? p.gflops * 1e9 / pred : 0;
  p.t_mem_s = roof.bandwidth > 0 ? p.bytes / roof.bandwidth : 0;
  p.t_comp_s = roof.peak > 0 ? p.flops / roof.peak : 0;
  const double serial = p.t_mem_s + p.t_comp_s;
  p.no_overlap_gflops = roof.bandwidth > 0 && roof.peak > 0 && serial > 0 ? p.flops / serial / 1e9 : 0;
}

std::string csv_header() { return "k,ai,gflops,bandwidth,percent_peak"; }

std::string to_csv(const std::vector<Point>& points) {
  std::string out = csv_header() + "\n";
  for (const auto& p : points)
    out += fmt::format("{},{:.6f},{:.2f},{:.2f},{:.2f}\n", p.k, p.ai, p.gflops, p.bandwidth, p.percent_peak);
  return out;
}

measure::Figure to_figure(const Point& p, const Roof& roof) {
  const VariantInfo& vi = info(p.variant);
  measure::Figure f;
  const KernelInfo& ki = info(p.kernel);
  f.name = fmt::format("sweep.{}.{}.k={}", vi.name, ki.name, p.k);
  f.label = fmt::format("{} sweep ({} kernel), k = {}", vi.name, ki.name, p.k);
  f.unit = "FLOP/s";
  f.value = p.gflops * 1e9;
  f.precision = vi.precision;
  f.level = p.device == "cpu" ? "simd" : "cuda";
  f.method = vi.formula;
  f.measurement = measure::summarise_samples(p.timing.samples_s, {}, 0, 0);
  if (p.clock_mhz > 0) f.measurement.clock_median_mhz = p.clock_mhz;
  f.params = {{"variant", vi.name},
              {"kernel", ki.name},
              {"device", p.device},
              {"k", p.k},
              {"n", p.n},
              {"ai", p.ai},
              {"flops", p.flops},
              {"bytes", p.bytes},
              {"gflops", p.gflops},
              {"bandwidth_gbs", p.bandwidth},
              {"percent_peak", p.percent_peak},
              {"predicted_gflops", p.predicted_gflops},
              {"ratio_to_predicted", p.ratio},
              {"mean_s", p.timing.mean_s},
              {"clock_mhz", p.clock_mhz},
              {"median_s", p.timing.median_s},
              {"rms_pct", p.timing.rms_pct},
              {"runs", p.timing.samples_s.size()},
              {"peak_flops", roof.peak},
              {"peak_source", roof.peak_source},
              {"peak_measured", roof.peak_measured},
              {"bandwidth", roof.bandwidth},
              {"bandwidth_source", roof.bandwidth_source},
              {"mix", vi.mix},
              {"peak_id", roof.peak_id},
              {"t_mem_s", p.t_mem_s},
              {"t_comp_s", p.t_comp_s},
              {"no_overlap_gflops", p.no_overlap_gflops},
              {"bytes_in_flight_per_sm", p.bytes_in_flight_per_sm},
              {"resident_threads_per_sm", p.resident_threads_per_sm},
              {"check", {{"checked", p.check.checked}, {"mismatches", p.check.mismatches},
                         {"nonfinite", p.check.nonfinite}, {"max_rel_err", p.check.max_rel_err},
                         {"tolerance", p.check.tolerance}}}};
  return f;
}

}  // namespace roofline::sweep

// The arithmetic-intensity sweep of seed 004: b[i] = a[i] + a[i]^2 + ... +
// a[i]^k over n elements, k stepping the kernel from memory-bound to
// compute-bound. Variants change the instruction mix and the precision;
// kernels change how the GPU runs it (the seed's own kernel, and an "overlap"
// kernel that keeps memory and arithmetic busy at once); the CPU runs the same
// polynomial. Each point is compared with what this device allows for that
// mix: min(peak for the mix, AI x measured DRAM bandwidth).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "roofline/measure/figure.hpp"
#include "roofline/model/roofline.hpp"

namespace roofline::sweep {

enum class Variant { Fp32, Fma, Fp64, Fp16, Bf16 };

// How the polynomial is run. Seed: seed 004's kernel as the course wrote it
// (one element per thread). Overlap: the same function, FLOPs and bytes per
// element, in a persistent kernel that keeps copies in flight while it
// computes (cp.async pipeline, 16-byte accesses, several elements per
// thread). Cpu: the CPU's OpenMP + SIMD loop. Ws: warp-specialized, the same
// function again, with one producer warp per block streaming the input into a
// shared-memory ring by bulk copies (TMA, mbarriers) while the other warps
// compute and store (sm_90 and newer).
enum class Kernel { Seed, Overlap, Cpu, Ws };

struct KernelInfo {
  Kernel kernel;
  const char* name;  // "seed", "overlap", "cpu"
  const char* description;
};
const std::vector<KernelInfo>& kernel_infos();
const KernelInfo& info(Kernel k);
// "seed,overlap" -> GPU kernels; throws a usage Error naming an unknown one.
std::vector<Kernel> parse_kernels(const std::string& list);

struct VariantInfo {
  Variant variant;
  const char* name;       // "fp32", "fma", "fp64", "fp16", "bf16"
  const char* precision;  // precision of the compute ceiling it is held against
  const char* kernel;     // the seed GPU kernel's (extern "C") name, as SASS shows it
  const char* overlap_kernel;  // the overlap GPU kernel's name
  const char* ws_kernel;       // the warp-specialized GPU kernel's name
  const char* mix_ceiling;     // the measured ceiling of its instruction mix: "fp32.cuda.addmul", "fp32.cuda" (FMA)
  int element_bytes;      // one element; each element is read once and written once
  bool fused;             // true: one FMA per term (Horner); false: an add and a multiply per term
  int elements_per_thread;  // GPU: fp16/bf16 work on pairs (half2/bfloat162)
  const char* formula;    // what the kernel computes, for people
  const char* mix;        // the instruction mix the source asks for, e.g. "FADD + FMUL"

  double bytes_per_element() const { return 2.0 * element_bytes; }
  // The GPU kernel's name for `k` (seed, overlap or ws).
  const char* gpu_kernel(Kernel k) const {
    return k == Kernel::Overlap ? overlap_kernel : k == Kernel::Ws ? ws_kernel : kernel;
  }
  // Every variant does 2 FLOPs per term: an add and a multiply, or one FMA.
  static double flops_per_element(std::int64_t k) { return 2.0 * static_cast<double>(k); }
  double ai(std::int64_t k) const { return flops_per_element(k) / bytes_per_element(); }
};

const std::vector<VariantInfo>& variants();
const VariantInfo& info(Variant v);
// "fp32,fma" -> variants; throws a usage Error naming an unknown one.
std::vector<Variant> parse_variants(const std::string& list);
// The seed's k values: 1 2 5 10 20 50 100 200 500 1000.
const std::vector<std::int64_t>& seed_k_values();

struct Options {
  std::vector<std::int64_t> k = seed_k_values();
  std::int64_t n = std::int64_t{1} << 26;  // elements (the seed's 2^26: 256 MiB per fp32 array)
  int block = 256;                          // GPU threads per block
  int warmup = 3;                           // untimed runs per k
  int runs = 10;                            // timed runs per k
  double rms_warn_pct = 5.0;                // the seed's tolerance on run-to-run spread
  std::uint32_t seed = 4;                   // input hash seed
  int check_samples = 4096;                 // outputs compared with the host per k
};

// Checks k, n, block, warm-up and run counts (usage errors naming the option
// and the fix). Memory limits are checked by the runners, which know the device.
void validate(const Options& o);
// Largest n the GPU kernels accept: the seed's kernel indexes with int.
constexpr std::int64_t kMaxGpuElements = 2147483647LL - 1024;

// The seed's statistics of the timed runs: mean and RMS deviation (population).
struct Timing {
  double mean_s = 0, rms_pct = 0, median_s = 0, min_s = 0, max_s = 0;
  std::vector<double> samples_s;
};
Timing timing_of(const std::vector<double>& samples_s);

// Outputs compared with the host's emulation of the same arithmetic.
struct Check {
  std::int64_t checked = 0;
  std::int64_t mismatches = 0;
  std::int64_t nonfinite = 0;  // over every output, not just the sample
  double max_rel_err = 0;
  double tolerance = 0;
  std::string first_mismatch;  // "b[123] = 1.5, host 1.25"
  bool ok() const { return mismatches == 0 && nonfinite == 0; }
};

// What a point is held against.
struct Roof {
  double peak = 0;             // FLOP/s this instruction mix can reach on this device
  std::string peak_id;         // the ceiling it is (or derives from): "fp32.cuda.addmul", "fp32.simd"
  std::string peak_source;     // how it was obtained, for people
  bool peak_measured = false;  // the mix's own ceiling, measured on this device
  double bandwidth = 0;        // bytes/s of DRAM for a read+write stream
  std::string bandwidth_source;
  bool bandwidth_measured = false;
};

struct Point {
  std::string device;       // "cpu", "gpu:0"
  std::string device_name;  // "NVIDIA H100 80GB HBM3"
  Variant variant = Variant::Fp32;
  Kernel kernel = Kernel::Seed;
  std::int64_t k = 0, n = 0;
  double flops = 0, bytes = 0;  // per run
  double ai = 0;                // FLOPs per byte
  double gflops = 0;            // from the mean time, as the seed
  double bandwidth = 0;         // GB/s (10^9), from the mean time
  double percent_peak = 0;      // of Roof::peak
  double predicted_gflops = 0;  // min(peak, AI x bandwidth)
  double ratio = 0;             // gflops / predicted
  // The two times of the roofline and a model with no overlap at all:
  double t_mem_s = 0;               // bytes / bandwidth (0: bandwidth unknown)
  double t_comp_s = 0;              // flops / peak for the mix (0: peak unknown)
  double no_overlap_gflops = 0;     // flops / (t_mem + t_comp): a kernel whose memory and arithmetic never overlap
  Timing timing;
  double clock_mhz = 0;         // median clock during the runs (0: unknown)
  Check check;
  // GPU: loads in flight per SM at most (resident threads x bytes each keeps
  // in flight), for Little's law; 0 when not known (CPU).
  double bytes_in_flight_per_sm = 0;
  int resident_threads_per_sm = 0;

  bool rms_warning(double limit_pct) const { return timing.rms_pct > limit_pct; }
  bool low(double min_ratio = 0.9) const { return ratio < min_ratio; }
  // The sweep's target for a kernel built to reach the roofline: within 10%.
  bool on_target() const { return ratio >= 0.9 && ratio <= 1.1; }
};

// Fills a point's AI, rates and its comparison with the roof.
void finish_point(Point& p, const Roof& roof);
// The predicted rate: min(peak, AI x bandwidth), FLOP/s.
double predicted_flops(double ai, const Roof& roof);

// The seed's CSV: header "k,ai,gflops,bandwidth,percent_peak", rows formatted
// as the seed's f-string ({k},{ai:.6f},{gflops:.2f},{bw:.2f},{pct:.2f}).
std::string csv_header();
std::string to_csv(const std::vector<Point>& points);

// The point as a stored figure (category "sweep", name "sweep.<variant>.<kernel>.k=<k>").
measure::Figure to_figure(const Point& p, const Roof& roof);

// Throws a usage error when n elements of this variant (input and output) do
// not fit in the host memory available now.
void check_cpu_memory(Variant v, const Options& o);
// Runs one variant on the CPU (all cores, OpenMP + SIMD). fp16/bf16 throw
// Unsupported (no native half arithmetic on the CPU path).
std::vector<Point> run_cpu(Variant v, const Options& o, const measure::Progress& progress);
// Throws a usage error when the GPU run cannot be done as asked (odd n for
// the packed types, n beyond the GPU's free memory or the seed's int index),
// before anything is measured. Unsupported in a CPU-only build.
void check_gpu_fit(int device, Variant v, Kernel kernel, const Options& o);
// Runs one variant with one kernel (Seed, Overlap or Ws) on a GPU. Throws
// Unsupported in a CPU-only build.
std::vector<Point> run_gpu(int device, Variant v, Kernel kernel, const Options& o, const measure::Progress& progress);
// The seed's kernel.
std::vector<Point> run_gpu(int device, Variant v, const Options& o, const measure::Progress& progress);

}  // namespace roofline::sweep

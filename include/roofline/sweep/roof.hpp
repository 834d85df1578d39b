// What each sweep point is held against: the peak for its instruction mix
// and the DRAM bandwidth of a read+write stream, preferring figures measured
// on this device (from the store) over datasheet or derived ones, and saying
// which it used.
#pragma once
#include <string>
#include <vector>

#include "roofline/sweep/sweep.hpp"
#include "roofline/sweep/sass.hpp"
#include "roofline/hardware/gpu_info.hpp"
#include "roofline/model/roofline.hpp"

namespace roofline::sweep {

// GPU: the measured ceiling of the variant's own mix (VariantInfo::mix_ceiling:
// fp32.cuda.addmul for the seed's FADD + FMUL, fp32.cuda for Horner's FFMA,
// fp64/fp16/bf16 .cuda.addmul), which the caller measures first when the store
// lacks it. Without it (the measurement failed), loudly labelled and not
// counted as measured: the <precision>.cuda FMA ceiling x the mix's fraction;
// else the reference (datasheet/derived) figure; else lanes x 2 x SMs x the
// clock measured during the sweep. Bandwidth: measured dram.copy (a read and a
// write stream, like the kernel), else the best measured DRAM figure, else the
// reference, else the theoretical one.
Roof gpu_roof(Variant v, const model::Roofline& measured, const model::Roofline& reference, const MixVerdict& mix,
              const hw::GpuInfo& gpu, double clock_mhz);
// The measured GPU ceilings gpu_roof wants for these variants: dram.copy and
// each variant's mix_ceiling.
std::vector<std::string> gpu_ceilings_needed(const std::vector<Variant>& vs);

// Little's law for a GPU sweep kernel: the loads it can keep in flight per SM
// against what DRAM needs (the dram.bytes_in_flight ceiling: bandwidth x the
// unloaded latency), and the latency its reads imply.
struct InFlight {
  double per_sm = 0;             // bytes of loads in flight per SM, at most
  double needed_per_sm = 0;      // dram.bytes_in_flight / SMs (0: not measured)
  double fraction = 0;           // per_sm / needed_per_sm (0: unknown)
  double implied_latency_s = 0;  // per_sm x SMs / the reads per second achieved: the average time a load took
  std::string text;              // for people
};
// per_sm: bytes in flight per SM; threads_per_sm: resident threads; sms; the
// dram.bytes_in_flight and dram.latency ceilings (0: not measured); the read
// rate achieved (B/s: bytes read, not read + written) at k = at_k.
InFlight in_flight(const std::string& kernel, double per_sm, int threads_per_sm, int sms, double bytes_in_flight,
                   double latency_s, double read_rate, std::int64_t at_k);

// The no-overlap model at the point nearest the ridge (where t_mem and t_comp
// are closest): "k=50: t_mem 186 µs + t_comp 203 µs -> 17.2 TFLOP/s with no
// overlap, measured 16.7; the roofline's max(t_mem, t_comp) allows 33.1".
// Empty when the points lack the two times.
std::string no_overlap_note(const std::vector<Point>& points);

// CPU: fp32.simd.addmul / fp64.simd.addmul for the seed's loop (add and
// multiply pipes differ between cores, so that rate is measured, not halved),
// fp32.simd for Horner's FMA; bandwidth mem.copy. Peak 0 when not measured.
Roof cpu_roof(Variant v, const model::Roofline& measured);
// The ceilings cpu_roof needs for these variants (to measure when missing).
std::vector<std::string> cpu_ceilings_needed(const std::vector<Variant>& vs);

}  // namespace roofline::sweep

// What each sweep point is held against: the peak for its instruction mix
// and the DRAM bandwidth of a read+write stream, preferring figures measured
// on this device (from the store) over datasheet or derived ones, and saying
// which it used.
#pragma once
#include "roofline/bench/sweep.hpp"
#include "roofline/bench/sweep_sass.hpp"
#include "roofline/hardware/gpu_info.hpp"
#include "roofline/model/roofline.hpp"

namespace roofline::bench::sweep {

// GPU: the measured <precision>.cuda ceiling (an FMA rate) x the mix's
// fraction; else the reference (datasheet/derived) figure; else lanes x 2 x SMs
// x the clock measured during the sweep. Bandwidth: measured dram.copy, else
// the best measured DRAM figure, else the reference, else the theoretical one.
Roof gpu_roof(Variant v, const model::Roofline& measured, const model::Roofline& reference, const MixVerdict& mix,
              const hw::GpuInfo& gpu, double clock_mhz);

// CPU: fp32.simd.addmul / fp64.simd.addmul for the seed's loop (add and
// multiply pipes differ between cores, so that rate is measured, not halved),
// fp32.simd for Horner's FMA; bandwidth mem.copy. Peak 0 when not measured.
Roof cpu_roof(Variant v, const model::Roofline& measured);
// The ceilings cpu_roof needs for these variants (to measure when missing).
std::vector<std::string> cpu_ceilings_needed(const std::vector<Variant>& vs);

}  // namespace roofline::bench::sweep

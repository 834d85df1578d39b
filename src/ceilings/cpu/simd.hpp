// The CPU ceilings' and sweep's loops, written once (simd_body.inc) and
// compiled for each x86 vector ISA (simd_avx512.cpp, simd_avx2.cpp and
// simd_sse2.cpp, after the pattern of src/hardware/isa_target.hpp), chosen at
// run time by the shared hw::Isa, so one binary uses the widest SIMD present
// (or the one ROOFLINE_CPU_ISA names) and still runs on a CPU without AVX-512.
// Each loop is single-threaded over a range; callers spread the ranges over
// cores with OpenMP.
#pragma once
#include <cstdint>
#include <vector>

#include "roofline/hardware/cpu_isa.hpp"

namespace roofline::ceilings::cpu {

struct SimdLoops {
  const char* isa;   // "AVX-512", "AVX2+FMA", "baseline (scalar)"
  int f32_lanes;     // per vector register
  int f64_lanes;
  int fma_chains;    // independent accumulators in the peak loops (cover latency x pipes)
  int addmul_chains;

  // The sweep polynomial over [0, n): the seed's loop (add + mul per term),
  // Horner's rule (one FMA per term, result 1 + x + ... + x^k), and the seed's loop in double.
  void (*poly_f32)(const float* a, float* b, std::int64_t n, std::int64_t k);
  void (*horner_f32)(const float* a, float* b, std::int64_t n, std::int64_t k);
  void (*poly_f64)(const double* a, double* b, std::int64_t n, std::int64_t k);

  // Peak loops: `iters` iterations, each doing fma_chains FMAs per lane
  // (2 FLOPs each), or addmul_chains adds and as many multiplies per lane
  // twice over (4 FLOPs per chain). They return a value to keep the work alive.
  double (*fma_f32)(std::int64_t iters);
  double (*fma_f64)(std::int64_t iters);
  double (*addmul_f32)(std::int64_t iters);
  double (*addmul_f64)(std::int64_t iters);

  // Sums p[0..n) `reps` times (n a multiple of read_block()); returns the sum.
  double (*read_f32)(const float* p, std::int64_t n, std::int64_t reps);
  std::int64_t read_block;  // floats per loop iteration of read_f32

  double fma_flops(std::int64_t iters, bool f64) const {
    return 2.0 * static_cast<double>(iters) * fma_chains * (f64 ? f64_lanes : f32_lanes);
  }
  double addmul_flops(std::int64_t iters, bool f64) const {
    return 4.0 * static_cast<double>(iters) * addmul_chains * (f64 ? f64_lanes : f32_lanes);
  }
};

// The set for hw::active_isa().
const SimdLoops& simd_loops();
// The set for `isa`, which this CPU must support.
const SimdLoops& simd_loops(hw::Isa isa);
// Every set this CPU can run, widest first (tests check each against the baseline).
std::vector<const SimdLoops*> supported_loops();

const SimdLoops& simd_loops_avx512();
const SimdLoops& simd_loops_avx2();
const SimdLoops& simd_loops_sse2();

// 1.0, but the compiler cannot know it (simd_body.inc's peak loops start from it).
extern volatile double g_unknown_one;

}  // namespace roofline::ceilings::cpu

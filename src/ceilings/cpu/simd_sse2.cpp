// The ceilings' SIMD loops (simd.hpp) for the x86-64 baseline: scalar code
// (the compiler may vectorise it for SSE2), after the pattern of
// src/hardware/isa_target.hpp.
#include <cmath>
#include <cstdint>

#include "src/ceilings/cpu/simd.hpp"
#include "src/hardware/isa_target.hpp"

ROOFLINE_ISA_BEGIN_SSE2
namespace roofline::ceilings::cpu {
namespace {

struct Ops {
  using F32 = float;
  using F64 = double;
  static constexpr int kF32 = 1, kF64 = 1;
  static float load(const float* p) { return *p; }
  static double load(const double* p) { return *p; }
  static void store(float* p, float v) { *p = v; }
  static void store(double* p, double v) { *p = v; }
  static float zero_f32() { return 0.0f; }
  static double zero_f64() { return 0.0; }
  static float set1(float v) { return v; }
  static double set1(double v) { return v; }
  static float add(float a, float b) { return a + b; }
  static double add(double a, double b) { return a + b; }
  static float mul(float a, float b) { return a * b; }
  static double mul(double a, double b) { return a * b; }
  static float fma(float a, float b, float c) { return std::fma(a, b, c); }
  static double fma(double a, double b, double c) { return std::fma(a, b, c); }
  static float fma_scalar(float a, float b, float c) { return std::fma(a, b, c); }
  static double hsum(float v) { return v; }
  static double hsum(double v) { return v; }
};
#include "src/ceilings/cpu/simd_body.inc"

}  // namespace

const SimdLoops& simd_loops_sse2() {
  static const SimdLoops k = {
      "baseline (scalar)", 1, 1, 8, 8,
      poly_f32_impl<8>, horner_f32_impl<8>, poly_f64_impl<8>,
      fma_peak_impl<float, float, 8>, fma_peak_impl<double, double, 8>,
      addmul_peak_impl<float, float, 8>, addmul_peak_impl<double, double, 8>,
      read_f32_impl, 8,
  };
  return k;
}

}  // namespace roofline::ceilings::cpu
ROOFLINE_ISA_END

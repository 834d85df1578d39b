// The ceilings' SIMD loops (simd.hpp) for AVX2 with FMA: 16 ymm registers, so
// fewer chains than AVX-512. After the pattern of src/hardware/isa_target.hpp.
#include <immintrin.h>

#include <cmath>
#include <cstdint>

#include "src/ceilings/cpu/simd.hpp"
#include "src/hardware/isa_target.hpp"

// The vector types carry attributes that template arguments drop; harmless here.
#pragma GCC diagnostic ignored "-Wignored-attributes"

ROOFLINE_ISA_BEGIN_AVX2
namespace roofline::ceilings::cpu {
namespace {

struct Ops {
  using F32 = __m256;
  using F64 = __m256d;
  static constexpr int kF32 = 8, kF64 = 4;
  static __m256 load(const float* p) { return _mm256_loadu_ps(p); }
  static __m256d load(const double* p) { return _mm256_loadu_pd(p); }
  static void store(float* p, __m256 v) { _mm256_storeu_ps(p, v); }
  static void store(double* p, __m256d v) { _mm256_storeu_pd(p, v); }
  static __m256 zero_f32() { return _mm256_setzero_ps(); }
  static __m256d zero_f64() { return _mm256_setzero_pd(); }
  static __m256 set1(float v) { return _mm256_set1_ps(v); }
  static __m256d set1(double v) { return _mm256_set1_pd(v); }
  static __m256 add(__m256 a, __m256 b) { return _mm256_add_ps(a, b); }
  static __m256d add(__m256d a, __m256d b) { return _mm256_add_pd(a, b); }
  static __m256 mul(__m256 a, __m256 b) { return _mm256_mul_ps(a, b); }
  static __m256d mul(__m256d a, __m256d b) { return _mm256_mul_pd(a, b); }
  static __m256 fma(__m256 a, __m256 b, __m256 c) { return _mm256_fmadd_ps(a, b, c); }
  static __m256d fma(__m256d a, __m256d b, __m256d c) { return _mm256_fmadd_pd(a, b, c); }
  static float fma_scalar(float a, float b, float c) {
    return _mm_cvtss_f32(_mm_fmadd_ss(_mm_set_ss(a), _mm_set_ss(b), _mm_set_ss(c)));
  }
  static double hsum(__m256 v) {
    alignas(32) float t[8];
    _mm256_store_ps(t, v);
    double s = 0;
    for (float x : t) s += x;
    return s;
  }
  static double hsum(__m256d v) {
    alignas(32) double t[4];
    _mm256_store_pd(t, v);
    return t[0] + t[1] + t[2] + t[3];
  }
};
#include "src/ceilings/cpu/simd_body.inc"

}  // namespace

const SimdLoops& simd_loops_avx2() {
  // FMA latency 4-5 cycles x 2 pipes: 10 chains (+2 constants) fit 16 registers.
  static const SimdLoops k = {
      "AVX2+FMA", 8, 4, 10, 6,
      poly_f32_impl<4>, horner_f32_impl<6>, poly_f64_impl<4>,
      fma_peak_impl<__m256, float, 10>, fma_peak_impl<__m256d, double, 10>,
      addmul_peak_impl<__m256, float, 6>, addmul_peak_impl<__m256d, double, 6>,
      read_f32_impl, 64,
  };
  return k;
}

}  // namespace roofline::ceilings::cpu
ROOFLINE_ISA_END

// The ceilings' SIMD loops (simd.hpp) for AVX-512: 32 zmm registers. After the
// pattern of src/hardware/isa_target.hpp.
#include <immintrin.h>

#include <cmath>
#include <cstdint>

#include "src/ceilings/cpu/simd.hpp"
#include "src/hardware/isa_target.hpp"

// The vector types carry attributes that template arguments drop; harmless here.
#pragma GCC diagnostic ignored "-Wignored-attributes"

ROOFLINE_ISA_BEGIN_AVX512
namespace roofline::ceilings::cpu {
namespace {

struct Ops {
  using F32 = __m512;
  using F64 = __m512d;
  static constexpr int kF32 = 16, kF64 = 8;
  static __m512 load(const float* p) { return _mm512_loadu_ps(p); }
  static __m512d load(const double* p) { return _mm512_loadu_pd(p); }
  static void store(float* p, __m512 v) { _mm512_storeu_ps(p, v); }
  static void store(double* p, __m512d v) { _mm512_storeu_pd(p, v); }
  static __m512 zero_f32() { return _mm512_setzero_ps(); }
  static __m512d zero_f64() { return _mm512_setzero_pd(); }
  static __m512 set1(float v) { return _mm512_set1_ps(v); }
  static __m512d set1(double v) { return _mm512_set1_pd(v); }
  static __m512 add(__m512 a, __m512 b) { return _mm512_add_ps(a, b); }
  static __m512d add(__m512d a, __m512d b) { return _mm512_add_pd(a, b); }
  static __m512 mul(__m512 a, __m512 b) { return _mm512_mul_ps(a, b); }
  static __m512d mul(__m512d a, __m512d b) { return _mm512_mul_pd(a, b); }
  static __m512 fma(__m512 a, __m512 b, __m512 c) { return _mm512_fmadd_ps(a, b, c); }
  static __m512d fma(__m512d a, __m512d b, __m512d c) { return _mm512_fmadd_pd(a, b, c); }
  static float fma_scalar(float a, float b, float c) {
    return _mm_cvtss_f32(_mm_fmadd_ss(_mm_set_ss(a), _mm_set_ss(b), _mm_set_ss(c)));
  }
  // Through memory: GCC 12's _mm512_reduce_add_* trips -Wuninitialized.
  static double hsum(__m512 v) {
    alignas(64) float t[16];
    _mm512_store_ps(t, v);
    double s = 0;
    for (float x : t) s += x;
    return s;
  }
  static double hsum(__m512d v) {
    alignas(64) double t[8];
    _mm512_store_pd(t, v);
    double s = 0;
    for (double x : t) s += x;
    return s;
  }
};
#include "src/ceilings/cpu/simd_body.inc"

}  // namespace

const SimdLoops& simd_loops_avx512() {
  // FMA latency 4 x 2 pipes = 8 in flight; 12 chains leave slack.
  static const SimdLoops k = {
      "AVX-512", 16, 8, 12, 8,
      poly_f32_impl<8>, horner_f32_impl<8>, poly_f64_impl<8>,
      fma_peak_impl<__m512, float, 12>, fma_peak_impl<__m512d, double, 12>,
      addmul_peak_impl<__m512, float, 8>, addmul_peak_impl<__m512d, double, 8>,
      read_f32_impl, 128,
  };
  return k;
}

}  // namespace roofline::ceilings::cpu
ROOFLINE_ISA_END

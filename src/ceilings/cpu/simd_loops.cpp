// The SIMD kernel sets. Each vector ISA's code sits between
// `#pragma GCC push_options / target(...)` and `pop_options`, after every
// header is included: only these functions get the wider instructions, so no
// inline library function compiled here can leak AVX-512 into code that runs
// on CPUs without it.
#include "src/ceilings/cpu/simd.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define ROOFLINE_X86 1
#else
#define ROOFLINE_X86 0
#endif

// __m512 and friends carry attributes that template arguments drop; harmless here.
#pragma GCC diagnostic ignored "-Wignored-attributes"

namespace roofline::ceilings::cpu {

// 1.0, but the compiler cannot know it (see addmul_peak_impl).
volatile double g_unknown_one = 1.0;

// ---------------------------------------------------------------------------
// Baseline: scalar code (the compiler may vectorise it for the baseline ISA).
namespace base {
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

const SimdLoops kernels = {
    "baseline (scalar)", 1, 1, 8, 8,
    poly_f32_impl<8>, horner_f32_impl<8>, poly_f64_impl<8>,
    fma_peak_impl<float, float, 8>, fma_peak_impl<double, double, 8>,
    addmul_peak_impl<float, float, 8>, addmul_peak_impl<double, double, 8>,
    read_f32_impl, 8,
};
}  // namespace base

#if ROOFLINE_X86
// ---------------------------------------------------------------------------
// AVX2 + FMA: 16 ymm registers, so fewer chains than AVX-512.
#pragma GCC push_options
#pragma GCC target("avx2,fma")
namespace avx2 {
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

// FMA latency 4-5 cycles x 2 pipes: 10 chains (+2 constants) fit 16 registers.
const SimdLoops kernels = {
    "AVX2+FMA", 8, 4, 10, 6,
    poly_f32_impl<4>, horner_f32_impl<6>, poly_f64_impl<4>,
    fma_peak_impl<__m256, float, 10>, fma_peak_impl<__m256d, double, 10>,
    addmul_peak_impl<__m256, float, 6>, addmul_peak_impl<__m256d, double, 6>,
    read_f32_impl, 64,
};
}  // namespace avx2
#pragma GCC pop_options

// ---------------------------------------------------------------------------
// AVX-512: 32 zmm registers.
#pragma GCC push_options
#pragma GCC target("avx512f,avx512dq,avx2,fma")
namespace avx512 {
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

// FMA latency 4 x 2 pipes = 8 in flight; 12 chains leave slack.
const SimdLoops kernels = {
    "AVX-512", 16, 8, 12, 8,
    poly_f32_impl<8>, horner_f32_impl<8>, poly_f64_impl<8>,
    fma_peak_impl<__m512, float, 12>, fma_peak_impl<__m512d, double, 12>,
    addmul_peak_impl<__m512, float, 8>, addmul_peak_impl<__m512d, double, 8>,
    read_f32_impl, 128,
};
}  // namespace avx512
#pragma GCC pop_options
#endif  // ROOFLINE_X86

std::vector<const SimdLoops*> supported_loops() {
  std::vector<const SimdLoops*> out;
#if ROOFLINE_X86
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq")) out.push_back(&avx512::kernels);
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) out.push_back(&avx2::kernels);
#endif
  out.push_back(&base::kernels);
  return out;
}

const SimdLoops& simd_loops() {
  static const SimdLoops* k = supported_loops().front();
  return *k;
}

}  // namespace roofline::ceilings::cpu

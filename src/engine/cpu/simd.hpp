// One SIMD vector type and its few operations, for the ISA the including file
// is compiled for. Included only by src/engine/cpu/tiles_isa.inc, after its
// target pragma and with ROOFLINE_SIMD_BITS set to 512, 256 or 128, inside its
// anonymous namespace: each ISA gets its own copy of every kernel, and nothing
// compiled for AVX-512 can leak into code that runs on a CPU without it (all of
// it has internal linkage).
//
// Horizontal sums use one fixed tree (lane i + lane i+W/2, then halving down to
// one lane), and hsum4() reduces four vectors with exactly that tree per
// vector: a result never depends on which kernel variant (block shape)
// computed it, so the fast path's results do not depend on how the work was
// split between threads.
#pragma once
// (no include guard needed beyond this: one inclusion per translation unit)

#if !defined(ROOFLINE_SIMD_BITS)
#error "define ROOFLINE_SIMD_BITS before including simd.hpp"
#endif

struct V {
#if ROOFLINE_SIMD_BITS == 512
  using T = __m512;
  static constexpr int W = 16;
  static inline T zero() { return _mm512_setzero_ps(); }
  static inline T set1(float v) { return _mm512_set1_ps(v); }
  static inline T load(const float* p) { return _mm512_loadu_ps(p); }
  static inline void store(float* p, T v) { _mm512_storeu_ps(p, v); }
  static inline __mmask16 mask(int n) { return static_cast<__mmask16>((1u << n) - 1u); }
  // The first n (< W) lanes; the others are zero and their memory is not touched.
  static inline T load_n(const float* p, int n) { return _mm512_maskz_loadu_ps(mask(n), p); }
  static inline void store_n(float* p, T v, int n) { _mm512_mask_storeu_ps(p, mask(n), v); }
  static inline T fma(T a, T b, T c) { return _mm512_fmadd_ps(a, b, c); }
  static inline T add(T a, T b) { return _mm512_add_ps(a, b); }
  // v <= 0 ? 0 : v (NaN kept, as torch.relu)
  static inline T relu(T v) {
    return _mm512_maskz_mov_ps(static_cast<__mmask16>(~_mm512_cmp_ps_mask(v, zero(), _CMP_LE_OQ)), v);
  }
  static inline __m256 half(T v) {  // lanes i + lanes i+8
    // (GCC 12's 512-to-256 cast and extract intrinsics warn about an undefined operand; a shuffle does not)
    const __m256 lo = __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7);
    const __m256 hi = __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15);
    return _mm256_add_ps(lo, hi);
  }
  static inline __m128 quarter(T v) {
    const __m256 h = half(v);
    return _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
  }
#elif ROOFLINE_SIMD_BITS == 256
  using T = __m256;
  static constexpr int W = 8;
  static inline T zero() { return _mm256_setzero_ps(); }
  static inline T set1(float v) { return _mm256_set1_ps(v); }
  static inline T load(const float* p) { return _mm256_loadu_ps(p); }
  static inline void store(float* p, T v) { _mm256_storeu_ps(p, v); }
  static inline __m256i mask(int n) {
    alignas(32) static const int table[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(table + 8 - n));
  }
  static inline T load_n(const float* p, int n) { return _mm256_maskload_ps(p, mask(n)); }
  static inline void store_n(float* p, T v, int n) { _mm256_maskstore_ps(p, mask(n), v); }
  static inline T fma(T a, T b, T c) { return _mm256_fmadd_ps(a, b, c); }
  static inline T add(T a, T b) { return _mm256_add_ps(a, b); }
  static inline T relu(T v) { return _mm256_andnot_ps(_mm256_cmp_ps(v, zero(), _CMP_LE_OQ), v); }
  static inline __m128 quarter(T v) { return _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1)); }
#elif ROOFLINE_SIMD_BITS == 128
  // x86-64 baseline (SSE2): no FMA instruction, so a multiply and an add.
  using T = __m128;
  static constexpr int W = 4;
  static inline T zero() { return _mm_setzero_ps(); }
  static inline T set1(float v) { return _mm_set1_ps(v); }
  static inline T load(const float* p) { return _mm_loadu_ps(p); }
  static inline void store(float* p, T v) { _mm_storeu_ps(p, v); }
  static inline T load_n(const float* p, int n) {
    alignas(16) float t[4] = {0.f, 0.f, 0.f, 0.f};
    for (int i = 0; i < n; ++i) t[i] = p[i];
    return _mm_load_ps(t);
  }
  static inline void store_n(float* p, T v, int n) {
    alignas(16) float t[4];
    _mm_store_ps(t, v);
    for (int i = 0; i < n; ++i) p[i] = t[i];
  }
  static inline T fma(T a, T b, T c) { return _mm_add_ps(_mm_mul_ps(a, b), c); }
  static inline T add(T a, T b) { return _mm_add_ps(a, b); }
  static inline T relu(T v) { return _mm_andnot_ps(_mm_cmple_ps(v, zero()), v); }
  static inline __m128 quarter(T v) { return v; }
#else
#error "ROOFLINE_SIMD_BITS must be 512, 256 or 128"
#endif

  // [hsum(a), hsum(b), hsum(c), hsum(d)], each with the fixed tree.
  static inline __m128 hsum4(T a, T b, T c, T d) {
    const __m128 qa = quarter(a), qb = quarter(b), qc = quarter(c), qd = quarter(d);
    // lanes (0+2, 1+3) of each: the third level of the tree
    const __m128 ab = _mm_add_ps(_mm_unpacklo_ps(qa, qb), _mm_unpackhi_ps(qa, qb));  // a02 b02 a13 b13
    const __m128 cd = _mm_add_ps(_mm_unpacklo_ps(qc, qd), _mm_unpackhi_ps(qc, qd));  // c02 d02 c13 d13
    return _mm_add_ps(_mm_movelh_ps(ab, cd), _mm_movehl_ps(cd, ab));                 // a b c d
  }
  static inline float hsum(T a) { return _mm_cvtss_f32(hsum4(a, zero(), zero(), zero())); }
};

// ReLU that keeps NaN (as torch.relu): v <= 0 ? 0 : v, four lanes.
static inline __m128 relu4(__m128 v) { return _mm_andnot_ps(_mm_cmple_ps(v, _mm_setzero_ps()), v); }

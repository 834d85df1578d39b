// Linear on the CPU: OpenBLAS sgemm (row-major) plus one fused pass for bias
// and activation. All threading is OpenMP: OpenBLAS runs single-threaded and
// each OpenMP thread multiplies a slice of the output. Two thread pools (the
// pthreads OpenBLAS's and OpenMP's) would each spin after their work and
// compete for the same cores — measured here, that made a batch-128
// simple-mlp step 3-8x slower.
#include <cblas.h>
#include <omp.h>

#include <algorithm>

#include "src/engine/cpu/fast_ops.hpp"

namespace roofline::engine::fast {

#define ROOFLINE_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))

namespace {

void blas_single_threaded() {
  static const bool once = [] {
    openblas_set_num_threads(1);
    return true;
  }();
  (void)once;
}

// C (m×n) = op(A) · op(B), row-major, split over the larger of m and n into
// one slice per OpenMP thread (each at least 16 wide, each ~4 MFLOP or more).
void gemm(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, const float* A, std::int64_t lda,
          const float* B, std::int64_t ldb, float* C, std::int64_t ldc) {
  blas_single_threaded();
  const double flops = 2.0 * double(m) * double(n) * double(k);
  const bool split_n = n >= m;
  const std::int64_t extent = split_n ? n : m;
  int threads = static_cast<int>(std::min<double>(omp_get_max_threads(), std::max(1.0, flops / 4e6)));
  threads = static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(threads, extent / 16)));
  const CBLAS_TRANSPOSE opa = ta ? CblasTrans : CblasNoTrans, opb = tb ? CblasTrans : CblasNoTrans;
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
  for (int t = 0; t < threads; ++t) {
    // Slices rounded to 16 elements so each starts on a 64-byte boundary of C's row.
    const std::int64_t per = (extent / threads + 15) / 16 * 16;
    const std::int64_t lo = std::min(extent, per * t), hi = std::min(extent, lo + per);
    if (t == threads - 1 && hi < extent) continue;  // cannot happen: per·threads >= extent
    if (hi <= lo) continue;
    const std::int64_t len = hi - lo;
    if (split_n) {
      const float* b = tb ? B + lo * ldb : B + lo;  // B is k×n (N) or n×k (T)
      cblas_sgemm(CblasRowMajor, opa, opb, int(m), int(len), int(k), 1.0f, A, int(lda), b, int(ldb), 0.0f, C + lo,
                  int(ldc));
    } else {
      const float* a = ta ? A + lo : A + lo * lda;  // A is m×k (N) or k×m (T)
      cblas_sgemm(CblasRowMajor, opa, opb, int(len), int(n), int(k), 1.0f, a, int(lda), B, int(ldb), 0.0f, C + lo * ldc,
                  int(ldc));
    }
  }
}

ROOFLINE_CLONES void bias_act_rows(std::int64_t n, std::int64_t m, float* out, const float* b, bool relu) {
#pragma omp parallel for schedule(static) if (n * m > (1 << 18))
  for (std::int64_t i = 0; i < n; ++i) {
    float* row = out + i * m;
    if (b && relu) {
#pragma omp simd
      for (std::int64_t j = 0; j < m; ++j) row[j] = row[j] + b[j] <= 0.f ? 0.f : row[j] + b[j];  // keeps NaN
    } else if (b) {
#pragma omp simd
      for (std::int64_t j = 0; j < m; ++j) row[j] += b[j];
    } else if (relu) {
#pragma omp simd
      for (std::int64_t j = 0; j < m; ++j) row[j] = row[j] <= 0.f ? 0.f : row[j];
    }
  }
}

ROOFLINE_CLONES void column_sums(std::int64_t n, std::int64_t m, float* sums, const float* x) {
  // Rows outer, columns inner: contiguous, vectorised, and the same summation
  // order as the reference for each column.
  for (std::int64_t j = 0; j < m; ++j) sums[j] = 0.f;
  for (std::int64_t i = 0; i < n; ++i) {
    const float* row = x + i * m;
#pragma omp simd
    for (std::int64_t j = 0; j < m; ++j) sums[j] += row[j];
  }
}
}  // namespace

void linear_forward(const ops::LinearShape& s, float* out, const float* in, const float* w, const float* b) {
  // out (n, out) = in (n, in) · wᵀ
  gemm(false, true, s.n, s.out, s.in, in, s.in, w, s.in, out, s.out);
  bias_act_rows(s.n, s.out, out, s.bias ? b : nullptr, s.act == ops::Activation::ReLU);
}

void linear_backward_input(const ops::LinearShape& s, float* din, const float* dpre, const float* w) {
  // din (n, in) = dpre (n, out) · w (out, in)
  gemm(false, false, s.n, s.in, s.out, dpre, s.out, w, s.in, din, s.in);
}

void linear_backward_weight(const ops::LinearShape& s, float* dw, float* db, const float* dpre, const float* in) {
  // dw (out, in) = dpreᵀ (out, n) · in (n, in)
  gemm(true, false, s.out, s.in, s.n, dpre, s.out, in, s.in, dw, s.in);
  if (db) column_sums(s.n, s.out, db, dpre);
}

}  // namespace roofline::engine::fast

// Linear on the CPU: OpenBLAS sgemm (row-major) plus one fused OpenMP pass
// for bias and activation.
#include <cblas.h>

#include "src/engine/cpu/fast_ops.hpp"

namespace roofline::engine::fast {

#define ROOFLINE_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))

namespace {
ROOFLINE_CLONES void bias_act_rows(std::int64_t n, std::int64_t m, float* out, const float* b, bool relu) {
#pragma omp parallel for schedule(static) if (n * m > 32768)
  for (std::int64_t i = 0; i < n; ++i) {
    float* row = out + i * m;
    if (b && relu) {
#pragma omp simd
      for (std::int64_t j = 0; j < m; ++j) row[j] = row[j] + b[j] <= 0.f ? 0.f : row[j] + b[j];
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
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(s.n), static_cast<int>(s.out),
              static_cast<int>(s.in), 1.0f, in, static_cast<int>(s.in), w, static_cast<int>(s.in), 0.0f, out,
              static_cast<int>(s.out));
  bias_act_rows(s.n, s.out, out, s.bias ? b : nullptr, s.act == ops::Activation::ReLU);
}

void linear_backward_input(const ops::LinearShape& s, float* din, const float* dpre, const float* w) {
  // din (n, in) = dpre (n, out) · w (out, in)
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(s.n), static_cast<int>(s.in),
              static_cast<int>(s.out), 1.0f, dpre, static_cast<int>(s.out), w, static_cast<int>(s.in), 0.0f, din,
              static_cast<int>(s.in));
}

void linear_backward_weight(const ops::LinearShape& s, float* dw, float* db, const float* dpre, const float* in) {
  // dw (out, in) = dpreᵀ (out, n) · in (n, in)
  cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, static_cast<int>(s.out), static_cast<int>(s.in),
              static_cast<int>(s.n), 1.0f, dpre, static_cast<int>(s.out), in, static_cast<int>(s.in), 0.0f, dw,
              static_cast<int>(s.in));
  if (db) column_sums(s.n, s.out, db, dpre);
}

}  // namespace roofline::engine::fast

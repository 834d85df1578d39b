// ReLU forward and backward, and the Linear layers' fused ReLU mask and bias
// gradient, on the CPU: vectorised loops (one clone per ISA, picked at load
// time) over chunks or column blocks, threads only where the bytes pay for
// them (parallel.hpp). Each column's bias-gradient sum runs over the rows in
// order, so results do not depend on the thread count.
#include <algorithm>

#include "src/engine/cpu/fast_ops.hpp"
#include "src/engine/cpu/parallel.hpp"

namespace roofline::engine::fast {

#define ROOFLINE_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))

using std::int64_t;

namespace {

ROOFLINE_CLONES void relu_chunk(float* __restrict out, const float* __restrict in, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) out[i] = in[i] <= 0.f ? 0.f : in[i];  // keeps NaN, as torch.relu
}

ROOFLINE_CLONES void relu_grad_chunk(float* din, const float* dout, const float* out, int64_t n) {
  // din may alias dout (the layers mask the gradient in place)
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) din[i] = out[i] > 0.f ? dout[i] : 0.f;
}

// Masked gradient and its column sums for columns [j0, j1), rows in order.
ROOFLINE_CLONES void bias_grad_cols(const ops::BiasGradShape& s, float* dpre, float* db, const float* dout,
                                    const float* out, int64_t j0, int64_t j1) {
  const bool relu = s.act == ops::Activation::ReLU;
  for (int64_t j = j0; j < j1; ++j) db[j] = 0.f;
  for (int64_t i = 0; i < s.rows; ++i) {
    const float* g = dout + i * s.cols;
    const float* y = out + i * s.cols;
    float* d = dpre + i * s.cols;
#pragma omp simd
    for (int64_t j = j0; j < j1; ++j) {
      const float v = relu ? (y[j] > 0.f ? g[j] : 0.f) : g[j];
      d[j] = v;
      db[j] += v;
    }
  }
}

}  // namespace

void activation_forward(const ops::EltwiseShape& s, float* out, const float* in) {
  if (s.act != ops::Activation::ReLU) {
    if (out != in) std::copy_n(in, s.n, out);
    return;
  }
  parallel_chunks(s.n, 8.0, [&](int64_t lo, int64_t len) { relu_chunk(out + lo, in + lo, len); });
}

void activation_backward(const ops::EltwiseShape& s, float* din, const float* dout, const float* out) {
  if (s.act != ops::Activation::ReLU) {
    if (din != dout) std::copy_n(dout, s.n, din);
    return;
  }
  parallel_chunks(s.n, 12.0, [&](int64_t lo, int64_t len) { relu_grad_chunk(din + lo, dout + lo, out + lo, len); });
}

void activation_bias_backward(const ops::BiasGradShape& s, float* dpre, float* db, const float* dout,
                              const float* out) {
  constexpr int64_t kCols = 64;  // column blocks: each column's sum runs over the rows in order
  const int64_t blocks = (s.cols + kCols - 1) / kCols;
  const int threads = threads_for(12.0 * double(s.rows * s.cols), kBytesPerThread, blocks);
  parallel_for(blocks, threads, [&](int64_t b) {
    bias_grad_cols(s, dpre, db, dout, out, b * kCols, std::min(s.cols, (b + 1) * kCols));
  });
}

}  // namespace roofline::engine::fast

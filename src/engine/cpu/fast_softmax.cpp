// The softmax family on the CPU: softmax and log-softmax row by row with the
// reference's loops (ref_ops.hpp), and the fused log-softmax + NLL loss with
// its gradient. Rows are split between threads; the loss is summed in fixed
// blocks of rows, in order, so it does not depend on the thread count.
#include <algorithm>
#include <cmath>
#include <vector>

#include "src/engine/cpu/fast_ops.hpp"
#include "src/engine/cpu/parallel.hpp"
#include "src/engine/cpu/ref_ops.hpp"

namespace roofline::engine::fast {

using std::int64_t;

namespace {
// exp, not bytes, sets these loops' time: threads by elements.
int rows_threads(const ops::RowsShape& s) { return threads_for(double(s.rows * s.cols), kElementsPerThread, s.rows); }
}  // namespace

void softmax_forward(const ops::RowsShape& s, float* out, const float* in) {
  parallel_for(s.rows, rows_threads(s), [&](int64_t i) {
    ref::softmax_forward<float>({1, s.cols}, out + i * s.cols, in + i * s.cols);
  });
}

void softmax_backward(const ops::RowsShape& s, float* din, const float* dout, const float* out) {
  parallel_for(s.rows, threads_for(12.0 * double(s.rows * s.cols), kBytesPerThread, s.rows), [&](int64_t i) {
    ref::softmax_backward<float>({1, s.cols}, din + i * s.cols, dout + i * s.cols, out + i * s.cols);
  });
}

void log_softmax_forward(const ops::RowsShape& s, float* out, const float* in) {
  parallel_for(s.rows, rows_threads(s), [&](int64_t i) {
    ref::log_softmax_forward<float>({1, s.cols}, out + i * s.cols, in + i * s.cols);
  });
}

void log_softmax_backward(const ops::RowsShape& s, float* din, const float* dout, const float* out) {
  parallel_for(s.rows, rows_threads(s), [&](int64_t i) {
    ref::log_softmax_backward<float>({1, s.cols}, din + i * s.cols, dout + i * s.cols, out + i * s.cols);
  });
}

namespace {

// Log-softmax + NLL of `rows` rows and its gradient, as ref::cross_entropy but
// with one exp per value (the gradient reuses exp(x − max) / Σ instead of a
// second exp(x − lse)): the reference's form took 20.7 µs for 128 × 10 on one
// thread of the GPU host. Returns the rows' loss summed in order.
float cross_entropy_rows(std::int64_t rows, std::int64_t cols, float* dlogits, const float* logits,
                         const std::int32_t* labels, float grad_scale, std::int64_t* correct) {
  float total = 0;
  for (std::int64_t i = 0; i < rows; ++i) {
    const float* x = logits + i * cols;
    std::int64_t arg = 0;
    float m = x[0];
    for (std::int64_t j = 1; j < cols; ++j)
      if (x[j] > m) {
        m = x[j];
        arg = j;
      }
    float sum = 0;
    float* d = dlogits ? dlogits + i * cols : nullptr;
    for (std::int64_t j = 0; j < cols; ++j) {
      const float e = std::exp(x[j] - m);
      sum += e;
      if (d) d[j] = e;
    }
    total += m + std::log(sum) - x[labels[i]];
    if (arg == labels[i]) ++*correct;
    if (d) {
      const float inv = 1.0f / sum;
      for (std::int64_t j = 0; j < cols; ++j) d[j] = grad_scale * (d[j] * inv - (j == labels[i] ? 1.0f : 0.0f));
    }
  }
  return total;
}

}  // namespace

double cross_entropy(const ops::RowsShape& s, float* dlogits, const float* logits, const std::int32_t* labels,
                     float grad_scale, std::int64_t* correct) {
  // Blocks of 16 rows: each block's loss is a float sum over its rows in
  // order, the blocks' sums are added in order, whatever the thread count.
  constexpr int64_t kRows = 16;
  const int64_t blocks = (s.rows + kRows - 1) / kRows;
  // The caller's buffers (grown once). Named through pointers: inside the
  // parallel region the name of a thread_local would be each thread's own.
  thread_local std::vector<double> loss_buf;
  thread_local std::vector<std::int64_t> right_buf;
  loss_buf.resize(static_cast<size_t>(blocks));
  right_buf.resize(static_cast<size_t>(blocks));
  double* loss = loss_buf.data();
  std::int64_t* right = right_buf.data();
  // ~15 ns a value (an exp, a log per row): threads by values, 256 each.
  parallel_for(blocks, threads_for(double(s.rows * s.cols), 256.0, blocks), [&](int64_t b) {
    const int64_t r0 = b * kRows, rows = std::min(kRows, s.rows - r0);
    std::int64_t c = 0;
    loss[b] = cross_entropy_rows(rows, s.cols, dlogits ? dlogits + r0 * s.cols : nullptr, logits + r0 * s.cols,
                                 labels + r0, grad_scale, &c);
    right[b] = c;
  });
  double total = 0;
  std::int64_t ok = 0;
  for (int64_t b = 0; b < blocks; ++b) {
    total += loss[b];
    ok += right[b];
  }
  if (correct) *correct += ok;
  return total;
}

}  // namespace roofline::engine::fast

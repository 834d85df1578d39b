// The small ops on the CPU: OpenMP over planes or rows, vectorised inner loops.
#include <cmath>

#include "src/engine/cpu/fast_ops.hpp"
#include "src/engine/cpu/ref_ops.hpp"

namespace roofline::engine::fast {

#define ROOFLINE_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))

using std::int64_t;

void maxpool2d_forward(const ops::Pool2dShape& s, float* out, std::int32_t* argmax, const float* in) {
  const int64_t OH = s.oh(), OW = s.ow();
#pragma omp parallel for schedule(static) if (s.n * s.c * s.h * s.w > 65536)
  for (int64_t p = 0; p < s.n * s.c; ++p) {
    const float* ip = in + p * s.h * s.w;
    for (int64_t y = 0; y < OH; ++y)
      for (int64_t x = 0; x < OW; ++x) {
        int64_t best = (y * s.stride) * s.w + x * s.stride;
        float m = ip[best];
        for (int64_t r = 0; r < s.kernel; ++r) {
          const int64_t row = (y * s.stride + r) * s.w + x * s.stride;
          for (int64_t q = 0; q < s.kernel; ++q) {
            const float v = ip[row + q];
            if (v > m || std::isnan(v)) {
              m = v;
              best = row + q;
            }
          }
        }
        out[(p * OH + y) * OW + x] = m;
        argmax[(p * OH + y) * OW + x] = static_cast<std::int32_t>(best);
      }
  }
}

void maxpool2d_backward(const ops::Pool2dShape& s, float* din, const float* dout, const std::int32_t* argmax) {
  const int64_t OH = s.oh(), OW = s.ow();
#pragma omp parallel for schedule(static) if (s.n * s.c * s.h * s.w > 65536)
  for (int64_t p = 0; p < s.n * s.c; ++p) {
    float* d = din + p * s.h * s.w;
    for (int64_t i = 0; i < s.h * s.w; ++i) d[i] = 0.f;
    for (int64_t i = 0; i < OH * OW; ++i) d[argmax[p * OH * OW + i]] += dout[p * OH * OW + i];
  }
}

ROOFLINE_CLONES void activation_forward(const ops::EltwiseShape& s, float* out, const float* in) {
  if (s.act != ops::Activation::ReLU) {
    if (out != in)
      for (int64_t i = 0; i < s.n; ++i) out[i] = in[i];
    return;
  }
#pragma omp parallel for simd schedule(static) if (s.n > 262144)
  for (int64_t i = 0; i < s.n; ++i) out[i] = in[i] <= 0.f ? 0.f : in[i];
}

ROOFLINE_CLONES void activation_backward(const ops::EltwiseShape& s, float* din, const float* dout, const float* out) {
  if (s.act != ops::Activation::ReLU) {
    if (din != dout)
      for (int64_t i = 0; i < s.n; ++i) din[i] = dout[i];
    return;
  }
#pragma omp parallel for simd schedule(static) if (s.n > 262144)
  for (int64_t i = 0; i < s.n; ++i) din[i] = out[i] > 0.f ? dout[i] : 0.f;
}

ROOFLINE_CLONES void activation_bias_backward(const ops::BiasGradShape& s, float* dpre, float* db, const float* dout,
                                              const float* out) {
  // Rows outer, columns inner: contiguous and vectorised, and the same
  // summation order per column as the reference.
  const bool relu = s.act == ops::Activation::ReLU;
  for (int64_t j = 0; j < s.cols; ++j) db[j] = 0.f;
  for (int64_t i = 0; i < s.rows; ++i) {
    const float* g = dout + i * s.cols;
    const float* y = out + i * s.cols;
    float* d = dpre + i * s.cols;
#pragma omp simd
    for (int64_t j = 0; j < s.cols; ++j) {
      const float v = relu ? (y[j] > 0.f ? g[j] : 0.f) : g[j];
      d[j] = v;
      db[j] += v;
    }
  }
}

void softmax_forward(const ops::RowsShape& s, float* out, const float* in) {
#pragma omp parallel for schedule(static) if (s.rows * s.cols > 65536)
  for (int64_t i = 0; i < s.rows; ++i) ref::softmax_forward<float>({1, s.cols}, out + i * s.cols, in + i * s.cols);
}

void softmax_backward(const ops::RowsShape& s, float* din, const float* dout, const float* out) {
#pragma omp parallel for schedule(static) if (s.rows * s.cols > 65536)
  for (int64_t i = 0; i < s.rows; ++i)
    ref::softmax_backward<float>({1, s.cols}, din + i * s.cols, dout + i * s.cols, out + i * s.cols);
}

void log_softmax_forward(const ops::RowsShape& s, float* out, const float* in) {
#pragma omp parallel for schedule(static) if (s.rows * s.cols > 65536)
  for (int64_t i = 0; i < s.rows; ++i) ref::log_softmax_forward<float>({1, s.cols}, out + i * s.cols, in + i * s.cols);
}

void log_softmax_backward(const ops::RowsShape& s, float* din, const float* dout, const float* out) {
#pragma omp parallel for schedule(static) if (s.rows * s.cols > 65536)
  for (int64_t i = 0; i < s.rows; ++i)
    ref::log_softmax_backward<float>({1, s.cols}, din + i * s.cols, dout + i * s.cols, out + i * s.cols);
}

double cross_entropy(const ops::RowsShape& s, float* dlogits, const float* logits, const std::int32_t* labels,
                     float grad_scale, std::int64_t* correct) {
  double total = 0;
  std::int64_t right = 0;
#pragma omp parallel for schedule(static) reduction(+ : total, right) if (s.rows * s.cols > 65536)
  for (int64_t i = 0; i < s.rows; ++i) {
    std::int64_t c = 0;
    total += ref::cross_entropy<float>({1, s.cols}, dlogits ? dlogits + i * s.cols : nullptr, logits + i * s.cols,
                                       labels + i, grad_scale, &c);
    right += c;
  }
  if (correct) *correct += right;
  return total;
}

ROOFLINE_CLONES void sgd_update(const ops::SgdShape& s, float* p, const float* g, float* buf,
                                const ops::SgdConfig& cfg) {
  const float lr = cfg.lr, mom = cfg.momentum, wd = cfg.weight_decay;
  if (s.momentum) {
#pragma omp parallel for simd schedule(static) if (s.n > 262144)
    for (int64_t i = 0; i < s.n; ++i) {
      const float d = g[i] + wd * p[i];
      const float m = mom * buf[i] + d;
      buf[i] = m;
      p[i] = p[i] - lr * m;
    }
  } else {
#pragma omp parallel for simd schedule(static) if (s.n > 262144)
    for (int64_t i = 0; i < s.n; ++i) p[i] = p[i] - lr * (g[i] + wd * p[i]);
  }
}

void gather_batch(const ops::BatchShape& s, float* x, std::int32_t* y, const std::uint8_t* images,
                  const std::uint8_t* labels, const std::int32_t* order, std::int64_t first, std::int32_t step) {
  const int64_t per = s.out_h * s.out_w;
#pragma omp parallel for schedule(static) if (s.batch * per > 65536)
  for (int64_t i = 0; i < s.batch; ++i) {
    ops::BatchShape one = s;
    one.batch = 1;
    ref::gather_batch<float>(one, x + i * per, y + i, images, labels, order, first + i,
                             step);  // sample order[first + i + step·stride]
  }
}

}  // namespace roofline::engine::fast

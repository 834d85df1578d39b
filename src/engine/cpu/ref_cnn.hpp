// The reference CNN ops of roofline/engine/ops_cnn.hpp: plain loops, templated
// on the element type (float: the CpuRef backend; double: the harness's
// reference and its finite-difference checks). Every buffer, parameters and
// statistics included, is in T here; statistics are summed in double whatever T.
#pragma once
#include <cmath>
#include <cstdint>

#include "kernels/dropout_hash.cuh"
#include "roofline/engine/ops_cnn.hpp"
#include "src/engine/cpu/ref_ops.hpp"

namespace roofline::engine::ref {

// Calls f(index) for every element of channel c, images then rows then columns.
template <class F>
void for_channel(const ops::BatchNormShape& s, int64_t c, F&& f) {
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t y = 0; y < s.h; ++y)
      for (int64_t x = 0; x < s.w; ++x) f(image_at(s.format, s.c, s.h, s.w, n, c, y, x));
}

// out = act(gamma·(in − mean)·invstd + beta [+ residual]) over channel c.
template <class T>
void batchnorm_normalize(const ops::BatchNormShape& s, int64_t c, T* out, const T* in, const T* residual, double gamma,
                         double beta, double mean, double invstd) {
  for_channel(s, c, [&](int64_t i) {
    double v = (static_cast<double>(in[i]) - mean) * invstd * gamma + beta;
    if (residual) v += static_cast<double>(residual[i]);
    out[i] = apply_act(s.act, static_cast<T>(v));
  });
}

// Training forward: the batch's mean and biased variance per channel (two
// passes), the running averages (unbiased variance), the saved statistics.
template <class T>
void batchnorm_forward_train(const ops::BatchNormShape& s, T* out, const T* in, const T* residual, const T* gamma,
                             const T* beta, T* running_mean, T* running_var, T* save_mean, T* save_invstd) {
  const double count = static_cast<double>(s.count()), mom = s.momentum;
  for (int64_t c = 0; c < s.c; ++c) {
    double sum = 0;
    for_channel(s, c, [&](int64_t i) { sum += static_cast<double>(in[i]); });
    const double mean = sum / count;
    double sq = 0;
    for_channel(s, c, [&](int64_t i) {
      const double d = static_cast<double>(in[i]) - mean;
      sq += d * d;
    });
    const double var = sq / count;
    const double invstd = 1.0 / std::sqrt(var + static_cast<double>(s.eps));
    save_mean[c] = static_cast<T>(mean);
    save_invstd[c] = static_cast<T>(invstd);
    running_mean[c] = static_cast<T>((1 - mom) * static_cast<double>(running_mean[c]) + mom * mean);
    running_var[c] = static_cast<T>((1 - mom) * static_cast<double>(running_var[c]) + mom * var * count / (count - 1));
    batchnorm_normalize(s, c, out, in, s.residual ? residual : nullptr, static_cast<double>(gamma[c]),
                        static_cast<double>(beta[c]), mean, invstd);
  }
}

template <class T>
void batchnorm_forward_eval(const ops::BatchNormShape& s, T* out, const T* in, const T* residual, const T* gamma,
                            const T* beta, const T* running_mean, const T* running_var) {
  for (int64_t c = 0; c < s.c; ++c) {
    const double invstd = 1.0 / std::sqrt(static_cast<double>(running_var[c]) + static_cast<double>(s.eps));
    batchnorm_normalize(s, c, out, in, s.residual ? residual : nullptr, static_cast<double>(gamma[c]),
                        static_cast<double>(beta[c]), static_cast<double>(running_mean[c]), invstd);
  }
}

// dout → dpre in place (the activation's mask), then dbeta, dgamma and din.
template <class T>
void batchnorm_backward(const ops::BatchNormShape& s, T* din, T* dgamma, T* dbeta, T* dout, const T* out, const T* in,
                        const T* gamma, const T* save_mean, const T* save_invstd) {
  const double count = static_cast<double>(s.count());
  const bool relu = s.act == ops::Activation::ReLU;
  for (int64_t c = 0; c < s.c; ++c) {
    const double mean = static_cast<double>(save_mean[c]), invstd = static_cast<double>(save_invstd[c]);
    double sum_g = 0, sum_gx = 0;
    for_channel(s, c, [&](int64_t i) {
      if (relu) dout[i] = out[i] > T(0) ? dout[i] : T(0);
      const double g = static_cast<double>(dout[i]);
      sum_g += g;
      sum_gx += g * (static_cast<double>(in[i]) - mean) * invstd;
    });
    dbeta[c] = static_cast<T>(sum_g);
    dgamma[c] = static_cast<T>(sum_gx);
    const double k = static_cast<double>(gamma[c]) * invstd;
    for_channel(s, c, [&](int64_t i) {
      const double xhat = (static_cast<double>(in[i]) - mean) * invstd;
      din[i] = static_cast<T>(k * (static_cast<double>(dout[i]) - sum_g / count - xhat * sum_gx / count));
    });
  }
}

// ---- AdaptiveAvgPool2d ---------------------------------------------------------------
// Bin i of `out` bins over `in` elements: [floor(i·in/out), ceil((i+1)·in/out)).
inline int64_t bin_start(int64_t i, int64_t in, int64_t out) { return (i * in) / out; }
inline int64_t bin_end(int64_t i, int64_t in, int64_t out) { return ((i + 1) * in + out - 1) / out; }

template <class T>
void adaptive_avgpool2d_forward(const ops::AvgPoolShape& s, T* out, const T* in) {
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t c = 0; c < s.c; ++c)
      for (int64_t i = 0; i < s.oh; ++i)
        for (int64_t j = 0; j < s.ow; ++j) {
          const int64_t y0 = bin_start(i, s.h, s.oh), y1 = bin_end(i, s.h, s.oh);
          const int64_t x0 = bin_start(j, s.w, s.ow), x1 = bin_end(j, s.w, s.ow);
          T sum = 0;
          for (int64_t y = y0; y < y1; ++y)
            for (int64_t x = x0; x < x1; ++x) sum += in[image_at(s.format, s.c, s.h, s.w, n, c, y, x)];
          out[image_at(s.format, s.c, s.oh, s.ow, n, c, i, j)] = sum / static_cast<T>((y1 - y0) * (x1 - x0));
        }
}

template <class T>
void adaptive_avgpool2d_backward(const ops::AvgPoolShape& s, T* din, const T* dout) {
  for (int64_t i = 0; i < s.n * s.c * s.h * s.w; ++i) din[i] = 0;
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t c = 0; c < s.c; ++c)
      for (int64_t i = 0; i < s.oh; ++i)
        for (int64_t j = 0; j < s.ow; ++j) {
          const int64_t y0 = bin_start(i, s.h, s.oh), y1 = bin_end(i, s.h, s.oh);
          const int64_t x0 = bin_start(j, s.w, s.ow), x1 = bin_end(j, s.w, s.ow);
          const T g = dout[image_at(s.format, s.c, s.oh, s.ow, n, c, i, j)] / static_cast<T>((y1 - y0) * (x1 - x0));
          for (int64_t y = y0; y < y1; ++y)
            for (int64_t x = x0; x < x1; ++x) din[image_at(s.format, s.c, s.h, s.w, n, c, y, x)] += g;
        }
}

// ---- Residual add ----------------------------------------------------------------------
template <class T>
void add_forward(const ops::EltwiseShape& s, T* out, const T* a, const T* b) {
  for (int64_t i = 0; i < s.n; ++i) out[i] = apply_act(s.act, a[i] + b[i]);
}

// ---- Dropout -----------------------------------------------------------------------------
// out = kept ? in·scale : 0 (the forward and, on dout, the backward)
template <class T>
void dropout_apply(const ops::DropoutShape& s, T* out, const T* in, std::uint64_t seed, std::int32_t step) {
  const std::uint64_t key = kernels::dropout_key(seed, step), thr = kernels::dropout_threshold(s.p);
  const T scale = s.p < 1.0f ? T(1) / (T(1) - static_cast<T>(s.p)) : T(0);
  for (int64_t i = 0; i < s.n; ++i)
    out[i] = kernels::dropout_kept(key, thr, static_cast<std::uint64_t>(i)) ? in[i] * scale : T(0);
}

template <class T>
void dropout_forward(const ops::DropoutShape& s, T* out, const T* in, std::uint64_t seed, std::int32_t step) {
  dropout_apply(s, out, in, seed, step);
}

template <class T>
void dropout_backward(const ops::DropoutShape& s, T* din, const T* dout, std::uint64_t seed, std::int32_t step) {
  dropout_apply(s, din, dout, seed, step);
}

}  // namespace roofline::engine::ref

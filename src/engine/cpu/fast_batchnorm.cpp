// BatchNorm2d on the CPU (fp32). Two sweeps each way:
//   forward:  the per-channel sums Σ(x − K) and Σ(x − K)² (K: the channel's
//             first element, a shift that keeps the variance from cancelling
//             when |mean| ≫ std), then the normalisation with the residual add
//             and ReLU fused;
//   backward: dpre = dout ⊙ act'(out) written in place with the sums Σ dpre and
//             Σ dpre·(x − mean), then din.
// Tasks: NCHW, a channel's runs of h·w elements in groups of ~32K elements;
// NHWC, groups of rows (n, h, w) of all channels. Their bounds depend on the
// shape alone; each task sums in fp32 (vectorised), the tasks' sums are added
// in double in task order: results do not depend on the thread count.
#include <algorithm>
#include <cmath>
#include <vector>

#include "src/engine/cpu/fast_cnn.hpp"
#include "src/engine/cpu/parallel.hpp"

namespace roofline::engine::fast {

using std::int64_t;

namespace {

constexpr int64_t kTaskElems = int64_t{1} << 15;  // elements one statistics task sums (128 KB of fp32)

// Scratch the calling thread keeps between calls: no allocation once a shape was seen.
std::vector<double>& partial_scratch(size_t n) {
  thread_local std::vector<double> v;
  if (v.size() < n) v.resize(n);
  return v;
}
std::vector<float>& channel_scratch(size_t n) {
  thread_local std::vector<float> v;
  if (v.size() < n) v.resize(n);
  return v;
}
// A task's per-channel accumulators (apart from channel_scratch: the calling
// thread runs tasks too, while its channel_scratch holds the op's constants).
std::vector<float>& accum_scratch(size_t n) {
  thread_local std::vector<float> v;
  if (v.size() < n) v.resize(n);
  return v;
}

bool nchw(const ops::BatchNormShape& s) { return s.format == MemoryFormat::NCHW; }
int64_t plane(const ops::BatchNormShape& s) { return s.h * s.w; }
double elements(const ops::BatchNormShape& s) { return double(s.n) * double(s.c) * double(plane(s)); }

// sum1 (c), sum2 (c) = the per-channel totals of two sums that `run` computes.
// NCHW: run(c, offset, len, a1, a2) adds over the `len` elements of channel c at
// `offset` (one image's plane); NHWC: rows(m0, m1, a1 (c), a2 (c)) adds rows
// [m0, m1) into per-channel accumulators.
template <class Run, class Rows>
void channel_sums(const ops::BatchNormShape& s, double bytes_per_element, Run&& run, Rows&& rows, double* sum1,
                  double* sum2) {
  if (nchw(s)) {
    const int64_t hw = plane(s), per = std::max<int64_t>(1, kTaskElems / hw), groups = (s.n + per - 1) / per;
    const int64_t tasks = s.c * groups;
    std::vector<double>& part = partial_scratch(size_t(2 * tasks));
    double* pp = part.data();
    parallel_for(tasks, threads_for(bytes_per_element * elements(s), kBytesPerThread, tasks), [&](int64_t t) {
      const int64_t c = t / groups, g = t % groups;
      double d1 = 0, d2 = 0;
      for (int64_t img = g * per; img < std::min(s.n, (g + 1) * per); ++img) {
        float a1 = 0, a2 = 0;
        run(c, (img * s.c + c) * hw, hw, a1, a2);
        d1 += a1;
        d2 += a2;
      }
      pp[2 * t] = d1;
      pp[2 * t + 1] = d2;
    });
    for (int64_t c = 0; c < s.c; ++c) {
      double t1 = 0, t2 = 0;
      for (int64_t g = 0; g < groups; ++g) {
        t1 += pp[2 * (c * groups + g)];
        t2 += pp[2 * (c * groups + g) + 1];
      }
      sum1[c] = t1;
      sum2[c] = t2;
    }
    return;
  }
  const int64_t M = s.count(), C = s.c, per = std::max<int64_t>(1, kTaskElems / C), tasks = (M + per - 1) / per;
  std::vector<double>& part = partial_scratch(size_t(2 * C * tasks));
  double* pp = part.data();
  parallel_for(tasks, threads_for(bytes_per_element * elements(s), kBytesPerThread, tasks), [&](int64_t t) {
    std::vector<float>& acc = accum_scratch(size_t(2 * C));
    std::fill_n(acc.data(), 2 * C, 0.f);
    rows(t * per, std::min(M, (t + 1) * per), acc.data(), acc.data() + C);
    for (int64_t c = 0; c < 2 * C; ++c) pp[t * 2 * C + c] = acc[size_t(c)];
  });
  std::fill_n(sum1, C, 0.0);
  std::fill_n(sum2, C, 0.0);
  for (int64_t t = 0; t < tasks; ++t)
    for (int64_t c = 0; c < C; ++c) {
      sum1[c] += pp[t * 2 * C + c];
      sum2[c] += pp[t * 2 * C + C + c];
    }
}

// out = act((x − mean)·scale + beta [+ residual]) over every element; prm:
// mean (c), scale (c), beta (c) one after the other.
void normalize(const ops::BatchNormShape& s, float* out, const float* in, const float* residual, const float* prm) {
  const bool relu = s.act == ops::Activation::ReLU;
  const float* mean = prm;
  const float* scale = prm + s.c;
  const float* beta = prm + 2 * s.c;
  const double bytes = (residual ? 12.0 : 8.0) * elements(s);
  if (nchw(s)) {
    const int64_t hw = plane(s), runs = s.n * s.c;
    parallel_for(runs, threads_for(bytes, kBytesPerThread, runs), [&](int64_t r) {
      const int64_t c = r % s.c;
      const float m = mean[c], k = scale[c], b = beta[c];
      const float* x = in + r * hw;
      const float* res = residual ? residual + r * hw : nullptr;
      float* o = out + r * hw;
#pragma omp simd
      for (int64_t i = 0; i < hw; ++i) {
        float v = (x[i] - m) * k + b;
        if (res) v += res[i];
        o[i] = relu ? (v <= 0.f ? 0.f : v) : v;
      }
    });
    return;
  }
  const int64_t M = s.count(), C = s.c, per = std::max<int64_t>(1, kTaskElems / C), tasks = (M + per - 1) / per;
  parallel_for(tasks, threads_for(bytes, kBytesPerThread, tasks), [&](int64_t t) {
    for (int64_t m = t * per; m < std::min(M, (t + 1) * per); ++m) {
      const float* x = in + m * C;
      const float* res = residual ? residual + m * C : nullptr;
      float* o = out + m * C;
#pragma omp simd
      for (int64_t c = 0; c < C; ++c) {
        float v = (x[c] - mean[c]) * scale[c] + beta[c];
        if (res) v += res[c];
        o[c] = relu ? (v <= 0.f ? 0.f : v) : v;
      }
    }
  });
}

}  // namespace

void batchnorm_forward_train(const ops::BatchNormShape& s, float* out, const float* in, const float* residual,
                             const float* gamma, const float* beta, float* running_mean, float* running_var,
                             float* save_mean, float* save_invstd) {
  const int64_t C = s.c;
  // The shift of channel c: its first element (image 0, row 0, column 0).
  std::vector<float>& prm = channel_scratch(size_t(4 * C));  // shift (c), then mean, scale, beta for normalize
  float* shift = prm.data() + 3 * C;
  for (int64_t c = 0; c < C; ++c) shift[c] = nchw(s) ? in[c * plane(s)] : in[c];
  std::vector<double> sums(size_t(2 * C));
  channel_sums(
      s, 4.0,
      [&](int64_t c, int64_t off, int64_t len, float& a1, float& a2) {
        const float k = shift[c];
        const float* x = in + off;
        float t1 = 0, t2 = 0;
#pragma omp simd reduction(+ : t1, t2)
        for (int64_t i = 0; i < len; ++i) {
          const float d = x[i] - k;
          t1 += d;
          t2 += d * d;
        }
        a1 += t1;
        a2 += t2;
      },
      [&](int64_t m0, int64_t m1, float* a1, float* a2) {
        for (int64_t m = m0; m < m1; ++m) {
          const float* x = in + m * C;
#pragma omp simd
          for (int64_t c = 0; c < C; ++c) {
            const float d = x[c] - shift[c];
            a1[c] += d;
            a2[c] += d * d;
          }
        }
      },
      sums.data(), sums.data() + C);
  const double count = double(s.count()), mom = s.momentum;
  for (int64_t c = 0; c < C; ++c) {
    const double m1 = sums[size_t(c)] / count;
    const double var = std::max(0.0, sums[size_t(C + c)] / count - m1 * m1);
    const double mean = double(shift[c]) + m1;
    const double invstd = 1.0 / std::sqrt(var + double(s.eps));
    save_mean[c] = float(mean);
    save_invstd[c] = float(invstd);
    running_mean[c] = float((1 - mom) * double(running_mean[c]) + mom * mean);
    running_var[c] = float((1 - mom) * double(running_var[c]) + mom * var * count / (count - 1));
    prm[size_t(c)] = float(mean);
    prm[size_t(C + c)] = float(double(gamma[c]) * invstd);
    prm[size_t(2 * C + c)] = beta[c];
  }
  normalize(s, out, in, s.residual ? residual : nullptr, prm.data());
}

void batchnorm_forward_eval(const ops::BatchNormShape& s, float* out, const float* in, const float* residual,
                            const float* gamma, const float* beta, const float* running_mean,
                            const float* running_var) {
  const int64_t C = s.c;
  std::vector<float>& prm = channel_scratch(size_t(3 * C));
  for (int64_t c = 0; c < C; ++c) {
    prm[size_t(c)] = running_mean[c];
    prm[size_t(C + c)] = gamma[c] * (1.0f / std::sqrt(running_var[c] + s.eps));
    prm[size_t(2 * C + c)] = beta[c];
  }
  normalize(s, out, in, s.residual ? residual : nullptr, prm.data());
}

void batchnorm_backward(const ops::BatchNormShape& s, float* din, float* dgamma, float* dbeta, float* dout,
                        const float* out, const float* in, const float* gamma, const float* save_mean,
                        const float* save_invstd) {
  const int64_t C = s.c;
  const bool relu = s.act == ops::Activation::ReLU;
  std::vector<double> sums(size_t(2 * C));
  // Sweep 1: dpre in place, Σ dpre and Σ dpre·(x − mean).
  channel_sums(
      s, relu ? 16.0 : 8.0,
      [&](int64_t c, int64_t off, int64_t len, float& a1, float& a2) {
        const float m = save_mean[c];
        const float* x = in + off;
        const float* y = out + off;
        float* g = dout + off;
        float t1 = 0, t2 = 0;
#pragma omp simd reduction(+ : t1, t2)
        for (int64_t i = 0; i < len; ++i) {
          const float v = relu ? (y[i] > 0.f ? g[i] : 0.f) : g[i];
          if (relu) g[i] = v;
          t1 += v;
          t2 += v * (x[i] - m);
        }
        a1 += t1;
        a2 += t2;
      },
      [&](int64_t m0, int64_t m1, float* a1, float* a2) {
        for (int64_t r = m0; r < m1; ++r) {
          const float* x = in + r * C;
          const float* y = out + r * C;
          float* g = dout + r * C;
#pragma omp simd
          for (int64_t c = 0; c < C; ++c) {
            const float v = relu ? (y[c] > 0.f ? g[c] : 0.f) : g[c];
            if (relu) g[c] = v;
            a1[c] += v;
            a2[c] += v * (x[c] - save_mean[c]);
          }
        }
      },
      sums.data(), sums.data() + C);
  // din = A·(dpre − b) + B·(x − mean): A = gamma·invstd, b = dbeta/count,
  // B = −gamma·invstd²·dgamma/count.
  const double count = double(s.count());
  std::vector<float>& k = channel_scratch(size_t(4 * C));  // A, b, B, mean
  for (int64_t c = 0; c < C; ++c) {
    const double invstd = save_invstd[c], db = sums[size_t(c)], dg = sums[size_t(C + c)] * invstd;
    dbeta[c] = float(db);
    dgamma[c] = float(dg);
    k[size_t(c)] = float(double(gamma[c]) * invstd);
    k[size_t(C + c)] = float(db / count);
    k[size_t(2 * C + c)] = float(-double(gamma[c]) * invstd * invstd * dg / count);
    k[size_t(3 * C + c)] = save_mean[c];
  }
  const float* A = k.data();
  const float* b = k.data() + C;
  const float* B = k.data() + 2 * C;
  const float* mean = k.data() + 3 * C;
  const double bytes = 12.0 * elements(s);
  if (nchw(s)) {
    const int64_t hw = plane(s), runs = s.n * C;
    parallel_for(runs, threads_for(bytes, kBytesPerThread, runs), [&](int64_t r) {
      const int64_t c = r % C;
      const float a = A[c], bb = b[c], b2 = B[c], m = mean[c];
      const float* g = dout + r * hw;
      const float* x = in + r * hw;
      float* d = din + r * hw;
#pragma omp simd
      for (int64_t i = 0; i < hw; ++i) d[i] = a * (g[i] - bb) + b2 * (x[i] - m);
    });
    return;
  }
  const int64_t M = s.count(), per = std::max<int64_t>(1, kTaskElems / C), tasks = (M + per - 1) / per;
  parallel_for(tasks, threads_for(bytes, kBytesPerThread, tasks), [&](int64_t t) {
    for (int64_t r = t * per; r < std::min(M, (t + 1) * per); ++r) {
      const float* g = dout + r * C;
      const float* x = in + r * C;
      float* d = din + r * C;
#pragma omp simd
      for (int64_t c = 0; c < C; ++c) d[c] = A[c] * (g[c] - b[c]) + B[c] * (x[c] - mean[c]);
    }
  });
}

}  // namespace roofline::engine::fast

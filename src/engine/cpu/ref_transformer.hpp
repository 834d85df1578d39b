// The transformer ops' reference loops (ops_transformer.hpp), written to be
// obviously correct, templated on the element type as ref_ops.hpp: float is
// the CpuRef backend, double the harness's reference. Every buffer here is of
// type T (the tables and LayerNorm's gamma and beta too).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "roofline/engine/ops_transformer.hpp"

namespace roofline::engine::ref {

// out (tokens, hidden) = word[ids] + pos[positions] + type[type_ids]
template <class T>
void embeddings_forward(const ops::EmbeddingShape& s, T* out, const std::int32_t* ids, const std::int32_t* positions,
                        const std::int32_t* type_ids, const T* word, const T* pos, const T* type) {
  for (std::int64_t t = 0; t < s.tokens; ++t)
    for (std::int64_t j = 0; j < s.hidden; ++j)
      out[t * s.hidden + j] = word[std::int64_t(ids[t]) * s.hidden + j] +
                              pos[std::int64_t(positions[t]) * s.hidden + j] +
                              type[std::int64_t(type_ids[t]) * s.hidden + j];
}

template <class T>
void embeddings_backward(const ops::EmbeddingShape& s, T* dword, T* dpos, T* dtype, const T* dout,
                         const std::int32_t* ids, const std::int32_t* positions, const std::int32_t* type_ids) {
  for (std::int64_t i = 0; i < s.vocab * s.hidden; ++i) dword[i] = 0;
  for (std::int64_t i = 0; i < s.positions * s.hidden; ++i) dpos[i] = 0;
  for (std::int64_t i = 0; i < s.types * s.hidden; ++i) dtype[i] = 0;
  for (std::int64_t t = 0; t < s.tokens; ++t)
    for (std::int64_t j = 0; j < s.hidden; ++j) {
      const T g = dout[t * s.hidden + j];
      dword[std::int64_t(ids[t]) * s.hidden + j] += g;
      dpos[std::int64_t(positions[t]) * s.hidden + j] += g;
      dtype[std::int64_t(type_ids[t]) * s.hidden + j] += g;
    }
  if (s.padding_idx >= 0)
    for (std::int64_t j = 0; j < s.hidden; ++j) dword[s.padding_idx * s.hidden + j] = 0;
}

// out (rows, cols) = LN(in + residual) · gamma + beta; mean, rstd (rows) or null
template <class T>
void layernorm_forward(const ops::LayerNormShape& s, T* out, T* mean, T* rstd, const T* in, const T* residual,
                       const T* gamma, const T* beta) {
  std::vector<T> x(static_cast<size_t>(s.cols));
  for (std::int64_t r = 0; r < s.rows; ++r) {
    T m = 0;
    for (std::int64_t j = 0; j < s.cols; ++j) {
      x[j] = in[r * s.cols + j] + (residual ? residual[r * s.cols + j] : T(0));
      m += x[j];
    }
    m /= T(s.cols);
    T var = 0;
    for (std::int64_t j = 0; j < s.cols; ++j) var += (x[j] - m) * (x[j] - m);
    var /= T(s.cols);  // biased, as torch.nn.LayerNorm
    const T rs = T(1) / std::sqrt(var + T(s.eps));
    for (std::int64_t j = 0; j < s.cols; ++j) out[r * s.cols + j] = (x[j] - m) * rs * gamma[j] + beta[j];
    if (mean) mean[r] = m;
    if (rstd) rstd[r] = rs;
  }
}

// din, dgamma, dbeta from dout and the forward's inputs and statistics (ops_transformer.hpp).
template <class T>
void layernorm_backward(const ops::LayerNormShape& s, T* din, T* dgamma, T* dbeta, const T* dout, const T* in,
                        const T* residual, const T* gamma, const T* mean, const T* rstd) {
  for (std::int64_t j = 0; j < s.cols; ++j) dgamma[j] = dbeta[j] = T(0);
  for (std::int64_t r = 0; r < s.rows; ++r) {
    T sum_g = 0, sum_gx = 0;
    for (std::int64_t j = 0; j < s.cols; ++j) {
      const std::int64_t i = r * s.cols + j;
      const T xh = (in[i] + (residual ? residual[i] : T(0)) - mean[r]) * rstd[r];
      const T g = dout[i] * gamma[j];
      sum_g += g;
      sum_gx += g * xh;
      dgamma[j] += dout[i] * xh;
      dbeta[j] += dout[i];
    }
    for (std::int64_t j = 0; j < s.cols; ++j) {
      const std::int64_t i = r * s.cols + j;
      const T xh = (in[i] + (residual ? residual[i] : T(0)) - mean[r]) * rstd[r];
      din[i] = rstd[r] * (dout[i] * gamma[j] - sum_g / T(s.cols) - xh * sum_gx / T(s.cols));
    }
  }
}

template <class T>
T gelu(T x) {
  return T(0.5) * x * (T(1) + std::erf(x / std::sqrt(T(2))));
}

template <class T>
void gelu_forward(const ops::GeluShape& s, T* out, const T* in) {
  for (std::int64_t i = 0; i < s.n; ++i) out[i] = gelu(in[i]);
}

template <class T>
T gelu_grad(T x) {  // Φ(x) + x·φ(x)
  const T pi = T(3.14159265358979323846);
  return T(0.5) * (T(1) + std::erf(x / std::sqrt(T(2)))) + x * std::exp(-x * x / T(2)) / std::sqrt(T(2) * pi);
}

template <class T>
void gelu_backward(const ops::GeluShape& s, T* din, const T* dout, const T* in) {
  for (std::int64_t i = 0; i < s.n; ++i) din[i] = dout[i] * gelu_grad(in[i]);
}

// out (tokens, heads·d), lse (heads, tokens) or null, from qkv (tokens, 3·heads·d)
template <class T>
void attention_forward(const ops::AttentionShape& s, T* out, T* lse, const T* qkv, const std::int32_t* start,
                       const std::int32_t* len) {
  const std::int64_t d = s.head_dim, hd = s.heads * d, row = 3 * hd;
  const T scale = T(1) / std::sqrt(T(d));
  std::vector<T> p;
  for (std::int64_t b = 0; b < s.batch; ++b) {
    const std::int64_t t0 = start[b], n = len[b], queries = s.padded > 0 ? s.padded : n;
    p.assign(static_cast<size_t>(n), T(0));
    for (std::int64_t h = 0; h < s.heads; ++h)
      for (std::int64_t i = 0; i < queries; ++i) {
        const T* q = qkv + (t0 + i) * row + h * d;
        T mx = -std::numeric_limits<T>::infinity();
        for (std::int64_t j = 0; j < n; ++j) {
          const T* k = qkv + (t0 + j) * row + hd + h * d;
          T dot = 0;
          for (std::int64_t c = 0; c < d; ++c) dot += q[c] * k[c];
          p[j] = dot * scale;
          mx = std::max(mx, p[j]);
        }
        T sum = 0;
        for (std::int64_t j = 0; j < n; ++j) {
          p[j] = std::exp(p[j] - mx);
          sum += p[j];
        }
        T* o = out + (t0 + i) * hd + h * d;
        for (std::int64_t c = 0; c < d; ++c) o[c] = 0;
        for (std::int64_t j = 0; j < n; ++j) {
          const T* v = qkv + (t0 + j) * row + 2 * hd + h * d;
          for (std::int64_t c = 0; c < d; ++c) o[c] += p[j] / sum * v[c];
        }
        if (lse) lse[h * s.tokens + t0 + i] = mx + std::log(sum);
      }
  }
}

// dqkv (tokens, 3·heads·d) from dout, qkv, out (tokens, heads·d) and lse (heads, tokens)
template <class T>
void attention_backward(const ops::AttentionShape& s, T* dqkv, const T* dout, const T* qkv, const T* out,
                        const T* lse, const std::int32_t* start, const std::int32_t* len) {
  const std::int64_t d = s.head_dim, hd = s.heads * d, row = 3 * hd;
  const T scale = T(1) / std::sqrt(T(d));
  for (std::int64_t i = 0; i < s.tokens * row; ++i) dqkv[i] = 0;
  for (std::int64_t b = 0; b < s.batch; ++b) {
    const std::int64_t t0 = start[b], n = len[b], queries = s.padded > 0 ? s.padded : n;
    for (std::int64_t h = 0; h < s.heads; ++h)
      for (std::int64_t i = 0; i < queries; ++i) {
        const T* q = qkv + (t0 + i) * row + h * d;
        const T* o = out + (t0 + i) * hd + h * d;
        const T* g = dout + (t0 + i) * hd + h * d;
        T di = 0;
        for (std::int64_t c = 0; c < d; ++c) di += g[c] * o[c];
        for (std::int64_t j = 0; j < n; ++j) {
          const T* k = qkv + (t0 + j) * row + hd + h * d;
          const T* v = qkv + (t0 + j) * row + 2 * hd + h * d;
          T dot = 0, dp = 0;
          for (std::int64_t c = 0; c < d; ++c) dot += q[c] * k[c], dp += g[c] * v[c];
          const T p = std::exp(dot * scale - lse[h * s.tokens + t0 + i]);
          const T ds = p * (dp - di);
          T* dq = dqkv + (t0 + i) * row + h * d;
          T* dk = dqkv + (t0 + j) * row + hd + h * d;
          T* dv = dqkv + (t0 + j) * row + 2 * hd + h * d;
          for (std::int64_t c = 0; c < d; ++c) {
            dv[c] += p * g[c];
            dq[c] += scale * ds * k[c];
            dk[c] += scale * ds * q[c];
          }
        }
      }
  }
}

template <class T>
void span_loss(const ops::SpanLossShape& s, T* loss, T* dlogits, const T* logits, const std::int32_t* start_pos,
               const std::int32_t* end_pos) {
  T total = 0;
  for (std::int64_t b = 0; b < s.batch; ++b)
    for (int which = 0; which < 2; ++which) {
      const T* x = logits + b * s.seq * 2 + which;
      const std::int64_t target = which == 0 ? start_pos[b] : end_pos[b];
      T m = x[0];
      for (std::int64_t j = 1; j < s.seq; ++j) m = std::max(m, x[2 * j]);
      T sum = 0;
      for (std::int64_t j = 0; j < s.seq; ++j) sum += std::exp(x[2 * j] - m);
      const T lse = m + std::log(sum);
      total += lse - x[2 * target];
      const T g = T(1) / T(2 * s.batch);
      for (std::int64_t j = 0; j < s.seq; ++j)
        dlogits[b * s.seq * 2 + 2 * j + which] = g * (std::exp(x[2 * j] - lse) - (j == target ? T(1) : T(0)));
    }
  if (loss) *loss = total / T(2 * s.batch);
}

}  // namespace roofline::engine::ref

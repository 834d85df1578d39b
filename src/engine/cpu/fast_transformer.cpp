// The transformer ops on the fast CPU path (ops_transformer.hpp), fp32:
// threads over rows (embeddings, LayerNorm, GELU) and over (sequence, head,
// block of queries) for attention, whose loops run along contiguous memory
// (keys transposed once per block) so that the compiler vectorises them.
// Results do not depend on the thread count: every task writes its own rows.
#include "src/engine/cpu/fast_transformer.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "src/engine/cpu/parallel.hpp"

namespace roofline::engine::fast {

using std::int64_t;

void embeddings_forward(const ops::EmbeddingShape& s, float* out, const std::int32_t* ids,
                        const std::int32_t* positions, const std::int32_t* type_ids, const float* word,
                        const float* pos, const float* type) {
  parallel_for(s.tokens, threads_for(double(s.tokens * s.hidden) * 16, kBytesPerThread, s.tokens), [&](int64_t t) {
    const float* w = word + int64_t(ids[t]) * s.hidden;
    const float* p = pos + int64_t(positions[t]) * s.hidden;
    const float* y = type + int64_t(type_ids[t]) * s.hidden;
    float* o = out + t * s.hidden;
    for (int64_t j = 0; j < s.hidden; ++j) o[j] = w[j] + p[j] + y[j];
  });
}

void embeddings_backward(const ops::EmbeddingShape& s, float* dword, float* dpos, float* dtype, const float* dout,
                         const std::int32_t* ids, const std::int32_t* positions, const std::int32_t* type_ids) {
  std::fill_n(dword, s.vocab * s.hidden, 0.0f);
  std::fill_n(dpos, s.positions * s.hidden, 0.0f);
  std::fill_n(dtype, s.types * s.hidden, 0.0f);
  // Threads over blocks of columns, each adding its columns for every token in order: no two threads write
  // one element, and the sums are the reference's, in its order.
  constexpr int64_t kCols = 64;
  const int64_t blocks = (s.hidden + kCols - 1) / kCols;
  parallel_for(blocks, threads_for(double(s.tokens * s.hidden) * 16, kBytesPerThread, blocks), [&](int64_t b) {
    const int64_t j0 = b * kCols, j1 = std::min(s.hidden, j0 + kCols);
    for (int64_t t = 0; t < s.tokens; ++t) {
      const float* g = dout + t * s.hidden;
      float* w = dword + int64_t(ids[t]) * s.hidden;
      float* p = dpos + int64_t(positions[t]) * s.hidden;
      float* y = dtype + int64_t(type_ids[t]) * s.hidden;
      for (int64_t j = j0; j < j1; ++j) w[j] += g[j], p[j] += g[j], y[j] += g[j];
    }
  });
  if (s.padding_idx >= 0) std::fill_n(dword + s.padding_idx * s.hidden, s.hidden, 0.0f);
}

void layernorm_forward(const ops::LayerNormShape& s, float* out, float* mean, float* rstd, const float* in,
                       const float* residual, const float* gamma, const float* beta) {
  parallel_for(s.rows, threads_for(double(s.rows * s.cols) * 12, kBytesPerThread, s.rows), [&](int64_t r) {
    const float* a = in + r * s.cols;
    const float* b = residual ? residual + r * s.cols : nullptr;
    float* o = out + r * s.cols;
    // x = in + residual into out first (out may alias either input: each element is read before written).
    double sum = 0;
    for (int64_t j = 0; j < s.cols; ++j) {
      const float x = b ? a[j] + b[j] : a[j];
      o[j] = x;
      sum += x;
    }
    const float m = static_cast<float>(sum / double(s.cols));
    double var = 0;
    for (int64_t j = 0; j < s.cols; ++j) var += double(o[j] - m) * double(o[j] - m);
    const float rs = static_cast<float>(1.0 / std::sqrt(var / double(s.cols) + double(s.eps)));
    for (int64_t j = 0; j < s.cols; ++j) o[j] = (o[j] - m) * rs * gamma[j] + beta[j];
    if (mean) mean[r] = m;
    if (rstd) rstd[r] = rs;
  });
}

void gelu_forward(const ops::GeluShape& s, float* out, const float* in) {
  constexpr int64_t kChunk = 4096;
  const int64_t chunks = (s.n + kChunk - 1) / kChunk;
  parallel_for(chunks, threads_for(double(s.n), kElementsPerThread, chunks), [&](int64_t c) {
    const int64_t e = std::min(s.n, (c + 1) * kChunk);
    for (int64_t i = c * kChunk; i < e; ++i) out[i] = 0.5f * in[i] * (1.0f + std::erf(in[i] * 0.70710678118654752f));
  });
}

void layernorm_backward(const ops::LayerNormShape& s, float* din, float* dgamma, float* dbeta, const float* dout,
                        const float* in, const float* residual, const float* gamma, const float* mean,
                        const float* rstd) {
  auto xhat = [&](int64_t r, int64_t j) {
    const int64_t i = r * s.cols + j;
    return (in[i] + (residual ? residual[i] : 0.0f) - mean[r]) * rstd[r];
  };
  // din: threads over rows. dgamma, dbeta: threads over blocks of columns, each summing its columns over every
  // row in order (the same bits whatever the thread count).
  parallel_for(s.rows, threads_for(double(s.rows * s.cols) * 16, kBytesPerThread, s.rows), [&](int64_t r) {
    double sum_g = 0, sum_gx = 0;
    for (int64_t j = 0; j < s.cols; ++j) {
      const float g = dout[r * s.cols + j] * gamma[j];
      sum_g += g;
      sum_gx += double(g) * xhat(r, j);
    }
    const float mg = static_cast<float>(sum_g / double(s.cols)), mgx = static_cast<float>(sum_gx / double(s.cols));
    for (int64_t j = 0; j < s.cols; ++j)
      din[r * s.cols + j] = rstd[r] * (dout[r * s.cols + j] * gamma[j] - mg - xhat(r, j) * mgx);
  });
  constexpr int64_t kCols = 64;
  const int64_t blocks = (s.cols + kCols - 1) / kCols;
  parallel_for(blocks, threads_for(double(s.rows * s.cols) * 12, kBytesPerThread, blocks), [&](int64_t b) {
    const int64_t j0 = b * kCols, j1 = std::min(s.cols, j0 + kCols);
    std::vector<double> g(static_cast<size_t>(j1 - j0), 0.0), be(static_cast<size_t>(j1 - j0), 0.0);
    for (int64_t r = 0; r < s.rows; ++r)
      for (int64_t j = j0; j < j1; ++j) {
        g[size_t(j - j0)] += double(dout[r * s.cols + j]) * xhat(r, j);
        be[size_t(j - j0)] += dout[r * s.cols + j];
      }
    for (int64_t j = j0; j < j1; ++j) {
      dgamma[j] = static_cast<float>(g[size_t(j - j0)]);
      dbeta[j] = static_cast<float>(be[size_t(j - j0)]);
    }
  });
}

void gelu_backward(const ops::GeluShape& s, float* din, const float* dout, const float* in) {
  constexpr int64_t kChunk = 4096;
  const int64_t chunks = (s.n + kChunk - 1) / kChunk;
  parallel_for(chunks, threads_for(double(s.n), kElementsPerThread, chunks), [&](int64_t c) {
    const int64_t e = std::min(s.n, (c + 1) * kChunk);
    for (int64_t i = c * kChunk; i < e; ++i) {
      const float x = in[i];
      const float d = 0.5f * (1.0f + std::erf(x * 0.70710678118654752f)) + x * 0.39894228040143268f * std::exp(-0.5f * x * x);
      din[i] = dout[i] * d;
    }
  });
}

namespace {
constexpr int64_t kQueryBlock = 32;  // query rows a task: the transposed keys are reused by all of them
}

void attention_forward(const ops::AttentionShape& s, float* out, float* lse, const float* qkv,
                       const std::int32_t* start, const std::int32_t* len) {
  const int64_t d = s.head_dim, hd = s.heads * d, row = 3 * hd;
  const float scale = 1.0f / std::sqrt(float(d));
  // Tasks: (sequence, head, block of queries).
  std::vector<int64_t> first_task(static_cast<size_t>(s.batch) + 1, 0);
  for (int64_t b = 0; b < s.batch; ++b) {
    const int64_t queries = s.padded > 0 ? s.padded : len[b];
    first_task[b + 1] = first_task[b] + s.heads * ((queries + kQueryBlock - 1) / kQueryBlock);
  }
  const int64_t tasks = first_task[s.batch];
  const double flops = s.cost().forward.flops;
  parallel_for(tasks, threads_for(flops, kFlopsPerThread, tasks), [&](int64_t task) {
    const int64_t b = std::upper_bound(first_task.begin(), first_task.end(), task) - first_task.begin() - 1;
    const int64_t queries = s.padded > 0 ? s.padded : len[b];
    const int64_t blocks = (queries + kQueryBlock - 1) / kQueryBlock, local = task - first_task[b];
    const int64_t h = local / blocks, q0 = (local % blocks) * kQueryBlock, q1 = std::min(queries, q0 + kQueryBlock);
    const int64_t t0 = start[b], n = len[b];
    thread_local std::vector<float> kt, p;
    kt.resize(static_cast<size_t>(d * n));
    p.resize(static_cast<size_t>(n));
    for (int64_t j = 0; j < n; ++j) {
      const float* k = qkv + (t0 + j) * row + hd + h * d;
      for (int64_t c = 0; c < d; ++c) kt[c * n + j] = k[c];
    }
    for (int64_t i = q0; i < q1; ++i) {
      const float* q = qkv + (t0 + i) * row + h * d;
      std::fill(p.begin(), p.end(), 0.0f);
      for (int64_t c = 0; c < d; ++c) {
        const float qc = q[c] * scale;
        const float* kc = kt.data() + c * n;
        for (int64_t j = 0; j < n; ++j) p[j] += qc * kc[j];
      }
      float mx = -std::numeric_limits<float>::infinity();
      for (int64_t j = 0; j < n; ++j) mx = std::max(mx, p[j]);
      float sum = 0;
      for (int64_t j = 0; j < n; ++j) {
        p[j] = std::exp(p[j] - mx);
        sum += p[j];
      }
      const float inv = 1.0f / sum;
      float* o = out + (t0 + i) * hd + h * d;
      for (int64_t c = 0; c < d; ++c) o[c] = 0;
      for (int64_t j = 0; j < n; ++j) {
        const float pj = p[j] * inv;
        const float* v = qkv + (t0 + j) * row + 2 * hd + h * d;
        for (int64_t c = 0; c < d; ++c) o[c] += pj * v[c];
      }
      if (lse) lse[h * s.tokens + t0 + i] = mx + std::log(sum);
    }
  });
}

void attention_backward(const ops::AttentionShape& s, float* dqkv, const float* dout, const float* qkv,
                        const float* out, const float* lse, const std::int32_t* start, const std::int32_t* len) {
  const int64_t d = s.head_dim, hd = s.heads * d, row = 3 * hd;
  const float scale = 1.0f / std::sqrt(float(d));
  // Rows no sequence covers (none in the engine's batches) are zero too.
  std::fill_n(dqkv, s.tokens * row, 0.0f);
  // A task per (sequence, head): it alone writes that head's q, k and v columns of the sequence's rows.
  const int64_t tasks = s.batch * s.heads;
  parallel_for(tasks, threads_for(s.cost().input_grad.flops, kFlopsPerThread, tasks), [&](int64_t task) {
    const int64_t b = task / s.heads, h = task % s.heads;
    const int64_t t0 = start[b], n = len[b], queries = s.padded > 0 ? s.padded : n;
    thread_local std::vector<float> p;
    p.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < queries; ++i) {
      const float* q = qkv + (t0 + i) * row + h * d;
      const float* o = out + (t0 + i) * hd + h * d;
      const float* g = dout + (t0 + i) * hd + h * d;
      float di = 0;
      for (int64_t c = 0; c < d; ++c) di += g[c] * o[c];
      const float l = lse[h * s.tokens + t0 + i];
      float* dq = dqkv + (t0 + i) * row + h * d;
      for (int64_t j = 0; j < n; ++j) {
        const float* k = qkv + (t0 + j) * row + hd + h * d;
        const float* v = qkv + (t0 + j) * row + 2 * hd + h * d;
        float dot = 0, dp = 0;
        for (int64_t c = 0; c < d; ++c) dot += q[c] * k[c], dp += g[c] * v[c];
        const float pj = std::exp(dot * scale - l);
        const float ds = scale * pj * (dp - di);
        float* dk = dqkv + (t0 + j) * row + hd + h * d;
        float* dv = dqkv + (t0 + j) * row + 2 * hd + h * d;
        for (int64_t c = 0; c < d; ++c) {
          dv[c] += pj * g[c];
          dq[c] += ds * k[c];
          dk[c] += ds * q[c];
        }
      }
    }
  });
}

}  // namespace roofline::engine::fast

// The small ops on the CPU: vectorised loops (one clone per ISA, picked at
// load time), threads only where the bytes pay for them (parallel.hpp), and
// every reduction in a fixed order so results do not depend on the thread
// count. The batch gather and max-pool repeat the reference's float
// arithmetic and comparison order exactly (same values, same argmax).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "src/engine/cpu/fast_ops.hpp"
#include "src/engine/cpu/parallel.hpp"
#include "src/engine/cpu/ref_ops.hpp"

namespace roofline::engine::fast {

#define ROOFLINE_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))

using std::int64_t;

namespace {

// Elementwise work in chunks of 4096 elements (16 KiB of floats, whole cache lines).
constexpr int64_t kChunk = 4096;
int64_t chunks_of(int64_t n) { return (n + kChunk - 1) / kChunk; }

// ---- max-pool -------------------------------------------------------------------------
// Row by row of the window, then across the rows: the same winner as the
// reference's raster scan (a later value wins when it is strictly greater or
// NaN, so the first maximum and the last NaN win), because that rule combines
// the same way over a row's fold as over single values.
// ST > 0: the stride as a compile-time constant (the models' pools have stride = kernel),
// so the vectorizer loads whole rows and shuffles instead of gathering x * st;
// ST = 0: the stride `st` given at run time.
//
// No AVX-512 clone: the models' pooled rows are 4-40 outputs wide, and a 16-lane
// main loop never ran on the 12-wide rows of simple-cnn's first pool, which all
// went through the scalar, branchy remainder (1.7 us per 24x24 plane on the GPU
// host, 2026-11-24); 8 lanes cover them.
#define ROOFLINE_CLONES_NARROW __attribute__((target_clones("avx2", "default")))
template <int K, int ST>
ROOFLINE_CLONES_NARROW void pool_plane_k(const float* __restrict ip, float* __restrict o, std::int32_t* __restrict a,
                                  int64_t W, int64_t OH, int64_t OW, int64_t st_runtime) {
  const int64_t st = ST > 0 ? ST : st_runtime;
  for (int64_t y = 0; y < OH; ++y) {
    float* oy = o + y * OW;
    std::int32_t* ay = a + y * OW;
    for (int64_t r = 0; r < K; ++r) {
      const int64_t row = (y * st + r) * W;
      const float* src = ip + row;
#pragma omp simd
      for (int64_t x = 0; x < OW; ++x) {
        const float* w = src + x * st;
        float m = w[0];
        int q = 0;
        for (int j = 1; j < K; ++j) {
          const float v = w[j];
          const bool take = v > m || v != v;
          m = take ? v : m;
          q = take ? j : q;
        }
        const std::int32_t idx = static_cast<std::int32_t>(row + x * st + q);
        if (r == 0) {
          oy[x] = m;
          ay[x] = idx;
        } else {
          const bool take = m > oy[x] || m != m;
          oy[x] = take ? m : oy[x];
          ay[x] = take ? idx : ay[x];
        }
      }
    }
  }
}

void pool_plane_any(const ops::Pool2dShape& s, const float* ip, float* o, std::int32_t* a) {
  const int64_t OH = s.oh(), OW = s.ow();
  for (int64_t y = 0; y < OH; ++y)
    for (int64_t x = 0; x < OW; ++x) {
      int64_t best = (y * s.stride) * s.w + x * s.stride;
      float m = ip[best];
      for (int64_t r = 0; r < s.kernel; ++r)
        for (int64_t q = 0; q < s.kernel; ++q) {
          const int64_t idx = (y * s.stride + r) * s.w + x * s.stride + q;
          const float v = ip[idx];
          if (v > m || std::isnan(v)) {
            m = v;
            best = idx;
          }
        }
      o[y * OW + x] = m;
      a[y * OW + x] = static_cast<std::int32_t>(best);
    }
}

// ---- batch gather ---------------------------------------------------------------------
// Bilinear resize as the reference computes it (resize_sample), split into a
// horizontal pass over the source rows and a vertical pass: each output is
// the same float expression of the same values, so the results are equal.
struct ResizeTables {
  std::vector<int64_t> y0, y1, x0, x1;
  std::vector<float> fy, fx;
};

void axis_table(int64_t in, int64_t out, std::vector<int64_t>& lo, std::vector<int64_t>& hi, std::vector<float>& f) {
  lo.resize(static_cast<size_t>(out));
  hi.resize(static_cast<size_t>(out));
  f.resize(static_cast<size_t>(out));
  const float scale = static_cast<float>(in) / static_cast<float>(out);
  for (int64_t o = 0; o < out; ++o) {
    float sv = (static_cast<float>(o) + 0.5f) * scale - 0.5f;
    if (sv < 0) sv = 0;
    const int64_t l = static_cast<int64_t>(sv);
    lo[static_cast<size_t>(o)] = l;
    hi[static_cast<size_t>(o)] = l + 1 < in ? l + 1 : in - 1;
    f[static_cast<size_t>(o)] = sv - static_cast<float>(l);
  }
}

ROOFLINE_CLONES void normalize_row(float* __restrict x, const std::uint8_t* __restrict img, int64_t n, float mean,
                                   float inv_std) {
  const float k = static_cast<float>(1.0 / 255.0);
#pragma omp simd
  for (int64_t j = 0; j < n; ++j) x[j] = (static_cast<float>(img[j]) * k - mean) * inv_std;
}

ROOFLINE_CLONES void resize_image(float* __restrict x, const std::uint8_t* __restrict img, const ops::BatchShape& s,
                                  const ResizeTables& t, float* __restrict h /* (in_h, out_w) */) {
  const int64_t* x0 = t.x0.data();
  const int64_t* x1 = t.x1.data();
  const float* fx = t.fx.data();
  for (int64_t y = 0; y < s.in_h; ++y) {
    const std::uint8_t* row = img + y * s.in_w;
    float* hy = h + y * s.out_w;
    for (int64_t ox = 0; ox < s.out_w; ++ox)
      hy[ox] = static_cast<float>(row[x0[ox]]) * (1 - fx[ox]) + static_cast<float>(row[x1[ox]]) * fx[ox];
  }
  const float k = static_cast<float>(1.0 / 255.0);
  for (int64_t oy = 0; oy < s.out_h; ++oy) {
    const float* top = h + t.y0[static_cast<size_t>(oy)] * s.out_w;
    const float* bot = h + t.y1[static_cast<size_t>(oy)] * s.out_w;
    const float fy = t.fy[static_cast<size_t>(oy)];
    float* xo = x + oy * s.out_w;
#pragma omp simd
    for (int64_t ox = 0; ox < s.out_w; ++ox) {
      const float v = top[ox] * (1 - fy) + bot[ox] * fy;
      xo[ox] = (v * k - s.mean) * s.inv_std;
    }
  }
}

ROOFLINE_CLONES void relu_chunk(float* __restrict out, const float* __restrict in, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) out[i] = in[i] <= 0.f ? 0.f : in[i];  // keeps NaN, as torch.relu
}

ROOFLINE_CLONES void relu_grad_chunk(float* din, const float* dout, const float* out, int64_t n) {
  // din may alias dout (the layers mask the gradient in place)
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) din[i] = out[i] > 0.f ? dout[i] : 0.f;
}

// No multiply-add contraction here: an element's update must not depend on
// whether it falls in the vector body or the tail of a call (GCC contracted one
// and not the other), since linear_backward_weight_sgd updates a layer's rows in
// spans that start and end elsewhere than sgd_update's chunks.
#pragma GCC push_options
#pragma GCC optimize("fp-contract=off")
ROOFLINE_CLONES void sgd_chunk(float* __restrict p, const float* __restrict g, float* __restrict buf, int64_t n,
                               float lr, float mom, float wd, bool momentum) {
  if (momentum) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) {
      const float d = g[i] + wd * p[i];
      const float m = mom * buf[i] + d;
      buf[i] = m;
      p[i] = p[i] - lr * m;
    }
  } else {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) p[i] = p[i] - lr * (g[i] + wd * p[i]);
  }
}
#pragma GCC pop_options

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

void maxpool2d_forward(const ops::Pool2dShape& s, float* out, std::int32_t* argmax, const float* in) {
  const int64_t OH = s.oh(), OW = s.ow(), planes = s.n * s.c;
  // A window's compares and selects, not its bytes, set the time (~1 ns per output
  // on the narrow rows of the models' pools).
  const int threads = std::max(threads_for(4.0 * double(planes * s.h * s.w), kBytesPerThread, planes),
                               threads_for(double(planes * OH * OW), kElementsPerThread, planes));
  parallel_for(planes, threads, [&](int64_t p) {
    const float* ip = in + p * s.h * s.w;
    float* o = out + p * OH * OW;
    std::int32_t* a = argmax + p * OH * OW;
    if (s.kernel == 2 && s.stride == 2)
      pool_plane_k<2, 2>(ip, o, a, s.w, OH, OW, s.stride);
    else if (s.kernel == 4 && s.stride == 4)
      pool_plane_k<4, 4>(ip, o, a, s.w, OH, OW, s.stride);
    else if (s.kernel == 2)
      pool_plane_k<2, 0>(ip, o, a, s.w, OH, OW, s.stride);
    else if (s.kernel == 3)
      pool_plane_k<3, 0>(ip, o, a, s.w, OH, OW, s.stride);
    else if (s.kernel == 4)
      pool_plane_k<4, 0>(ip, o, a, s.w, OH, OW, s.stride);
    else
      pool_plane_any(s, ip, o, a);
  });
}

void maxpool2d_backward(const ops::Pool2dShape& s, float* din, const float* dout, const std::int32_t* argmax) {
  const int64_t OH = s.oh(), OW = s.ow(), planes = s.n * s.c;
  const int threads = threads_for(4.0 * double(planes * s.h * s.w), kBytesPerThread, planes);
  parallel_for(planes, threads, [&](int64_t p) {
    float* d = din + p * s.h * s.w;
    std::fill_n(d, s.h * s.w, 0.f);
    const std::int32_t* a = argmax + p * OH * OW;
    const float* g = dout + p * OH * OW;
    for (int64_t i = 0; i < OH * OW; ++i) d[a[i]] += g[i];  // overlapping windows add up, in order
  });
}

void activation_forward(const ops::EltwiseShape& s, float* out, const float* in) {
  if (s.act != ops::Activation::ReLU) {
    if (out != in) std::copy_n(in, s.n, out);
    return;
  }
  const int64_t chunks = chunks_of(s.n);
  parallel_for(chunks, threads_for(8.0 * double(s.n), kBytesPerThread, chunks), [&](int64_t c) {
    const int64_t lo = c * kChunk;
    relu_chunk(out + lo, in + lo, std::min(kChunk, s.n - lo));
  });
}

void activation_backward(const ops::EltwiseShape& s, float* din, const float* dout, const float* out) {
  if (s.act != ops::Activation::ReLU) {
    if (din != dout) std::copy_n(dout, s.n, din);
    return;
  }
  const int64_t chunks = chunks_of(s.n);
  parallel_for(chunks, threads_for(12.0 * double(s.n), kBytesPerThread, chunks), [&](int64_t c) {
    const int64_t lo = c * kChunk;
    relu_grad_chunk(din + lo, dout + lo, out + lo, std::min(kChunk, s.n - lo));
  });
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

// exp, not bytes, sets these loops' time: threads by elements.
int rows_threads(const ops::RowsShape& s) { return threads_for(double(s.rows * s.cols), kElementsPerThread, s.rows); }

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

void sgd_update(const ops::SgdShape& s, float* p, const float* g, float* buf, const ops::SgdConfig& cfg) {
  const int64_t chunks = chunks_of(s.n);
  const int threads = threads_for((s.momentum ? 20.0 : 12.0) * double(s.n), kBytesPerThread, chunks);
  parallel_for(chunks, threads, [&](int64_t c) {
    const int64_t lo = c * kChunk;
    sgd_chunk(p + lo, g + lo, s.momentum ? buf + lo : nullptr, std::min(kChunk, s.n - lo), cfg.lr, cfg.momentum,
              cfg.weight_decay, s.momentum);
  });
}

void sgd_span(float* p, const float* g, float* buf, int64_t n, const ops::SgdConfig& cfg) {
  sgd_chunk(p, g, buf, n, cfg.lr, cfg.momentum, cfg.weight_decay, buf != nullptr);
}

// Rows per thread below which a forward (or the row part of a backward) is split by
// columns inside each op instead: with fewer rows a thread streams a whole layer's weights for too few
// multiply-adds (simple-mlp's 784x256 layer is 800 KB per thread).
constexpr std::int64_t kMinRowsPerChunk = 4;

void for_row_chunks(std::int64_t n, const std::function<void(std::int64_t, std::int64_t)>& f, double row_flops) {
  fast::for_row_chunks(n, kMinRowsPerChunk, row_flops, f);
}

bool linear_joins_row_split(std::int64_t in) {
  // Largest K whose 8 rows of input plus a 6-row weight panel (the GEMM's 4 x 6 blocks)
  // fit in ~24 KB, half of a 48 KB L1: 14 x 512 x 4 B = 28 KB.
  constexpr std::int64_t kMaxK = 512;
  return in <= kMaxK;
}

void gather_batch(const ops::BatchShape& s, float* x, std::int32_t* y, const std::uint8_t* images,
                  const std::uint8_t* labels, const std::int32_t* order, std::int64_t first, std::int32_t step) {
  const int64_t per = s.out_h * s.out_w;
  const bool resize = s.in_h != s.out_h || s.in_w != s.out_w;
  // The caller's tables (grown once), passed to the team by reference: inside
  // the parallel region the name of a thread_local would be each thread's own.
  thread_local ResizeTables tables;
  const ResizeTables& t = tables;
  if (resize) {
    axis_table(s.in_h, s.out_h, tables.y0, tables.y1, tables.fy);
    axis_table(s.in_w, s.out_w, tables.x0, tables.x1, tables.fx);
  }
  // Threads by elements, not bytes: a batch's images are random rows of the data
  // set, mostly cache misses (the GPU host: 32 µs for 128 28x28 images on the 3
  // threads a bytes rule gave, ~1 ns an element).
  const int threads = threads_for((resize ? 2.0 : 1.0) * double(s.batch * per), kElementsPerThread, s.batch);
  parallel_for(s.batch, threads, [&](int64_t i) {
    thread_local std::vector<float> h;  // (in_h, out_w): the horizontal pass
    const int64_t idx = order[first + static_cast<int64_t>(step) * s.stride + i];
    const std::uint8_t* img = images + idx * s.in_h * s.in_w;
    if (resize) {
      if (static_cast<int64_t>(h.size()) < s.in_h * s.out_w) h.resize(static_cast<size_t>(s.in_h * s.out_w));
      resize_image(x + i * per, img, s, t, h.data());
    } else {
      normalize_row(x + i * per, img, per, s.mean, s.inv_std);
    }
    y[i] = labels[idx];
  });
}

}  // namespace roofline::engine::fast

// Linear on the CPU: our own register-blocked GEMM kernels (tiles.hpp), with
// bias and ReLU fused into the forward GEMM's epilogue, tiles split between
// OpenMP threads. Large layers (AlexNet's classifier) go to oneDNN's matmul
// where onednn::linear_prefers says it is faster (dnnl_conv.hpp; the rule in
// docs/perf-notes/cpu-onednn.md).
//
// Why not a BLAS: OpenBLAS called from several OpenMP threads at once is
// correct in some builds and not in others (its buffer allocation has had
// races: OpenMathLib/OpenBLAS issues 1755, 2126, 3057, 4345), and which build
// a host's libopenblas.so.0 is (pthreads or OpenMP, which version) is outside
// our control; a pthreads OpenBLAS also keeps a second thread pool beside
// OpenMP's. Our kernels compute every output element in one fixed order, so
// the results are the same for any thread count.
#include <algorithm>
#include <vector>

#include "src/engine/cpu/dnnl_conv.hpp"
#include "src/engine/cpu/fast_ops.hpp"
#include "src/engine/cpu/tiles.hpp"
#include "src/engine/cpu/parallel.hpp"

namespace roofline::engine::fast {

namespace {

// Threads for an (M×K)·(K×N) product: by FLOPs, and by the bytes of the
// operands when they are large but the FLOPs few (batch 1: a matrix-vector
// product streams the whole weight matrix).
int gemm_threads(std::int64_t M, std::int64_t N, std::int64_t K, std::int64_t tasks) {
  const double flops = 2.0 * double(M) * double(N) * double(K);
  const double bytes = 4.0 * (double(M) * double(K) + double(K) * double(N) + double(M) * double(N));
  return std::max(threads_for(flops, kFlopsPerThread, tasks), threads_for(bytes, 4 * kBytesPerThread, tasks));
}
// C (M × N) = A' · B (tiles.hpp's GemmBc) in tiles of broadcast blocks, split
// between threads by the product's work.
void gemm_bc_tiles(const GemmBc& g, std::int64_t M, std::int64_t N) {
  const TileSet& k = tiles();
  const std::int64_t cols = std::int64_t(k.bc_nv) * k.lanes;
  const std::int64_t tasks = ((M + k.bc_mr - 1) / k.bc_mr) * ((N + cols - 1) / cols);
  parallel_tiles(
      M, N, k.bc_mr, cols, gemm_threads(M, N, g.K, tasks),
      [&](std::int64_t i0, std::int64_t i1, std::int64_t j0, std::int64_t j1) { k.gemm_bc(g, i0, i1, j0, j1); });
}

// sums[j] = Σ_i x[i][j] (x: n × m) for columns [j0, j1), over rows in order
// (the reference's order), on the calling thread.
void column_sums_range(std::int64_t n, std::int64_t m, float* sums, const float* x, std::int64_t j0, std::int64_t j1) {
  for (std::int64_t j = j0; j < j1; ++j) sums[j] = 0.f;
  for (std::int64_t i = 0; i < n; ++i) {
    const float* row = x + i * m;
#pragma omp simd
    for (std::int64_t j = j0; j < j1; ++j) sums[j] += row[j];
  }
}

// db[j] = Σ_i x[i][j] over rows in order, columns in blocks of 64 split between threads.
void column_sums(std::int64_t n, std::int64_t m, float* sums, const float* x) {
  constexpr std::int64_t kBlock = 64;
  const std::int64_t blocks = (m + kBlock - 1) / kBlock;
  const int threads = threads_for(4.0 * double(n) * double(m), kBytesPerThread, blocks);
  parallel_for(blocks, threads, [&](std::int64_t b) {
    const std::int64_t j0 = b * kBlock;
    column_sums_range(n, m, sums, x, j0, std::min(m, j0 + kBlock));
  });
}

// Threads of linear_backward_weight_sgd: by the weight gradient's FLOPs and by
// the update's bytes (parameter, gradient and momentum read, two written).
int weight_sgd_threads(const ops::LinearShape& s) {
  const double params = double(s.out) * double(s.in + 1);
  return std::max(gemm_threads(s.out, s.in, s.n, s.out), threads_for(20.0 * params, kBytesPerThread, s.out));
}

// Whether a forward on `threads` threads splits the outputs by the weight rows
// each thread owns: outside a row split (the training step's column-split layers),
// with at least two of the GEMM's column blocks a thread, and on the same thread
// count as the layer's update, so that the rows a thread computes are the rows
// it updates.
bool owns_weight_rows(const ops::LinearShape& s, int threads) {
  return threads > 1 && !in_parallel() && s.out >= 2 * std::int64_t(tiles().nt_nr) * threads &&
         threads == weight_sgd_threads(s);
}

}  // namespace

namespace {

// Inputs of at most this many features take the broadcast kernel in the forward.
constexpr std::int64_t kSmallK = 32;

// out (n, out) = in (n, in) · wᵀ + b, then ReLU, for in ≤ kSmallK. An output is
// then a dot product of at most 32 terms, too short for the dot-product blocks (a
// horizontal reduction per output: 12-17 GFLOP/s for simple-cnn's 16→100 layer on
// the GPU host). Broadcast blocks over a transposed copy of w (at most
// 32 × out floats) instead (linear_forward_wt); each output still sums its terms
// in order.
void linear_forward_small_k(const ops::LinearShape& s, float* out, const float* in, const float* w, const float* b) {
  thread_local std::vector<float> wt_buf;  // (in, out): the caller's; the team only reads it
  if (static_cast<std::int64_t>(wt_buf.size()) < s.in * s.out) wt_buf.resize(static_cast<size_t>(s.in * s.out));
  float* wt = wt_buf.data();
  for (std::int64_t j = 0; j < s.out; ++j)
    for (std::int64_t q = 0; q < s.in; ++q) wt[q * s.out + j] = w[j * s.in + q];
  linear_forward_wt(s, out, in, wt, b);
}

}  // namespace

void linear_forward(const ops::LinearShape& s, float* out, const float* in, const float* w, const float* b) {
  if (onednn::linear_prefers(s, onednn::Pass::Forward)) return onednn::linear_forward(s, out, in, w, b);
  // out (n, out) = in (n, in) · wᵀ + b, then ReLU: all in the GEMM's epilogue.
  if (s.in <= kSmallK) return linear_forward_small_k(s, out, in, w, b);
  const TileSet& k = tiles();
  const GemmNt g{s.in, in, s.in, w, s.in, out, s.out, s.bias ? b : nullptr, s.act == ops::Activation::ReLU};
  const std::int64_t tasks = ((s.n + k.nt_mr - 1) / k.nt_mr) * ((s.out + k.nt_nr - 1) / k.nt_nr);
  const int threads = gemm_threads(s.n, s.out, s.in, tasks);
  if (owns_weight_rows(s, threads)) {
    // Thread t computes every row's outputs for the weight rows it owns (and
    // updates in linear_backward_weight_sgd): its weights stay in its caches.
    parallel_for(threads, threads, [&](std::int64_t t) {
      const Range r = owned_range(s.out, threads, t);
      k.gemm_nt(g, 0, s.n, r.begin, r.end);
    });
    return;
  }
  parallel_tiles(
      s.n, s.out, k.nt_mr, k.nt_nr, threads,
      [&](std::int64_t i0, std::int64_t i1, std::int64_t j0, std::int64_t j1) { k.gemm_nt(g, i0, i1, j0, j1); });
}

void linear_forward_wt(const ops::LinearShape& s, float* out, const float* in, const float* wt, const float* b) {
  if (onednn::linear_prefers(s, onednn::Pass::Forward)) return onednn::linear_forward_wt(s, out, in, wt, b);
  // out (n, out) = in (n, in) · wt (in, out) + b, then ReLU: broadcast blocks
  // (bc_mr rows × bc_nv vectors; 8 × 48 with AVX-512) streaming wt once per row
  // block, bias and ReLU in the epilogue. At the row split's 8 rows a thread
  // this ran simple-mlp's 784 → 256 layer in 39.5–39.7 µs against the
  // dot-product blocks' 46.4–47.6 on 16 threads of the GPU host
  // (docs/perf-notes.md).
  GemmBc g{s.in, in, s.in, 1, wt, s.out, out, s.out};
  g.bias = s.bias ? b : nullptr;
  g.relu = s.act == ops::Activation::ReLU;
  gemm_bc_tiles(g, s.n, s.out);
}

void linear_backward_input(const ops::LinearShape& s, float* din, const float* dpre, const float* w) {
  if (onednn::linear_prefers(s, onednn::Pass::InputGrad)) return onednn::linear_backward_input(s, din, dpre, w);
  // din (n, in) = dpre (n, out) · w (out, in)
  gemm_bc_tiles({s.out, dpre, s.out, 1, w, s.in, din, s.in}, s.n, s.in);
}

void linear_backward_weight(const ops::LinearShape& s, float* dw, float* db, const float* dpre, const float* in) {
  if (onednn::linear_prefers(s, onednn::Pass::WeightGrad)) return onednn::linear_backward_weight(s, dw, db, dpre, in);
  // dw (out, in) = dpreᵀ (out, n) · in (n, in): each element sums over the batch in order.
  gemm_bc_tiles({s.n, dpre, 1, s.out, in, s.in, dw, s.in}, s.out, s.in);
  if (db) column_sums(s.n, s.out, db, dpre);
}

void linear_backward_weight_sgd(const ops::LinearShape& s, const ops::LinearSgdBuffers& p, const float* dpre,
                                const float* in, const ops::SgdConfig& cfg) {
  // dw (out, in) = dpreᵀ · in and db (out) = Σ_rows dpre, as linear_backward_weight
  // (each element summed over the rows in order), then the SGD update of those
  // rows while their gradients are in cache: the same arithmetic as the two ops.
  if (onednn::linear_prefers(s, onednn::Pass::WeightGrad)) {
    // The same two ops as elsewhere (so the same bits as linear_backward_weight
    // then sgd_update): oneDNN's gradient, then the update split by bytes.
    onednn::linear_backward_weight(s, p.dw, s.bias ? p.db : nullptr, dpre, in);
    const bool m = cfg.momentum != 0.0f;
    sgd_update({s.out * s.in, m}, p.w, p.dw, m ? p.mw : nullptr, cfg);
    if (s.bias) sgd_update({s.out, m}, p.b, p.db, m ? p.mb : nullptr, cfg);
    return;
  }
  const TileSet& k = tiles();
  const GemmBc g{s.n, dpre, 1, s.out, in, s.in, p.dw, s.in};
  const bool momentum = cfg.momentum != 0.0f;
  const int threads = weight_sgd_threads(s);
  parallel_for(threads, threads, [&](std::int64_t t) {
    const Range r = owned_range(s.out, threads, t);
    if (r.begin == r.end) return;
    k.gemm_bc(g, r.begin, r.end, 0, s.in);
    const std::int64_t w0 = r.begin * s.in, nw = (r.end - r.begin) * s.in;
    sgd_span(p.w + w0, p.dw + w0, momentum ? p.mw + w0 : nullptr, nw, cfg);
    if (!s.bias) return;
    column_sums_range(s.n, s.out, p.db, dpre, r.begin, r.end);
    sgd_span(p.b + r.begin, p.db + r.begin, momentum ? p.mb + r.begin : nullptr, r.end - r.begin, cfg);
  });
}

}  // namespace roofline::engine::fast

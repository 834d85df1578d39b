// Direct convolution on the CPU for any stride and padding: the per-image
// blocks (tiles_direct_impl.hpp, compiled per ISA and reached through tiles())
// split between threads. fast_conv.cpp sends stride-1 unpadded convolutions
// (every model's) to the flattened-plane kernels instead; this is the path for
// the rest. The weight gradient keeps one partial sum per fixed chunk of
// images, reduced in chunk order, so the result does not depend on the thread
// count.
#include <omp.h>

#include <algorithm>
#include <vector>

#include "src/engine/cpu/fast_ops.hpp"
#include "src/engine/cpu/parallel.hpp"
#include "src/engine/cpu/tiles.hpp"

namespace roofline::engine::fast {

using std::int64_t;

namespace {

// Multiply-adds below which one thread does the whole op: a parallel region
// costs microseconds, and far more when the machine is oversubscribed.
constexpr int64_t kParallelMacs = int64_t(1) << 21;

int64_t macs(const ops::Conv2dShape& s) { return s.n * s.k * s.oh() * s.ow() * s.c * s.r * s.s; }

}  // namespace

void conv2d_forward_direct(const ops::Conv2dShape& s, float* out, const float* in, const float* w, const float* b) {
  constexpr int64_t kBlock = 4;
  const int64_t blocks = (s.k + kBlock - 1) / kBlock;
  const TileSet& ks = tiles();
#pragma omp parallel for schedule(static) if (macs(s) > kParallelMacs && !in_parallel())
  for (int64_t nb = 0; nb < s.n * blocks; ++nb) {
    const int64_t k0 = (nb % blocks) * kBlock;
    ks.direct_forward(s, nb / blocks, k0, std::min(kBlock, s.k - k0), out, in, w, b);
  }
}

void conv2d_backward_input_direct(const ops::Conv2dShape& s, float* din, const float* dpre, const float* w) {
  constexpr int64_t kBlock = 4;
  const int64_t blocks = (s.c + kBlock - 1) / kBlock;
  const TileSet& ks = tiles();
#pragma omp parallel for schedule(static) if (macs(s) > kParallelMacs && !in_parallel())
  for (int64_t nb = 0; nb < s.n * blocks; ++nb) {
    const int64_t c0 = (nb % blocks) * kBlock;
    ks.direct_input_grad(s, nb / blocks, c0, std::min(kBlock, s.c - c0), din, dpre, w);
  }
}

void conv2d_backward_weight_direct(const ops::Conv2dShape& s, float* dw, float* db, const float* dpre,
                                   const float* in) {
  const int64_t nw = s.k * s.c * s.r * s.s, nb = s.k, stride = nw + nb;
  constexpr int64_t kChunk = 4;  // images per partial sum: fixed, so the sums' order is too
  const int64_t chunks = (s.n + kChunk - 1) / kChunk;
  std::vector<double> partial(static_cast<size_t>(chunks * stride), 0.0);
  const int threads = macs(s) > kParallelMacs ? std::max(1, std::min<int>(omp_get_max_threads(), int(chunks))) : 1;
  const TileSet& ks = tiles();
  parallel_for(chunks, threads, [&](int64_t ch) {  // the full team: see parallel_for
    double* pw = partial.data() + static_cast<size_t>(ch * stride);
    for (int64_t n = ch * kChunk; n < std::min(s.n, (ch + 1) * kChunk); ++n)
      ks.direct_weight_grad(s, n, pw, db ? pw + nw : nullptr, dpre, in);
  });
  sum_chunks(partial.data(), chunks, stride, nw, nb, dw, db);
}

}  // namespace roofline::engine::fast

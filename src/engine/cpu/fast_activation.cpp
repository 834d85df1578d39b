// ReLU forward and backward, and the Linear layers' fused ReLU mask and bias
// gradient, on the CPU: the loops of tiles_loops_impl.hpp (per ISA, through
// tiles()) over chunks or column blocks, threads only where the bytes pay for
// them (parallel.hpp). Each column's bias-gradient sum runs over the rows in
// order, so results do not depend on the thread count.
#include <algorithm>

#include "src/engine/cpu/fast_ops.hpp"
#include "src/engine/cpu/parallel.hpp"
#include "src/engine/cpu/tiles.hpp"

namespace roofline::engine::fast {

using std::int64_t;

void activation_forward(const ops::EltwiseShape& s, float* out, const float* in) {
  if (s.act != ops::Activation::ReLU) {
    if (out != in) std::copy_n(in, s.n, out);
    return;
  }
  const TileSet& ks = tiles();
  parallel_chunks(s.n, 8.0, [&](int64_t lo, int64_t len) { ks.relu_chunk(out + lo, in + lo, len); });
}

void activation_backward(const ops::EltwiseShape& s, float* din, const float* dout, const float* out) {
  if (s.act != ops::Activation::ReLU) {
    if (din != dout) std::copy_n(dout, s.n, din);
    return;
  }
  const TileSet& ks = tiles();
  parallel_chunks(s.n, 12.0, [&](int64_t lo, int64_t len) { ks.relu_grad_chunk(din + lo, dout + lo, out + lo, len); });
}

void activation_bias_backward(const ops::BiasGradShape& s, float* dpre, float* db, const float* dout,
                              const float* out) {
  constexpr int64_t kCols = 64;  // column blocks: each column's sum runs over the rows in order
  const int64_t blocks = (s.cols + kCols - 1) / kCols;
  const int threads = threads_for(12.0 * double(s.rows * s.cols), kBytesPerThread, blocks);
  const TileSet& ks = tiles();
  parallel_for(blocks, threads, [&](int64_t b) {
    ks.bias_grad_cols(s, dpre, db, dout, out, b * kCols, std::min(s.cols, (b + 1) * kCols));
  });
}

}  // namespace roofline::engine::fast

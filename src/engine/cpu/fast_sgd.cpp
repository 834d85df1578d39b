// SGD on the CPU: one vectorised update loop (one clone per ISA, picked at load
// time), over chunks of the parameters split between threads, or over a span
// on the calling thread (linear_backward_weight_sgd's rows). The loop computes
// every element alike, so the split does not change the values.
#include "src/engine/cpu/fast_ops.hpp"
#include "src/engine/cpu/parallel.hpp"

namespace roofline::engine::fast {

#define ROOFLINE_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))

using std::int64_t;

namespace {

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

}  // namespace

void sgd_update(const ops::SgdShape& s, float* p, const float* g, float* buf, const ops::SgdConfig& cfg) {
  parallel_chunks(s.n, s.momentum ? 20.0 : 12.0, [&](int64_t lo, int64_t len) {
    sgd_chunk(p + lo, g + lo, s.momentum ? buf + lo : nullptr, len, cfg.lr, cfg.momentum, cfg.weight_decay,
              s.momentum);
  });
}

void sgd_span(float* p, const float* g, float* buf, int64_t n, const ops::SgdConfig& cfg) {
  sgd_chunk(p, g, buf, n, cfg.lr, cfg.momentum, cfg.weight_decay, buf != nullptr);
}

}  // namespace roofline::engine::fast

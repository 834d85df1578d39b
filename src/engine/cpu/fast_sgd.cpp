// SGD on the CPU: the update loop of tiles_loops_impl.hpp (per ISA, through
// tiles()), over chunks of the parameters split between threads, or over a
// span on the calling thread (linear_backward_weight_sgd's rows). The loop
// computes every element alike, so the split does not change the values.
// Nesterov momentum takes the optimizer loops of fast_optim.cpp.
#include "src/engine/cpu/fast_ops.hpp"
#include "src/engine/cpu/fast_optim.hpp"
#include "src/engine/cpu/optim_loops.hpp"
#include "src/engine/cpu/parallel.hpp"
#include "src/engine/cpu/tiles.hpp"

namespace roofline::engine::fast {

using std::int64_t;

void sgd_update(const ops::SgdShape& s, float* p, const float* g, float* buf, const ops::SgdConfig& cfg) {
  if (cfg.nesterov) return sgd_update_ext(s, p, g, buf, cfg, 1.0f, {});
  const TileSet& ks = tiles();
  parallel_chunks(s.n, s.momentum ? 20.0 : 12.0, [&](int64_t lo, int64_t len) {
    ks.sgd_chunk(p + lo, g + lo, s.momentum ? buf + lo : nullptr, len, cfg.lr, cfg.momentum, cfg.weight_decay,
                 s.momentum);
  });
}

void sgd_span(float* p, const float* g, float* buf, int64_t n, const ops::SgdConfig& cfg) {
  if (cfg.nesterov && buf)
    return optim_loops().sgd_chunk(p, g, buf, n, cfg.lr, cfg.momentum, cfg.weight_decay, 1.0f, SgdMode::Nesterov);
  tiles().sgd_chunk(p, g, buf, n, cfg.lr, cfg.momentum, cfg.weight_decay, buf != nullptr);
}

}  // namespace roofline::engine::fast

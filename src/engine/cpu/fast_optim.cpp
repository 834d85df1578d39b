// The optimizers, casts and the finiteness check on the CPU: the loops of
// optim_loops.hpp (per ISA) over chunks of 4096 elements split between
// threads (parallel_chunks), the low-precision copy of a chunk written while
// the chunk is still in the core's L1.
#include "src/engine/cpu/fast_optim.hpp"

#include <atomic>
#include <cstring>

#include "src/engine/cpu/fast_ops.hpp"
#include "src/engine/cpu/optim_loops.hpp"
#include "src/engine/cpu/parallel.hpp"

namespace roofline::engine::fast {

using std::int64_t;

namespace {

double width(DType t) { return static_cast<double>(dtype_size(t)); }

// out (len) in `to` = in (len) in `from`, through fp32 for the two 16-bit types.
void convert(const OptimLoops& L, DType from, DType to, void* out, const void* in, int64_t len) {
  auto* o16 = static_cast<std::uint16_t*>(out);
  auto* i16 = static_cast<const std::uint16_t*>(in);
  if (from == to) {
    std::memcpy(out, in, static_cast<size_t>(len) * dtype_size(to));
  } else if (from == DType::F32) {
    if (to == DType::BF16)
      L.f32_to_bf16(o16, static_cast<const float*>(in), len);
    else
      L.f32_to_f16(o16, static_cast<const float*>(in), len);
  } else if (to == DType::F32) {
    if (from == DType::BF16)
      L.bf16_to_f32(static_cast<float*>(out), i16, len);
    else
      L.f16_to_f32(static_cast<float*>(out), i16, len);
  } else {  // bf16 <-> f16: widening is exact, so one rounding, as the reference
    float tmp[kEltwiseChunk];
    for (int64_t lo = 0; lo < len; lo += kEltwiseChunk) {
      const int64_t k = std::min(kEltwiseChunk, len - lo);
      convert(L, from, DType::F32, tmp, i16 + lo, k);
      convert(L, DType::F32, to, o16 + lo, tmp, k);
    }
  }
}

void* offset(void* base, DType t, int64_t i) { return static_cast<char*>(base) + i * dtype_size(t); }
const void* offset(const void* base, DType t, int64_t i) { return static_cast<const char*>(base) + i * dtype_size(t); }

}  // namespace

void sgd_update_ext(const ops::SgdShape& s, float* p, const float* g, float* buf, const ops::SgdConfig& cfg, float inv,
                    const ops::ParamCopy& copy) {
  if (!cfg.nesterov && inv == 1.0f && !copy.data) return sgd_update(s, p, g, buf, cfg);
  const OptimLoops& L = optim_loops();
  const SgdMode mode = !s.momentum ? SgdMode::Plain : cfg.nesterov ? SgdMode::Nesterov : SgdMode::Momentum;
  const double bytes = (s.momentum ? 20.0 : 12.0) + (copy.data ? width(copy.dtype) : 0.0);
  parallel_chunks(s.n, bytes, [&](int64_t lo, int64_t len) {
    L.sgd_chunk(p + lo, g + lo, s.momentum ? buf + lo : nullptr, len, cfg.lr, cfg.momentum, cfg.weight_decay, inv,
                mode);
    if (copy.data) convert(L, DType::F32, copy.dtype, offset(copy.data, copy.dtype, lo), p + lo, len);
  });
}

void adamw_update(const ops::AdamWShape& s, float* p, const float* g, float* m, float* v,
                  const ref::AdamWScalars<float>& sc, const ops::ParamCopy& copy) {
  const OptimLoops& L = optim_loops();
  const double bytes = 28.0 + (copy.data ? width(copy.dtype) : 0.0);
  parallel_chunks(s.n, bytes, [&](int64_t lo, int64_t len) {
    L.adamw_chunk(p + lo, g + lo, m + lo, v + lo, len, sc);
    if (copy.data) convert(L, DType::F32, copy.dtype, offset(copy.data, copy.dtype, lo), p + lo, len);
  });
}

void cast(const ops::CastShape& s, void* out, const void* in) {
  const OptimLoops& L = optim_loops();
  parallel_chunks(s.n, width(s.from) + width(s.to), [&](int64_t lo, int64_t len) {
    convert(L, s.from, s.to, offset(out, s.to, lo), offset(in, s.from, lo), len);
  });
}

void grads_check_finite(int64_t n, const float* g, std::int32_t* found_inf) {
  const OptimLoops& L = optim_loops();
  std::atomic<bool> bad{false};
  parallel_chunks(n, 4.0, [&](int64_t lo, int64_t len) {
    if (L.any_nonfinite(g + lo, len)) bad.store(true, std::memory_order_relaxed);
  });
  if (bad.load()) *found_inf = 1;
}

}  // namespace roofline::engine::fast

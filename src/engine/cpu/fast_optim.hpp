// The fast CPU path of the optimizers, casts and loss-scaling checks
// (roofline/engine/ops_optim.hpp): the per-ISA loops of optim_loops.hpp over
// chunks of the parameters split between threads. Every element is computed
// alike whatever chunk it falls in, so the split does not change the values.
#pragma once
#include <cstdint>

#include "roofline/engine/ops_optim.hpp"
#include "src/engine/cpu/ref_optim.hpp"

namespace roofline::engine::fast {

// sgd_update with gradients multiplied by inv (1: none) and, when copy.data,
// the updated parameters written rounded to copy.dtype. The plain update
// (no Nesterov, inv = 1, no copy) is sgd_update's own loop (fast_sgd.cpp).
void sgd_update_ext(const ops::SgdShape& s, float* p, const float* g, float* buf, const ops::SgdConfig& cfg, float inv,
                    const ops::ParamCopy& copy);
void adamw_update(const ops::AdamWShape& s, float* p, const float* g, float* m, float* v,
                  const ref::AdamWScalars<float>& sc, const ops::ParamCopy& copy);
void cast(const ops::CastShape& s, void* out, const void* in);
void grads_check_finite(std::int64_t n, const float* g, std::int32_t* found_inf);

}  // namespace roofline::engine::fast

// The fast CPU path's optimizer and cast loops (fast_optim.cpp splits them
// between threads), compiled once per instruction set after the pattern of
// src/hardware/isa_target.hpp: optim_loops_avx512.cpp, optim_loops_avx2.cpp and
// optim_loops_sse2.cpp compile optim_loops_impl.hpp through optim_loops_isa.inc,
// and optim_loops() returns the set for hw::active_isa(). Plain loops that GCC
// vectorises, without multiply-add contraction: every element goes through the
// reference's float operations in its order (as the CUDA kernels do), so the
// backends agree bit for bit on SGD and to the bias corrections' rounding on
// AdamW. The conversions are bit for bit those of roofline/engine/half.hpp.
#pragma once
#include <cstdint>

#include "roofline/hardware/cpu_isa.hpp"
#include "src/engine/cpu/ref_optim.hpp"

namespace roofline::engine::fast {

// The SGD variants of sgd_chunk_ext.
enum class SgdMode : int { Plain, Momentum, Nesterov };

struct OptimLoops {
  // sgd_update on n parameters: g' = g·inv + wd·p, then as ref::sgd_update.
  void (*sgd_chunk)(float* p, const float* g, float* buf, std::int64_t n, float lr, float mom, float wd, float inv,
                    SgdMode mode);
  // adamw_update on n parameters (ref::adamw_update<float>).
  void (*adamw_chunk)(float* p, const float* g, float* m, float* v, std::int64_t n, const ref::AdamWScalars<float>& s);
  void (*f32_to_bf16)(std::uint16_t* out, const float* in, std::int64_t n);
  void (*f32_to_f16)(std::uint16_t* out, const float* in, std::int64_t n);
  void (*bf16_to_f32)(float* out, const std::uint16_t* in, std::int64_t n);
  void (*f16_to_f32)(float* out, const std::uint16_t* in, std::int64_t n);
  // Whether any of in (n) is ±inf or NaN.
  bool (*any_nonfinite)(const float* in, std::int64_t n);
};

const OptimLoops& optim_loops_avx512();
const OptimLoops& optim_loops_avx2();
const OptimLoops& optim_loops_sse2();
const OptimLoops& optim_loops(hw::Isa isa);  // this CPU must support `isa`
const OptimLoops& optim_loops();             // for hw::active_isa()

}  // namespace roofline::engine::fast

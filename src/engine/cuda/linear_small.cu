// The small-layer linear forward (kernels/linear_small.cuh) and when it is taken.
#include <cstdint>

#include "kernels/linear_small.cuh"
#include "src/engine/cuda/launch.cuh"
#include "src/engine/cuda/ops_cuda.hpp"

namespace roofline::engine::cuda_ops {

bool linear_small_applies(const ops::LinearShape& s, const float* in, const float* w) {
  const auto aligned = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; };
  return s.in % 4 == 0 && s.in > 0 && s.n > 0 && s.out > 0 && aligned(in) && aligned(w) &&
         s.n * s.out * s.in <= kLinearSmallMacs && s.in <= 0x7fffffff && (s.n + 3) / 4 <= 65535;
}

void linear_small_forward(const CudaState* st, const ops::LinearShape& s, float* out, const float* in, const float* w,
                          const float* b) {
  const dim3 grid(static_cast<unsigned>((s.out + kernels::kLinearSmallWarps - 1) / kernels::kLinearSmallWarps),
                  static_cast<unsigned>((s.n + kernels::kLinearSmallRows - 1) / kernels::kLinearSmallRows));
  kernels::linear_small_forward<<<grid, 32 * kernels::kLinearSmallWarps, 0, stream_of(st)>>>(
      int(s.n), int(s.in), int(s.out), out, in, w, b, s.act == ops::Activation::ReLU);
  CUDA_CHECK_LAUNCH();
}

}  // namespace roofline::engine::cuda_ops

// Launchers used by linear_gpu.cpp (defined in elementwise.cu).
#pragma once
#include <cstdint>

namespace roofline::engine {
struct CudaState;
namespace cuda_ops {
// out (n, m) = act(out + b); b may be null
void launch_bias_act(const CudaState* st, std::int64_t n, std::int64_t m, float* out, const float* b, bool relu);
// sums (m) = Σ over rows of x (n, m)
void launch_column_sums(const CudaState* st, std::int64_t n, std::int64_t m, float* sums, const float* x);
}  // namespace cuda_ops
}  // namespace roofline::engine

// The small-layer linear forward (kernels/linear_small.cuh), the fused
// inference head (kernels/linear_head.cuh), and when each is taken.
#include <cstdint>

#include "kernels/linear_head.cuh"
#include "kernels/linear_small.cuh"
#include "src/engine/cuda/launch.cuh"
#include "src/engine/cuda/ops_cuda.hpp"

namespace roofline::engine::cuda_ops {

namespace {
bool aligned(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }  // float4 rows
}  // namespace

bool linear_small_applies(const ops::LinearShape& s, const void* in, const void* w) {
  return s.dtype == DType::F32 && s.in % 4 == 0 && s.in > 0 && s.n > 0 && s.out > 0 && aligned(in) && aligned(w) &&
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

bool linear_head_forward(const CudaState* st, const ops::LinearShape& l1, const ops::LinearShape& l2, float* probs,
                         const float* in, const float* w1, const float* b1, const float* w2, const float* b2) {
  const auto act_ok = [](ops::Activation a) { return a == ops::Activation::None || a == ops::Activation::ReLU; };
  if (l1.dtype != DType::F32 || l2.dtype != DType::F32 || l1.n != l2.n || l2.in != l1.out || l1.n < 1 || l1.in < 4 || l1.in % 4 != 0 || l1.in > kernels::kHeadMaxIn ||
      !aligned(in) || !aligned(w1) || l1.out > kernels::kHeadMaxHidden || l2.out < 1 ||
      l2.out > kernels::kHeadMaxClasses || !act_ok(l1.act) || !act_ok(l2.act) || l1.n * l1.out * l1.in > kLinearSmallMacs)
    return false;
  // Static shared memory: x rows 16 KB, hidden rows 16 KB, logits; w2 is
  // dynamic; all of it within the 48 KB a kernel has without opting in.
  const int dyn = kernels::head_dynamic_bytes(int(l1.out), int(l2.out));
  constexpr int kStatic = kernels::kHeadRows * (kernels::kHeadMaxIn + kernels::kHeadMaxHidden + kernels::kHeadMaxClasses) * 4;
  if (dyn + kStatic > 48 * 1024) return false;
  // A row per block while the batch's rows fit on the SMs (nothing computed
  // for rows past the batch), else kHeadRows rows sharing each weight load.
  const bool one_row = l1.n <= st->sm_count;
  const int rows = one_row ? 1 : kernels::kHeadRows;
  const auto blocks = static_cast<unsigned>((l1.n + rows - 1) / rows);
  const int warps = one_row ? kernels::kHeadRowWarps : kernels::kHeadWarps;
  const auto kernel = one_row ? kernels::linear_head_forward<1, kernels::kHeadRowWarps>
                              : kernels::linear_head_forward<kernels::kHeadRows, kernels::kHeadWarps>;
  kernel<<<blocks, 32 * warps, dyn, stream_of(st)>>>(
      int(l1.n), int(l1.in), int(l1.out), int(l2.out), probs, in, w1, b1, l1.act == ops::Activation::ReLU, w2, b2,
      l2.act == ops::Activation::ReLU);
  CUDA_CHECK_LAUNCH();
  return true;
}

}  // namespace roofline::engine::cuda_ops

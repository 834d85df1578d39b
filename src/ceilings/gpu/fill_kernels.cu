// Random operands for the library GEMMs (cuBLASLt): real values of each type,
// never a zero-filled buffer (zeros run faster than data, and hide bugs).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <type_traits>

#include "roofline/cuda/check.hpp"
#include "src/ceilings/gpu/kernels.hpp"
#include "src/ceilings/gpu/pattern.hpp"

namespace roofline::ceilings::gpu {

namespace {

__device__ __forceinline__ float unit_value(uint32_t seed, size_t i) {
  return static_cast<float>(random_word(seed, i) >> 8) * (1.0f / 8388608.0f) - 1.0f;  // [-1, 1)
}

template <class T>
__global__ void fill_kernel(T* p, size_t n, uint32_t seed) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    if constexpr (std::is_same_v<T, int8_t>) {
      p[i] = static_cast<int8_t>(static_cast<int>(random_word(seed, i) % 128u) - 64);
    } else {
      p[i] = T(unit_value(seed, i));
    }
  }
}

template <class T>
void launch(void* p, size_t n, uint32_t seed, cudaStream_t s) {
  fill_kernel<T><<<1024, 256, 0, s>>>(static_cast<T*>(p), n, seed);
  CUDA_CHECK_LAUNCH();
}

}  // namespace

void fill_values(void* p, size_t count, TensorType t, uint32_t seed, cudaStream_t s) {
  switch (t) {
    case TensorType::TF32: return launch<float>(p, count, seed, s);
    case TensorType::FP16: return launch<__half>(p, count, seed, s);
    case TensorType::BF16: return launch<__nv_bfloat16>(p, count, seed, s);
    case TensorType::FP8: return launch<__nv_fp8_e4m3>(p, count, seed, s);
    case TensorType::INT8: return launch<int8_t>(p, count, seed, s);
  }
}

}  // namespace roofline::ceilings::gpu

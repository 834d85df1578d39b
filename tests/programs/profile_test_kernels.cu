// Kernels with known launch configurations for the in-process tracer test
// (tests/gpu/test_profile_gpu.cpp), behind a plain C++ interface.
#include <cuda_runtime.h>

namespace {

__global__ void inproc_scale(float* x, int n) {  // x: (n)
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= 2.0f;
}

__global__ void inproc_add(float* x, int n) {  // x: (n)
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1.0f;
}

}  // namespace

// Launches inproc_scale `scale` times with grid (n/128) x block 128 and
// inproc_add `add` times with grid (n/64) x block 64 on x (n floats, n a
// multiple of 128). Returns the first CUDA error.
cudaError_t profile_test_launch(float* x, int n, int scale, int add) {
  for (int i = 0; i < scale; ++i) inproc_scale<<<n / 128, 128>>>(x, n);
  for (int i = 0; i < add; ++i) inproc_add<<<n / 64, 64>>>(x, n);
  return cudaGetLastError();
}

#include <cuda_runtime.h>

#include <fmt/format.h>

#include "roofline/cuda/check.hpp"
#include "roofline/cuda/memory.hpp"
#include "roofline/core/strings.hpp"

namespace roofline::cuda {

void throw_cuda(cudaError_t err, const char* call, const char* file, int line) {
  std::string hint;
  if (err == cudaErrorMemoryAllocation) hint = "use smaller sizes or batches, or free GPU memory held by other programs";
  else if (err == cudaErrorNoKernelImageForDevice)
    hint = "this build has no code for this GPU's architecture; rebuild with CMAKE_CUDA_ARCHITECTURES set for it";
  else if (err == cudaErrorInsufficientDriver || err == cudaErrorNoDevice)
    hint = "run on a machine with an NVIDIA GPU and driver";
  throw Error(ErrorKind::Device,
              fmt::format("CUDA error {} ({}) in {} at {}:{}", cudaGetErrorName(err), cudaGetErrorString(err), call,
                          file, line),
              hint);
}

void throw_status(const char* library, int status, const std::string& text, const char* call, const char* file,
                  int line) {
  throw Error(ErrorKind::Device, fmt::format("{} error {} ({}) in {} at {}:{}", library, status, text, call, file, line));
}

void* device_alloc(size_t bytes, const char* what) {
  void* p = nullptr;
  cudaError_t err = cudaMalloc(&p, bytes);
  if (err != cudaSuccess) {
    cudaGetLastError();  // clear the sticky-free allocation error
    size_t free_b = 0, total_b = 0;
    cudaMemGetInfo(&free_b, &total_b);
    throw Error(ErrorKind::Device,
                fmt::format("GPU out of memory allocating {} for {}: {} free of {} ({})", format_bytes(double(bytes)),
                            what, format_bytes(double(free_b)), format_bytes(double(total_b)), cudaGetErrorString(err)),
                "use a smaller size or batch, or free GPU memory held by other programs");
  }
  return p;
}

}  // namespace roofline::cuda

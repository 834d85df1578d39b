#include <cuda_runtime.h>

#include <fmt/format.h>

#include "roofline/cuda/check.hpp"

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

}  // namespace roofline::cuda

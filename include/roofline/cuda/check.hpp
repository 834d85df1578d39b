// Status checks for every CUDA, cuBLAS and cuDNN call. A failed call throws
// Error(Device) naming the call, the file and line, and the library's message.
// Only for translation units built with CUDA (ROOFLINE_HAVE_CUDA).
#pragma once
#include <cuda_runtime.h>

#include <string>

#include "roofline/core/error.hpp"

namespace roofline::cuda {

[[noreturn]] void throw_cuda(cudaError_t err, const char* call, const char* file, int line);
[[noreturn]] void throw_status(const char* library, int status, const std::string& text, const char* call,
                               const char* file, int line);

}  // namespace roofline::cuda

#define CUDA_CHECK(call)                                                               \
  do {                                                                                 \
    cudaError_t err_ = (call);                                                         \
    if (err_ != cudaSuccess) ::roofline::cuda::throw_cuda(err_, #call, __FILE__, __LINE__); \
  } while (0)

// After a kernel launch: catches bad launch configurations at once.
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())

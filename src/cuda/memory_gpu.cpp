#include "roofline/cuda/memory.hpp"

#include <cuda_runtime.h>
#include <fmt/format.h>

#include "roofline/core/error.hpp"
#include "roofline/core/strings.hpp"

namespace roofline::cuda {

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

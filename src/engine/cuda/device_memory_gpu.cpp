#include <cuda_runtime.h>

#include "roofline/cuda/check.hpp"
#include "roofline/cuda/memory.hpp"
#include "src/engine/cuda/device_memory.hpp"

namespace roofline::engine::detail {

void* cuda_malloc(int device, size_t bytes, const char* what) {
  CUDA_CHECK(cudaSetDevice(device));
  return cuda::device_alloc(bytes, what);  // says what was asked for and what is free
}

void cuda_free(int device, void* p) noexcept {
  if (cudaSetDevice(device) == cudaSuccess) cudaFree(p);
}

void cuda_copy_sync(void* dst, bool dst_on_gpu, const void* src, bool src_on_gpu, size_t bytes) {
  cudaMemcpyKind kind = dst_on_gpu ? (src_on_gpu ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice)
                                   : (src_on_gpu ? cudaMemcpyDeviceToHost : cudaMemcpyHostToHost);
  // Contexts run on non-blocking streams, which the legacy stream of
  // cudaMemcpy does not wait for: wait for all work first, so a synchronous
  // copy always sees (and is seen by) everything enqueued before it.
  CUDA_CHECK(cudaDeviceSynchronize());
  CUDA_CHECK(cudaMemcpy(dst, src, bytes, kind));
}

}  // namespace roofline::engine::detail

// Device memory for plain C++ code: these functions are defined in
// device_memory_gpu.cpp in CUDA builds and throw Error(Unsupported) in
// CPU-only builds (device_memory.cpp). No CUDA headers needed here.
#pragma once
#include <cstddef>

namespace roofline::engine::detail {

void* cuda_malloc(int device, size_t bytes, const char* what);  // Error(Device) with free/asked on OOM
void cuda_free(int device, void* p) noexcept;
void cuda_copy_sync(void* dst, bool dst_on_gpu, const void* src, bool src_on_gpu, size_t bytes);

}  // namespace roofline::engine::detail

// CPU-only builds: the CUDA memory entry points say that GPU support is missing.
#include "src/engine/cuda/device_memory.hpp"

#include "roofline/core/error.hpp"

namespace roofline::engine::detail {

namespace {
[[noreturn]] void no_cuda() {
  throw_unsupported("this roofline was built without CUDA, so it has no GPU memory",
                    "use --device cpu, or rebuild with the CUDA toolkit installed");
}
}  // namespace

void* cuda_malloc(int, size_t, const char*) { no_cuda(); }
void cuda_free(int, void*) noexcept {}
void cuda_copy_sync(void*, bool, const void*, bool, size_t) { no_cuda(); }

}  // namespace roofline::engine::detail

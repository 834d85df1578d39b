// CPU-only builds: every CUDA entry point of the engine says GPU support is missing.
#include "src/engine/cuda/cuda_api.hpp"

#include "roofline/core/error.hpp"

namespace roofline::engine::detail {

namespace {
[[noreturn]] void no_cuda() {
  throw_unsupported("this roofline was built without CUDA", "use --device cpu, or rebuild with the CUDA toolkit");
}
}  // namespace

std::shared_ptr<CudaState> create_cuda_state(int) { no_cuda(); }
void* cuda_stream(const CudaState*) { return nullptr; }
size_t cuda_scratch_bytes(const CudaState*) { return 0; }
void cuda_copy_async(const CudaState*, void*, bool, const void*, bool, size_t) { no_cuda(); }
void cuda_memset_async(const CudaState*, void*, int, size_t) { no_cuda(); }
void cuda_synchronize(const CudaState*) { no_cuda(); }
size_t cuda_free_memory(const CudaState*) { no_cuda(); }
std::pair<int, int> cuda_compute_capability(const CudaState*) { no_cuda(); }
double cuda_time(const CudaState*, const std::function<void()>&, int, const std::function<void()>&) { no_cuda(); }
std::shared_ptr<void> cuda_capture(const CudaState*, const std::function<void()>&) { no_cuda(); }
void cuda_launch(const CudaState*, const void*) { no_cuda(); }

}  // namespace roofline::engine::detail

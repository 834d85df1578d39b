// The CUDA side of Context, StepGraph and timing, for plain C++ callers (no
// CUDA headers). Defined in context_gpu.cpp; CPU-only builds get stubs that
// throw Error(Unsupported) (cuda_api.cpp).
#pragma once
#include <cstddef>
#include <functional>
#include <memory>
#include <utility>

namespace roofline::engine {
struct CudaState;
namespace detail {

std::shared_ptr<CudaState> create_cuda_state(int gpu);
void* cuda_stream(const CudaState* s);
// Bytes of the context's scratch buffers now (workspace, im2col, attention).
size_t cuda_scratch_bytes(const CudaState* s);
void cuda_copy_async(const CudaState* s, void* dst, bool dst_on_gpu, const void* src, bool src_on_gpu, size_t bytes);
void cuda_memset_async(const CudaState* s, void* dst, int value, size_t bytes);
void cuda_synchronize(const CudaState* s);
// Bytes of device memory free now (cudaMemGetInfo on the state's device).
size_t cuda_free_memory(const CudaState* s);
// The device's compute capability (major, minor).
std::pair<int, int> cuda_compute_capability(const CudaState* s);
// Seconds per call of `work` (enqueued `reps` times between two events).
// `wait` (when given) waits for the stop event's stream instead of a plain
// synchronise: the data-parallel bench's watchdog, which gives up on a dead peer.
double cuda_time(const CudaState* s, const std::function<void()>& work, int reps,
                 const std::function<void()>& wait = {});
// Captures `work` into an executable graph (type-erased owner).
std::shared_ptr<void> cuda_capture(const CudaState* s, const std::function<void()>& work);
void cuda_launch(const CudaState* s, const void* graph);

}  // namespace detail
}  // namespace roofline::engine

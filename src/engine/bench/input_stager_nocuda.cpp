// The InputStager's GPU half in a build without CUDA: a GPU network cannot
// exist there (its Context throws first), so none of this is reached.
#include "roofline/core/error.hpp"
#include "src/engine/bench/net_data.hpp"

namespace roofline::engine {

struct InputStager::Gpu {};

std::unique_ptr<InputStager::Gpu, void (*)(InputStager::Gpu*)> InputStager::make_gpu(GraphNetwork&, std::int64_t) {
  throw_unsupported("this roofline was built without CUDA: --data on the GPU needs it", "use --device cpu");
}
void* InputStager::pinned_alloc(size_t) { return nullptr; }
void InputStager::pinned_free(void*) {}
void InputStager::gpu_prefetch() {}
void InputStager::gpu_load() {}
void InputStager::gpu_step(bool) {}
double InputStager::gpu_step_seconds() { return 0; }
void InputStager::gpu_drain() {}

}  // namespace roofline::engine

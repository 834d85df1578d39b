// The InputStager's GPU half: pinned loader buffers, two fp32 staging buffers
// filled on a copy stream while the previous step runs, and the cast into the
// net's input on its own stream (net_data.hpp has the order of events).
#include <cuda_runtime.h>

#include "roofline/core/error.hpp"
#include "roofline/cuda/check.hpp"
#include "roofline/cuda/memory.hpp"
#include "roofline/engine/ops_optim.hpp"
#include "src/engine/bench/net_data.hpp"

namespace roofline::engine {

struct InputStager::Gpu {
  int device = 0;
  cudaStream_t compute = nullptr;  // the net's stream
  cuda::Stream copy;
  cuda::DeviceBuffer<float> x[2];
  cuda::DeviceBuffer<std::int32_t> y[2];
  // copied[i]: staging buffer i holds its batch; consumed[i]: the cast has read it.
  cuda::Event copied[2] = {cuda::Event(cudaEventDisableTiming), cuda::Event(cudaEventDisableTiming)};
  cuda::Event consumed[2] = {cuda::Event(cudaEventDisableTiming), cuda::Event(cudaEventDisableTiming)};
  cuda::Event begin, end;
};

std::unique_ptr<InputStager::Gpu, void (*)(InputStager::Gpu*)> InputStager::make_gpu(GraphNetwork& net,
                                                                                      std::int64_t x_floats) {
  Context& ctx = net.context();
  CUDA_CHECK(cudaSetDevice(ctx.device().index));
  std::unique_ptr<Gpu, void (*)(Gpu*)> g(new Gpu, [](Gpu* p) { delete p; });
  g->device = ctx.device().index;
  g->compute = static_cast<cudaStream_t>(ctx.stream());
  for (auto& b : g->x) b = cuda::DeviceBuffer<float>(static_cast<size_t>(x_floats), "input staging (--data)");
  for (auto& b : g->y)
    b = cuda::DeviceBuffer<std::int32_t>(static_cast<size_t>(net.max_batch()), "label staging (--data)");
  return g;
}

void* InputStager::pinned_alloc(size_t bytes) {
  void* p = nullptr;
  if (cudaHostAlloc(&p, bytes, cudaHostAllocDefault) != cudaSuccess) {
    (void)cudaGetLastError();  // the loader reports the failure as out of memory
    return nullptr;
  }
  return p;
}

void InputStager::pinned_free(void* p) { (void)cudaFreeHost(p); }

void InputStager::gpu_prefetch() {
  ROOFLINE_ASSERT(prefetched_ == loaded_, "a batch prefetched twice before its load");
  const int slot = static_cast<int>(prefetched_ % 2);
  Gpu& g = *gpu_;
  // The batch held now was copied from the loader's pinned buffer; next_view()
  // hands that buffer back to the loader, so its copy must be over first.
  if (prefetched_ > 0) g.copied[(prefetched_ - 1) % 2].sync();
  held_ = loader_->next_view();
  // The staging buffer was last read by the cast of the load before the previous one.
  CUDA_CHECK(cudaStreamWaitEvent(g.copy, g.consumed[slot].get(), 0));
  CUDA_CHECK(cudaMemcpyAsync(g.x[slot].get(), held_.x, g.x[slot].bytes(), cudaMemcpyHostToDevice, g.copy));
  CUDA_CHECK(cudaMemcpyAsync(g.y[slot].get(), held_.y, g.y[slot].bytes(), cudaMemcpyHostToDevice, g.copy));
  g.copied[slot].record(g.copy);
  ++prefetched_;
}

void InputStager::gpu_load() {
  ROOFLINE_ASSERT(loaded_ < prefetched_, "load() before prefetch() on the GPU");
  const int slot = static_cast<int>(loaded_ % 2);
  Gpu& g = *gpu_;
  CUDA_CHECK(cudaStreamWaitEvent(g.compute, g.copied[slot].get(), 0));
  ops::cast(net_.context(), ops::CastShape{x_floats_, DType::F32, net_.dtype()}, net_.input(), g.x[slot].get());
  CUDA_CHECK(cudaMemcpyAsync(net_.labels(), g.y[slot].get(), g.y[slot].bytes(), cudaMemcpyDeviceToDevice, g.compute));
  g.consumed[slot].record(g.compute);
  ++loaded_;
}

void InputStager::gpu_step(bool begin) { (begin ? gpu_->begin : gpu_->end).record(gpu_->compute); }

double InputStager::gpu_step_seconds() {
  gpu_->end.sync();
  return static_cast<double>(gpu_->end.since(gpu_->begin)) * 1e-3;
}

void InputStager::gpu_drain() {
  CUDA_CHECK(cudaStreamSynchronize(gpu_->copy));
  CUDA_CHECK(cudaStreamSynchronize(gpu_->compute));
}

}  // namespace roofline::engine

#include <cuda_runtime.h>

#include <vector>

#include "roofline/engine/context.hpp"
#include "src/engine/cuda/cuda_api.hpp"
#include "src/engine/cuda/cuda_state.hpp"

namespace roofline::engine {

namespace {
constexpr size_t kWorkspaceBytes = 32u << 20;  // cuBLASLt's recommendation for Hopper
}

MatmulPlan::~MatmulPlan() {
  if (a) cublasLtMatrixLayoutDestroy(a);
  if (b) cublasLtMatrixLayoutDestroy(b);
  if (c) cublasLtMatrixLayoutDestroy(c);
  if (desc) cublasLtMatmulDescDestroy(desc);
}

CudaState::CudaState(int gpu) : device(gpu), scope(gpu), stream(), workspace(kWorkspaceBytes, "cuBLASLt workspace") {
  CUBLAS_CHECK(cublasLtCreate(&lt));
  CUDA_CHECK(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, gpu));
  CUDA_CHECK(cudaDeviceGetAttribute(&smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, gpu));
}

CudaState::~CudaState() {
  plans.clear();
  if (lt) cublasLtDestroy(lt);
}

namespace detail {

namespace {
cudaMemcpyKind kind_of(bool dst_gpu, bool src_gpu) {
  return dst_gpu ? (src_gpu ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice)
                 : (src_gpu ? cudaMemcpyDeviceToHost : cudaMemcpyHostToHost);
}

struct GraphExec {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  ~GraphExec() {
    if (exec) cudaGraphExecDestroy(exec);
    if (graph) cudaGraphDestroy(graph);
  }
};
}  // namespace

std::shared_ptr<CudaState> create_cuda_state(int gpu) { return std::make_shared<CudaState>(gpu); }

void* cuda_stream(const CudaState* s) { return s ? static_cast<void*>(s->stream.get()) : nullptr; }

void cuda_copy_async(const CudaState* s, void* dst, bool dst_on_gpu, const void* src, bool src_on_gpu, size_t bytes) {
  CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, kind_of(dst_on_gpu, src_on_gpu), s->stream.get()));
}

void cuda_memset_async(const CudaState* s, void* dst, int value, size_t bytes) {
  CUDA_CHECK(cudaMemsetAsync(dst, value, bytes, s->stream.get()));
}

void cuda_synchronize(const CudaState* s) { CUDA_CHECK(cudaStreamSynchronize(s->stream.get())); }

double cuda_time(const CudaState* s, const std::function<void()>& work, int reps) {
  cuda::Event start, stop;
  start.record(s->stream.get());
  for (int i = 0; i < reps; ++i) work();
  stop.record(s->stream.get());
  stop.sync();
  return static_cast<double>(stop.since(start)) * 1e-3 / reps;
}

std::shared_ptr<void> cuda_capture(const CudaState* s, const std::function<void()>& work) {
  auto g = std::make_shared<GraphExec>();
  cudaStream_t st = s->stream.get();
  CUDA_CHECK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
  try {
    work();
  } catch (...) {
    cudaGraph_t broken = nullptr;
    cudaStreamEndCapture(st, &broken);  // leave the stream usable
    if (broken) cudaGraphDestroy(broken);
    cudaGetLastError();
    throw;
  }
  CUDA_CHECK(cudaStreamEndCapture(st, &g->graph));
  CUDA_CHECK(cudaGraphInstantiate(&g->exec, g->graph, 0));
  return g;
}

void cuda_launch(const CudaState* s, const void* graph) {
  CUDA_CHECK(cudaGraphLaunch(static_cast<const GraphExec*>(graph)->exec, s->stream.get()));
}

}  // namespace detail
}  // namespace roofline::engine

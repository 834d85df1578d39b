#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "roofline/core/error.hpp"
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
  conv_plans.clear();  // cuDNN descriptors before the handle
  if (dnn) cudnnDestroy(dnn);
  if (lt) cublasLtDestroy(lt);
}

void require_not_capturing(const CudaState* s, const std::string& what) {
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  CUDA_CHECK(cudaStreamIsCapturing(s->stream.get(), &capture));
  if (capture != cudaStreamCaptureStatusNone)
    throw Error(ErrorKind::Internal,
                fmt::format("{} is called for the first time while its stream is captured into a CUDA graph: its "
                            "plan (and any workspace it needs) cannot be made during a capture",
                            what),
                "run every shape once eagerly before capturing (the trainer's warm-up step does)");
}

void ensure_workspace(CudaState* s, size_t bytes, const char* what) {
  if (bytes <= s->workspace.bytes()) return;
  require_not_capturing(s, what);
  // At least double, in whole MiB, so that a network's plans grow it a few times at most.
  const size_t mib = size_t(1) << 20;
  const size_t want = std::max(bytes, 2 * s->workspace.bytes());
  cuda::DeviceBuffer<char> bigger((want + mib - 1) / mib * mib, "GPU workspace (cuBLASLt, cuDNN)");
  // Work already enqueued may still use the old buffer, and graphs captured
  // before may read it on replay: it is kept, not freed.
  s->retired_workspaces.push_back(std::move(s->workspace));
  s->workspace = std::move(bigger);
}

char* ensure_scratch(CudaState* s, cuda::DeviceBuffer<char>& buf, size_t bytes, const char* what) {
  if (bytes > buf.bytes()) {
    require_not_capturing(s, what);
    s->retired_workspaces.push_back(std::move(buf));  // work enqueued or captured before may still read it
    buf = cuda::DeviceBuffer<char>(bytes, what);
  }
  return buf.get();
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

size_t cuda_scratch_bytes(const CudaState* s) {
  return s ? s->workspace.bytes() + s->im2col.bytes() + s->attention.bytes() : 0;
}

void cuda_copy_async(const CudaState* s, void* dst, bool dst_on_gpu, const void* src, bool src_on_gpu, size_t bytes) {
  CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, kind_of(dst_on_gpu, src_on_gpu), s->stream.get()));
}

void cuda_memset_async(const CudaState* s, void* dst, int value, size_t bytes) {
  CUDA_CHECK(cudaMemsetAsync(dst, value, bytes, s->stream.get()));
}

void cuda_synchronize(const CudaState* s) { CUDA_CHECK(cudaStreamSynchronize(s->stream.get())); }

std::pair<int, int> cuda_compute_capability(const CudaState* s) {
  int major = 0, minor = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, s->device));
  CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, s->device));
  return {major, minor};
}

size_t cuda_free_memory(const CudaState* s) {
  CUDA_CHECK(cudaSetDevice(s->device));
  size_t free_b = 0, total_b = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  return free_b;
}

double cuda_time(const CudaState* s, const std::function<void()>& work, int reps, const std::function<void()>& wait) {
  cuda::Event start, stop;
  start.record(s->stream.get());
  for (int i = 0; i < reps; ++i) work();
  stop.record(s->stream.get());
  if (wait) wait();
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

// Data-parallel gradient averaging over NCCL: see roofline/engine/nccl_sync.hpp.
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <thread>

#include "roofline/core/error.hpp"
#include "roofline/cuda/check.hpp"
#include "roofline/cuda/memory.hpp"
#include "roofline/engine/nccl_sync.hpp"
#include "roofline/engine/ops_optim.hpp"
#include "src/cuda/nccl_lib.hpp"

namespace roofline::engine::dist {

namespace {

const cuda::NcclLib& lib() {
  const cuda::NcclLib& n = cuda::nccl_lib();
  if (!n.why.empty())
    throw Error(ErrorKind::Unsupported, "NCCL is not available: " + n.why,
                "put libnccl.so.2 on LD_LIBRARY_PATH (on the GPU machine it is in PyTorch's environment: "
                "site-packages/nvidia/nccl/lib)");
  return n;
}

cudaStream_t stream_of(const Context& ctx) { return static_cast<cudaStream_t>(ctx.stream()); }

}  // namespace

struct NcclSync::Impl {
  ncclComm_t comm = nullptr;
  int gpu = 0;
  DType grad_dtype = DType::F32;
  // The communication stream is a Context of its own on the same GPU, so the
  // bf16 casts run there with the engine's cast kernel.
  std::unique_ptr<Context> comm_ctx;
  cuda::Event ready{cudaEventDisableTiming}, done{cudaEventDisableTiming};
  Tensor stage;  // bf16 gradients of the bucket in flight
  bool aborted = false;

  Impl(int gpu, DType dtype) : gpu(gpu), grad_dtype(dtype), comm_ctx(std::make_unique<Context>(Backend::Cuda, gpu)) {
    if (dtype != DType::F32 && dtype != DType::BF16)
      throw Error(ErrorKind::Usage, fmt::format("{} gradients over NCCL", to_string(dtype)),
                  "all-reduce fp32 or bf16 gradients");
  }
  ~Impl() {
    if (!comm) return;
    if (aborted)
      (void)lib().comm_abort(comm);
    else
      (void)lib().comm_destroy(comm);
  }
  cudaStream_t comm_stream() const { return stream_of(*comm_ctx); }
};

std::string nccl_unique_id() {
  ncclUniqueId id;
  lib().check(lib().get_unique_id(&id), "ncclGetUniqueId");
  return std::string(id.internal, sizeof id.internal);
}

std::string nccl_version() {
  const cuda::NcclLib& n = cuda::nccl_lib();
  return n.why.empty() ? n.version_string() : "";
}

NcclSync::NcclSync(std::unique_ptr<Impl> impl, int rank, int world) : impl_(std::move(impl)), rank_(rank), world_(world) {}

NcclSync::NcclSync(Context& ctx, const std::string& unique_id, int rank, int world, DType grad_dtype)
    : rank_(rank), world_(world) {
  if (!ctx.is_cuda()) throw Error(ErrorKind::Usage, "NCCL averages GPU memory", "use a CUDA context");
  const cuda::NcclLib& n = lib();
  if (unique_id.size() != sizeof(ncclUniqueId))
    throw Error(ErrorKind::Input, fmt::format("an NCCL id of {} bytes (NCCL's are {})", unique_id.size(), sizeof(ncclUniqueId)),
                "every rank must run the same build");
  impl_ = std::make_unique<Impl>(ctx.device().index, grad_dtype);
  ncclUniqueId id;
  std::copy(unique_id.begin(), unique_id.end(), id.internal);
  CUDA_CHECK(cudaSetDevice(impl_->gpu));
  n.check(n.comm_init_rank(&impl_->comm, world, id, rank), "ncclCommInitRank");
}

std::vector<std::unique_ptr<NcclSync>> NcclSync::all(const std::vector<Context*>& ctxs, DType grad_dtype) {
  const cuda::NcclLib& n = lib();
  std::vector<int> devs;
  for (Context* c : ctxs) {
    if (!c->is_cuda()) throw Error(ErrorKind::Usage, "NCCL averages GPU memory", "use CUDA contexts");
    devs.push_back(c->device().index);
  }
  std::vector<ncclComm_t> comms(ctxs.size());
  n.check(n.comm_init_all(comms.data(), static_cast<int>(devs.size()), devs.data()), "ncclCommInitAll");
  std::vector<std::unique_ptr<NcclSync>> out;
  for (size_t i = 0; i < ctxs.size(); ++i) {
    CUDA_CHECK(cudaSetDevice(devs[i]));
    auto impl = std::make_unique<Impl>(devs[i], grad_dtype);
    impl->comm = comms[i];
    out.push_back(std::unique_ptr<NcclSync>(new NcclSync(std::move(impl), static_cast<int>(i), static_cast<int>(ctxs.size()))));
  }
  return out;
}

NcclSync::~NcclSync() = default;

void NcclSync::reduce(Context& ctx, int /*bucket*/, float* grads, std::int64_t floats) {
  Impl& m = *impl_;
  const cuda::NcclLib& n = lib();
  const cudaStream_t cs = m.comm_stream();
  CUDA_CHECK(cudaEventRecord(m.ready.get(), stream_of(ctx)));
  CUDA_CHECK(cudaStreamWaitEvent(cs, m.ready.get(), 0));
  const size_t count = static_cast<size_t>(floats);
  if (m.grad_dtype == DType::F32) {
    n.check(n.all_reduce(grads, grads, count, ncclFloat32, ncclAvg, m.comm, cs), "ncclAllReduce");
    return;
  }
  if (m.stage.numel() < floats) m.stage = m.comm_ctx->empty({floats}, DType::BF16, "bf16 gradients in flight");
  ops::cast(*m.comm_ctx, {floats, DType::F32, DType::BF16}, m.stage.raw(), grads);
  n.check(n.all_reduce(m.stage.raw(), m.stage.raw(), count, ncclBfloat16, ncclAvg, m.comm, cs), "ncclAllReduce");
  ops::cast(*m.comm_ctx, {floats, DType::BF16, DType::F32}, grads, m.stage.raw());
}

void NcclSync::finish(Context& ctx) {
  CUDA_CHECK(cudaEventRecord(impl_->done.get(), impl_->comm_stream()));
  CUDA_CHECK(cudaStreamWaitEvent(stream_of(ctx), impl_->done.get(), 0));
}

void NcclSync::broadcast(Context& ctx, float* data, std::int64_t floats) {
  const cuda::NcclLib& n = lib();
  n.check(n.broadcast(data, data, static_cast<size_t>(floats), ncclFloat32, 0, impl_->comm, stream_of(ctx)),
          "ncclBroadcast");
  wait(ctx, std::chrono::minutes(5));
}

void NcclSync::wait(Context& ctx, std::chrono::milliseconds timeout) {
  Impl& m = *impl_;
  const cuda::NcclLib& n = lib();
  const auto t0 = std::chrono::steady_clock::now();
  for (;;) {
    const cudaError_t q = cudaStreamQuery(stream_of(ctx));
    if (q == cudaSuccess) return;
    if (q != cudaErrorNotReady) CUDA_CHECK(q);
    ncclResult_t async = ncclSuccess;
    n.check(n.comm_get_async_error(m.comm, &async), "ncclCommGetAsyncError");
    const bool late = std::chrono::steady_clock::now() - t0 > timeout;
    if ((async != ncclSuccess && async != ncclInProgress) || late) {
      m.aborted = true;
      (void)n.comm_abort(m.comm);
      m.comm = nullptr;
      if (late)
        throw Error(ErrorKind::Device,
                    fmt::format("rank {} of {}: a step with collectives did not finish within {} s", rank_, world_,
                                std::chrono::duration<double>(timeout).count()),
                    "a peer rank died or stopped (its own output says why): the job cannot go on");
      throw Error(ErrorKind::Device, fmt::format("rank {} of {}: NCCL failed: {}", rank_, world_, n.error_string(async)),
                  "NCCL_DEBUG=WARN says more; a peer rank may have died");
    }
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

}  // namespace roofline::engine::dist

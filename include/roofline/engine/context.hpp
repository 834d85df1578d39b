// Where ops run. One narrow interface, three backends:
//   CpuRef  plain loops, obviously correct: the reference every other path is
//           checked against (and, templated on double, the gradient checks);
//   Cpu     the fast CPU path (own SIMD kernels per ISA, OpenMP, fused epilogues);
//   Cuda    cuBLASLt and our own kernels on one stream of one GPU.
// A Context owns what its backend needs: for Cuda the stream, the cuBLASLt
// handle and workspace and a cache of matmul plans (opaque here so that this
// header needs no CUDA headers). Ops are enqueued on the context's stream and
// never synchronise the host unless they say so.
#pragma once
#include <memory>
#include <string>

#include "roofline/engine/tensor.hpp"

namespace roofline::engine {

enum class Backend { CpuRef, Cpu, Cuda };
const char* to_string(Backend b);             // "cpu-ref", "cpu", "cuda"
Backend parse_backend(const std::string& s);  // throws a usage Error

struct CudaState;  // src/engine/cuda/cuda_state.hpp (CUDA builds only)

class Context {
 public:
  // Cuda: throws Error(Device) when `gpu` is not usable, Error(Unsupported) in
  // a build without CUDA.
  explicit Context(Backend backend, int gpu = 0);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  Backend backend() const { return backend_; }
  Device device() const { return backend_ == Backend::Cuda ? Device::cuda(gpu_) : Device::cpu(); }
  bool is_cuda() const { return backend_ == Backend::Cuda; }

  // Memory on this context's device.
  Tensor empty(const Shape& shape, DType dtype = DType::F32, const char* what = "tensor") const;
  // Enqueues a copy on this context's stream (host memory should be pinned for
  // it to be asynchronous; pageable host memory makes the copy synchronous).
  void copy_async(void* dst, Device dst_device, const void* src, Device src_device, size_t bytes) const;
  void memset_async(void* dst, int value, size_t bytes) const;
  // Waits for everything enqueued so far (no-op on the CPU backends).
  void synchronize() const;

  CudaState* cuda() const { return cuda_.get(); }  // null unless backend() == Cuda
  // cudaStream_t as void* (null on the CPU backends).
  void* stream() const;
  // Device bytes of the scratch buffers the context's ops keep (GPU: the
  // library workspace, the im2col matrix, attention's backward matrices;
  // the CPU backends: 0). Buffers a larger one replaced are not counted.
  size_t scratch_bytes() const;

  // CPU backends: the OpenMP thread count used by the fast path.
  int cpu_threads() const;

 private:
  Backend backend_;
  int gpu_ = 0;
  std::shared_ptr<CudaState> cuda_;
};

// Marks a range of host activity for Nsight/CUPTI (NVTX push/pop); a no-op in
// builds without CUDA. Names follow "<model>/<layer>/<pass>".
// An NVTX range around a scope; the engine names them "<model>/<layer>/<pass>".
// Each also keeps its name on a per-thread stack, so that code which is not an
// NVTX client (the hardware counters' profiler, bench --counters) can ask
// which layer and pass a kernel is launched in.
class NvtxRange {
 public:
  explicit NvtxRange(const char* name);
  explicit NvtxRange(const std::string& name) : NvtxRange(name.c_str()) {}
  ~NvtxRange();
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;
};
// The innermost NvtxRange open on this thread ("" outside any).
std::string current_nvtx_range();

}  // namespace roofline::engine

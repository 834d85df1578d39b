// What a Cuda Context owns: its device, a non-blocking stream, the cuBLASLt
// handle, the cuDNN handle (made on the first cuDNN convolution), one
// workspace both libraries and our kernels share, matmul plans cached by
// shape (descriptor, layouts and the heuristic's algorithm, found once per
// shape) and cuDNN convolution plans cached by shape, pass, dtype and format.
// Included only by *_gpu.cpp and *.cu files.
#pragma once
#include <cublasLt.h>
#include <cuda_runtime.h>
#include <cudnn_graph.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "roofline/cuda/check.hpp"
#include "roofline/cuda/memory.hpp"

#define CUBLAS_CHECK(call)                                                                                           \
  do {                                                                                                               \
    cublasStatus_t st_ = (call);                                                                                     \
    if (st_ != CUBLAS_STATUS_SUCCESS)                                                                                \
      ::roofline::cuda::throw_status("cuBLASLt", static_cast<int>(st_), cublasGetStatusString(st_), #call, __FILE__, \
                                     __LINE__);                                                                      \
  } while (0)

namespace roofline::engine {

// One GEMM shape in cuBLAS's column-major terms: C (m×n) = op(A) · op(B) [+ bias, act].
struct MatmulKey {
  bool ta = false, tb = false;
  std::int64_t m = 0, n = 0, k = 0, lda = 0, ldb = 0, ldc = 0;
  int epilogue = CUBLASLT_EPILOGUE_DEFAULT;  // cublasLtEpilogue_t (0 is none of its values)
  int ab_type = CUDA_R_32F;              // cudaDataType_t of A and B
  int c_type = CUDA_R_32F;               // ... of C and D
  int compute = CUBLAS_COMPUTE_32F;      // cublasComputeType_t (CUBLAS_COMPUTE_32F_FAST_TF32: TF32 allowed)
  int bias_type = -1;                    // CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, -1: cuBLASLt's default (D's type)
  // Strided batches (1: one GEMM): the i-th GEMM's A, B, C start at i·sa, i·sb, i·sc elements.
  std::int64_t batch = 1, sa = 0, sb = 0, sc = 0;
  auto tie() const {
    return std::tie(ta, tb, m, n, k, lda, ldb, ldc, epilogue, ab_type, c_type, compute, bias_type, batch, sa, sb, sc);
  }
  bool operator<(const MatmulKey& o) const { return tie() < o.tie(); }
};

struct MatmulPlan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulAlgo_t algo{};
  bool has_algo = false;
  // A bf16/fp16 copy of an fp32 bias, for GEMMs whose epilogue takes the
  // bias only in D's type (allocated with the plan, written before each call).
  cuda::DeviceBuffer<char> bias_copy;
  bool noted = false;  // its path recorded in CudaState::paths
  MatmulPlan() = default;
  MatmulPlan(const MatmulPlan&) = delete;
  MatmulPlan& operator=(const MatmulPlan&) = delete;
  ~MatmulPlan();
};

// A cuDNN backend descriptor, destroyed with its owner.
class CudnnDesc {
 public:
  CudnnDesc() = default;
  explicit CudnnDesc(cudnnBackendDescriptor_t d) : d_(d) {}
  CudnnDesc(CudnnDesc&& o) noexcept : d_(o.d_) { o.d_ = nullptr; }
  CudnnDesc& operator=(CudnnDesc&& o) noexcept {
    if (this != &o) {
      reset();
      d_ = o.d_;
      o.d_ = nullptr;
    }
    return *this;
  }
  CudnnDesc(const CudnnDesc&) = delete;
  CudnnDesc& operator=(const CudnnDesc&) = delete;
  ~CudnnDesc() { reset(); }
  void reset() noexcept {
    if (d_) cudnnBackendDestroyDescriptor(d_);
    d_ = nullptr;
  }
  cudnnBackendDescriptor_t get() const { return d_; }
  cudnnBackendDescriptor_t* out() { return &d_; }  // for calls that fill a created descriptor

 private:
  cudnnBackendDescriptor_t d_ = nullptr;
};

// One cuDNN convolution call: the whole shape, the pass, dtype, format and
// TF32 policy, the forward's fused epilogue, and the alignment of the
// pointers (a plan is built for the alignment it is told).
struct ConvKey {
  std::int64_t n = 0, c = 0, h = 0, w = 0, k = 0, r = 0, s = 0, stride = 0, pad = 0, groups = 0;
  int pass = 0;    // 0 forward, 1 input gradient, 2 weight gradient
  int format = 0;  // MemoryFormat
  int dtype = 0;   // DType
  bool tf32 = false;
  bool bias = false, relu = false;  // forward only
  int align = 0;                    // bytes every pointer is aligned to (at most 16)
  auto tie() const {
    return std::tie(n, c, h, w, k, r, s, stride, pad, groups, pass, format, dtype, tf32, bias, relu, align);
  }
  bool operator<(const ConvKey& o) const { return tie() < o.tie(); }
};

// A finalized cuDNN execution plan and what it was built from.
struct ConvPlan {
  std::vector<CudnnDesc> keep;        // tensors, operations, graph, heuristics, engine config, engine, plan
  cudnnBackendDescriptor_t plan = nullptr;  // the execution plan (owned by `keep`)
  std::vector<std::int64_t> uids;     // the variant pack's tensor ids, in the order the call passes pointers
  std::int64_t cudnn_workspace = 0;   // bytes the plan needs
  std::int64_t workspace = 0;         // bytes the whole pass needs (cuDNN's and our scratch)
  bool fused = false;                 // forward: bias and ReLU run inside the plan
  bool lowp_dw = false;               // weight gradient: dw written in dtype to the workspace, then converted
  std::string how;                    // the path taken, for tests and messages
  double seconds = 0;                 // the plan's time per run when autotuned (0: not timed)
};

struct CudaState {
  // Sets the device before any member that allocates on it is built.
  struct DeviceScope {
    explicit DeviceScope(int d) { CUDA_CHECK(cudaSetDevice(d)); }
  };

  explicit CudaState(int gpu);
  ~CudaState();
  CudaState(const CudaState&) = delete;
  CudaState& operator=(const CudaState&) = delete;

  int device;
  DeviceScope scope;
  cuda::Stream stream;
  cublasLtHandle_t lt = nullptr;
  cudnnHandle_t dnn = nullptr;  // made by cudnn_handle() on first use, bound to `stream`
  // Shared by cuBLASLt, cuDNN and our kernels' partial sums (every op runs in
  // order on the one stream). Grown by ensure_workspace() when a new plan
  // needs more, which happens only on a plan's first use.
  cuda::DeviceBuffer<char> workspace;
  // Workspaces replaced by a larger one: kept until the context ends, since a
  // CUDA graph captured earlier may still read them.
  std::vector<cuda::DeviceBuffer<char>> retired_workspaces;
  // The im2col path's matrix, padded weights and partial weight gradients
  // (im2col.hpp): grown like the workspace, retired buffers kept with its.
  cuda::DeviceBuffer<char> im2col;
  // The GPU attention backward's packed Q, K, V, dO, score and probability
  // matrices (attention_backward.cu): grown like the workspace.
  cuda::DeviceBuffer<char> attention;
  std::map<MatmulKey, std::unique_ptr<MatmulPlan>> plans;
  std::map<ConvKey, std::unique_ptr<ConvPlan>> conv_plans;
  // What each library-backed op took on its first call (cuDNN engine, fused or
  // not, cuBLASLt epilogue), by the op's description: for tests and docs.
  std::map<std::string, std::string> paths;
  int sm_count = 0;
  int smem_optin = 0;  // the most dynamic shared memory one block may opt in to (bytes)
  // Scratch of the kernels that reduce across their whole grid (BatchNorm's
  // per-block partial sums and its finishing block's counter, batchnorm.cu):
  // allocated and zeroed by the context's first such call, of a fixed size the
  // grids are planned to fit, so no later call allocates and a captured graph's
  // pointers stay valid. The context's ops run in its stream's order, so one
  // scratch serves them all.
  cuda::DeviceBuffer<char> reduce_scratch;
};

inline cudaStream_t stream_of(const CudaState* s) { return s->stream.get(); }

// Grows the workspace to at least `bytes` (context_gpu.cpp). Only a plan's
// first use calls it; it refuses (Error Internal) while the stream is being
// captured into a CUDA graph, where a new allocation would not be replayed.
void ensure_workspace(CudaState* s, size_t bytes, const char* what);
// Grows `buf`, one of the context's scratch buffers, to at least `bytes`
// likewise (the old one retired with the workspaces); returns its start.
char* ensure_scratch(CudaState* s, cuda::DeviceBuffer<char>& buf, size_t bytes, const char* what);
// The cached plan of a GEMM (linear_gpu.cpp); has_algo false when cuBLASLt has
// none for it. run_matmul: C = op(A)·op(B) [+ bias] with alpha 1, beta 0.
struct MatmulPlan;
MatmulPlan* matmul_plan(CudaState* st, const MatmulKey& key);
void run_matmul(CudaState* st, MatmulPlan* p, const void* A, const void* B, void* C, const void* bias);
// Throws Error(Internal) naming `what` when the stream is being captured: a
// plan must be built on an eager call first.
void require_not_capturing(const CudaState* s, const std::string& what);
// The context's cuDNN handle, made on the first call (cudnn_graph_gpu.cpp).
cudnnHandle_t cudnn_handle(CudaState* s);

}  // namespace roofline::engine

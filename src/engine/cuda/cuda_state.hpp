// What a Cuda Context owns: its device, a non-blocking stream, the cuBLASLt
// handle with a workspace, and matmul plans cached by shape (descriptor,
// layouts and the heuristic's algorithm, found once per shape). Included only
// by *_gpu.cpp and *.cu files.
#pragma once
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>

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
  int epilogue = 0;  // cublasLtEpilogue_t
  auto tie() const { return std::tie(ta, tb, m, n, k, lda, ldb, ldc, epilogue); }
  bool operator<(const MatmulKey& o) const { return tie() < o.tie(); }
};

struct MatmulPlan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulAlgo_t algo{};
  bool has_algo = false;
  MatmulPlan() = default;
  MatmulPlan(const MatmulPlan&) = delete;
  MatmulPlan& operator=(const MatmulPlan&) = delete;
  ~MatmulPlan();
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
  cuda::DeviceBuffer<char> workspace;
  std::map<MatmulKey, std::unique_ptr<MatmulPlan>> plans;
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

}  // namespace roofline::engine

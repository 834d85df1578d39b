// Linear on the GPU through cuBLASLt: forward with the bias (and ReLU) fused
// into the GEMM's epilogue, both backward GEMMs, and the bias gradient as a
// column-sum kernel. Plans (descriptor, layouts, algorithm) are cached per
// shape in the context, so a step does no heuristic queries after the first.
#include <cublasLt.h>
#include <fmt/format.h>

#include "roofline/core/error.hpp"
#include "src/engine/cuda/cuda_state.hpp"
#include "src/engine/cuda/elementwise.cuh"
#include "src/engine/cuda/ops_cuda.hpp"

namespace roofline::engine::cuda_ops {

namespace {

// Builds (or finds) the plan for C (m×n) = op(A) · op(B) in column-major
// terms, with `epilogue`; returns null when cuBLASLt has no algorithm for the
// epilogue (the caller then runs the plain GEMM and our epilogue kernel).
MatmulPlan* plan(CudaState* st, const MatmulKey& key) {
  auto it = st->plans.find(key);
  if (it != st->plans.end()) return it->second.get();
  auto p = std::make_unique<MatmulPlan>();
  CUBLAS_CHECK(cublasLtMatmulDescCreate(&p->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const cublasOperation_t ta = key.ta ? CUBLAS_OP_T : CUBLAS_OP_N, tb = key.tb ? CUBLAS_OP_T : CUBLAS_OP_N;
  CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
  CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
  const auto epi = static_cast<cublasLtEpilogue_t>(key.epilogue);
  CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi));
  // Stored shapes: op(A) is m×k, so A is m×k (N) or k×m (T); op(B) is k×n.
  CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&p->a, CUDA_R_32F, static_cast<std::uint64_t>(key.ta ? key.k : key.m),
                                          static_cast<std::uint64_t>(key.ta ? key.m : key.k), key.lda));
  CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&p->b, CUDA_R_32F, static_cast<std::uint64_t>(key.tb ? key.n : key.k),
                                          static_cast<std::uint64_t>(key.tb ? key.k : key.n), key.ldb));
  CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&p->c, CUDA_R_32F, static_cast<std::uint64_t>(key.m),
                                          static_cast<std::uint64_t>(key.n), key.ldc));
  cublasLtMatmulPreference_t pref = nullptr;
  CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  const std::uint64_t ws = st->workspace.bytes();
  cublasStatus_t status =
      cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  if (status == CUBLAS_STATUS_SUCCESS)
    status = cublasLtMatmulAlgoGetHeuristic(st->lt, p->desc, p->a, p->b, p->c, p->c, pref, 1, &result, &found);
  cublasLtMatmulPreferenceDestroy(pref);
  if (status != CUBLAS_STATUS_SUCCESS && status != CUBLAS_STATUS_NOT_SUPPORTED)
    ::roofline::cuda::throw_status("cuBLASLt", static_cast<int>(status), cublasGetStatusString(status),
                                   "cublasLtMatmulAlgoGetHeuristic", __FILE__, __LINE__);
  if (found > 0) {
    p->algo = result.algo;
    p->has_algo = true;
  }
  MatmulPlan* raw = p.get();
  st->plans.emplace(key, std::move(p));
  return raw;
}

void matmul(CudaState* st, MatmulPlan* p, const float* A, const float* B, float* C, const float* bias) {
  if (bias)
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias));
  const float alpha = 1.0f, beta = 0.0f;  // beta 0: C is written, never read
  CUBLAS_CHECK(cublasLtMatmul(st->lt, p->desc, &alpha, A, p->a, B, p->b, &beta, C, p->c, C, p->c, &p->algo,
                              st->workspace.get(), st->workspace.bytes(), stream_of(st)));
}

MatmulPlan* required(CudaState* st, const MatmulKey& key) {
  MatmulPlan* p = plan(st, key);
  if (!p->has_algo)
    throw Error(ErrorKind::Device,
                fmt::format("cuBLASLt has no fp32 algorithm for a {}x{}x{} GEMM", key.m, key.n, key.k),
                "report the shape; the CPU backend (--device cpu) still works");
  return p;
}

CudaState* mut(const CudaState* st) { return const_cast<CudaState*>(st); }  // the plan cache is a cache

}  // namespace

namespace {

// out (n, out) row-major is C (out × n) column-major = A (out × in) · X (in × n),
// A = w (stored in×out column-major, op T) or wt (stored out×in, op N).
void linear_forward_gemm(const CudaState* cst, const ops::LinearShape& s, float* out, const float* in, const float* w,
                         const float* b, bool transposed) {
  CudaState* st = mut(cst);
  MatmulKey key{
      !transposed, false, s.out, s.n, s.in, transposed ? s.out : s.in, s.in, s.out, CUBLASLT_EPILOGUE_DEFAULT};
  const bool relu = s.act == ops::Activation::ReLU;
  if (b || relu) {
    MatmulKey fused = key;
    fused.epilogue = b ? (relu ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_BIAS) : CUBLASLT_EPILOGUE_RELU;
    MatmulPlan* p = plan(st, fused);
    if (p->has_algo) {
      matmul(st, p, w, in, out, b);
      return;
    }
    // No fused algorithm for this shape: the plain GEMM and our epilogue kernel.
    matmul(st, required(st, key), w, in, out, nullptr);
    launch_bias_act(st, s.n, s.out, out, b, relu);
    return;
  }
  matmul(st, required(st, key), w, in, out, nullptr);
}

}  // namespace

void linear_forward(const CudaState* cst, const ops::LinearShape& s, float* out, const float* in, const float* w,
                    const float* b) {
  if (linear_small_applies(s, in, w)) {
    linear_small_forward(cst, s, out, in, w, b);
    return;
  }
  linear_forward_gemm(cst, s, out, in, w, b, false);
}

void linear_forward_wt(const CudaState* cst, const ops::LinearShape& s, float* out, const float* in, const float* wt,
                       const float* b) {
  linear_forward_gemm(cst, s, out, in, wt, b, true);
}

void linear_backward_input(const CudaState* cst, const ops::LinearShape& s, float* din, const float* dpre,
                           const float* w) {
  CudaState* st = mut(cst);
  // din (n, in) row-major = C (in × n) = W (stored in×out, N) · dpre (out × n)
  MatmulKey key{false, false, s.in, s.n, s.out, s.in, s.out, s.in, CUBLASLT_EPILOGUE_DEFAULT};
  matmul(st, required(st, key), w, dpre, din, nullptr);
}

void linear_backward_weight(const CudaState* cst, const ops::LinearShape& s, float* dw, float* db, const float* dpre,
                            const float* in) {
  CudaState* st = mut(cst);
  // dw (out, in) row-major = C (in × out) = X (in × n, N) · dpreᵀ (stored out×n, T)
  MatmulKey key{false, true, s.in, s.out, s.n, s.in, s.out, s.in, CUBLASLT_EPILOGUE_DEFAULT};
  matmul(st, required(st, key), in, dpre, dw, nullptr);
  if (db) launch_column_sums(st, s.n, s.out, db, dpre);
}

}  // namespace roofline::engine::cuda_ops

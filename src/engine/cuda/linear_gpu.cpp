// Linear on the GPU through cuBLASLt, in fp32 (true fp32: CUBLAS_COMPUTE_32F;
// with tf32: CUBLAS_COMPUTE_32F_FAST_TF32), bf16 and fp16 (fp32 compute):
// forward with the bias (and ReLU) fused into the GEMM's epilogue, both
// backward GEMMs, the weight gradient always written in fp32, and the bias
// gradient as the GEMM's BGRADB epilogue (bf16/fp16) or a column-sum kernel.
// Plans (descriptor, layouts, algorithm) are cached per shape in the context,
// so a step does no heuristic queries after the first. What each pass took
// is recorded on its first call (linear_path()).
#include <cublasLt.h>
#include <fmt/format.h>

#include <utility>

#include "roofline/core/error.hpp"
#include "src/engine/cuda/cuda_state.hpp"
#include "src/engine/cuda/elementwise.cuh"
#include "src/engine/cuda/lowp.hpp"
#include "src/engine/cuda/ops_cuda.hpp"

namespace roofline::engine {

// Builds (or finds) the plan for C (m×n) = op(A) · op(B) in column-major
// terms, with the key's epilogue, types and batches; has_algo is false when
// cuBLASLt has no algorithm for them (the caller then takes another path).
MatmulPlan* matmul_plan(CudaState* st, const MatmulKey& key) {
  auto it = st->plans.find(key);
  if (it != st->plans.end()) return it->second.get();
  auto p = std::make_unique<MatmulPlan>();
  CUBLAS_CHECK(cublasLtMatmulDescCreate(&p->desc, static_cast<cublasComputeType_t>(key.compute), CUDA_R_32F));
  const cublasOperation_t ta = key.ta ? CUBLAS_OP_T : CUBLAS_OP_N, tb = key.tb ? CUBLAS_OP_T : CUBLAS_OP_N;
  CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
  CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
  const auto epi = static_cast<cublasLtEpilogue_t>(key.epilogue);
  CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi));
  cublasStatus_t status = CUBLAS_STATUS_SUCCESS;
  if (key.bias_type >= 0) {  // a type cuBLASLt refuses here means no algorithm, not an error
    const std::int32_t bias_type = key.bias_type;
    status = cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type, sizeof bias_type);
  }
  // Stored shapes: op(A) is m×k, so A is m×k (N) or k×m (T); op(B) is k×n.
  const auto ab = static_cast<cudaDataType_t>(key.ab_type), ct = static_cast<cudaDataType_t>(key.c_type);
  CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&p->a, ab, static_cast<std::uint64_t>(key.ta ? key.k : key.m),
                                          static_cast<std::uint64_t>(key.ta ? key.m : key.k), key.lda));
  CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&p->b, ab, static_cast<std::uint64_t>(key.tb ? key.n : key.k),
                                          static_cast<std::uint64_t>(key.tb ? key.k : key.n), key.ldb));
  CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&p->c, ct, static_cast<std::uint64_t>(key.m),
                                          static_cast<std::uint64_t>(key.n), key.ldc));
  if (key.batch > 1) {
    const std::int32_t count = static_cast<std::int32_t>(key.batch);
    const std::pair<cublasLtMatrixLayout_t, std::int64_t> layouts[] = {{p->a, key.sa}, {p->b, key.sb}, {p->c, key.sc}};
    for (const auto& [layout, stride] : layouts) {
      CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count));
      CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
                                                    sizeof stride));
    }
  }
  cublasLtMatmulPreference_t pref = nullptr;
  CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  const std::uint64_t ws = st->workspace.bytes();
  if (status == CUBLAS_STATUS_SUCCESS)
    status = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  if (status == CUBLAS_STATUS_SUCCESS)
    status = cublasLtMatmulAlgoGetHeuristic(st->lt, p->desc, p->a, p->b, p->c, p->c, pref, 1, &result, &found);
  cublasLtMatmulPreferenceDestroy(pref);
  if (status != CUBLAS_STATUS_SUCCESS && status != CUBLAS_STATUS_NOT_SUPPORTED &&
      status != CUBLAS_STATUS_INVALID_VALUE)
    ::roofline::cuda::throw_status("cuBLASLt", static_cast<int>(status), cublasGetStatusString(status),
                                   "cublasLtMatmulAlgoGetHeuristic", __FILE__, __LINE__);
  if (status == CUBLAS_STATUS_SUCCESS && found > 0) {
    p->algo = result.algo;
    p->has_algo = true;
  }
  MatmulPlan* raw = p.get();
  st->plans.emplace(key, std::move(p));
  return raw;
}

void run_matmul(CudaState* st, MatmulPlan* p, const void* A, const void* B, void* C, const void* bias) {
  if (bias)
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(p->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias));
  const float alpha = 1.0f, beta = 0.0f;  // beta 0: C is written, never read
  CUBLAS_CHECK(cublasLtMatmul(st->lt, p->desc, &alpha, A, p->a, B, p->b, &beta, C, p->c, C, p->c, &p->algo,
                              st->workspace.get(), st->workspace.bytes(), stream_of(st)));
}

}  // namespace roofline::engine

namespace roofline::engine::cuda_ops {

namespace {

cudaDataType_t cuda_type(DType t) {
  switch (t) {
    case DType::F32:
      return CUDA_R_32F;
    case DType::BF16:
      return CUDA_R_16BF;
    case DType::F16:
      return CUDA_R_16F;
    default:
      throw Error(ErrorKind::Internal, std::string("no cuBLASLt type for ") + to_string(t));
  }
}

// fp32 data: true fp32 unless the shape allows TF32; 16-bit data: fp32 accumulation.
int compute_of(const ops::LinearShape& s) {
  return s.dtype == DType::F32 && s.tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
}

MatmulPlan* required(CudaState* st, const MatmulKey& key, const ops::LinearShape& s) {
  MatmulPlan* p = matmul_plan(st, key);
  if (!p->has_algo)
    throw Error(ErrorKind::Device,
                fmt::format("cuBLASLt has no {} algorithm for a {}x{}x{} GEMM", to_string(s.dtype), key.m, key.n,
                            key.k),
                "report the shape; the CPU backend (--device cpu) still works in fp32");
  return p;
}

CudaState* mut(const CudaState* st) { return const_cast<CudaState*>(st); }  // the plan cache is a cache

std::string describe(const ops::LinearShape& s, Pass pass) {
  std::string extra;
  if (pass != Pass::InputGrad && s.bias) extra += pass == Pass::Forward ? " +bias" : " +db";
  if (pass == Pass::Forward && s.act == ops::Activation::ReLU) extra += " +relu";
  return fmt::format("linear {} (n={} in={} out={} {}{}{})", to_string(pass), s.n, s.in, s.out, to_string(s.dtype),
                     s.dtype == DType::F32 ? (s.tf32 ? " tf32" : " true-fp32") : "", extra);
}

// Records, once per plan, the path a pass took.
void note(CudaState* st, MatmulPlan* p, const ops::LinearShape& s, Pass pass, const std::string& how) {
  if (p->noted) return;
  p->noted = true;
  st->paths.emplace(describe(s, pass), how);
}

const char* epilogue_name(int e) {
  switch (e) {
    case CUBLASLT_EPILOGUE_BIAS:
      return "BIAS";
    case CUBLASLT_EPILOGUE_RELU:
      return "RELU";
    case CUBLASLT_EPILOGUE_RELU_BIAS:
      return "RELU_BIAS";
    case CUBLASLT_EPILOGUE_BGRADB:
      return "BGRADB";
    default:
      return "DEFAULT";
  }
}

MatmulKey typed(MatmulKey key, const ops::LinearShape& s, DType c_type) {
  key.ab_type = cuda_type(s.dtype);
  key.c_type = cuda_type(c_type);
  key.compute = compute_of(s);
  return key;
}

// out (n, out) row-major is C (out × n) column-major = A (out × in) · X (in × n),
// A = w (stored in×out column-major, op T) or wt (stored out×in, op N).
void linear_forward_gemm(const CudaState* cst, const ops::LinearShape& s, void* out, const void* in, const void* w,
                         const float* b, bool transposed) {
  CudaState* st = mut(cst);
  const MatmulKey key = typed({!transposed, false, s.out, s.n, s.in, transposed ? s.out : s.in, s.in, s.out,
                               CUBLASLT_EPILOGUE_DEFAULT},
                              s, s.dtype);
  const bool relu = s.act == ops::Activation::ReLU;
  if (b || relu) {
    MatmulKey fused = key;
    fused.epilogue = b ? (relu ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_BIAS) : CUBLASLT_EPILOGUE_RELU;
    const char* epi = epilogue_name(fused.epilogue);
    if (b && s.dtype != DType::F32) {
      // The fp32 bias straight into a 16-bit GEMM's epilogue, where cuBLASLt takes it ...
      MatmulKey f32_bias = fused;
      f32_bias.bias_type = CUDA_R_32F;
      MatmulPlan* p = matmul_plan(st, f32_bias);
      if (p->has_algo) {
        note(st, p, s, Pass::Forward, fmt::format("cuBLASLt {} epilogue with the fp32 bias", epi));
        run_matmul(st, p, w, in, out, b);
        return;
      }
      // ... else a copy of it in the output's type, written before each call.
      p = matmul_plan(st, fused);
      if (p->has_algo) {
        if (!p->bias_copy) {
          require_not_capturing(st, describe(s, Pass::Forward));
          p->bias_copy = cuda::DeviceBuffer<char>(static_cast<size_t>(s.out) * dtype_size(s.dtype), "bias copy");
        }
        note(st, p, s, Pass::Forward,
             fmt::format("cuBLASLt {} epilogue over a {} copy of the fp32 bias (no algorithm takes an fp32 bias "
                         "with {} output)",
                         epi, to_string(s.dtype), to_string(s.dtype)));
        launch_from_f32(st, s.dtype, s.out, p->bias_copy.get(), b);
        run_matmul(st, p, w, in, out, p->bias_copy.get());
        return;
      }
    } else {
      MatmulPlan* p = matmul_plan(st, fused);
      if (p->has_algo) {
        note(st, p, s, Pass::Forward, fmt::format("cuBLASLt {} epilogue", epi));
        run_matmul(st, p, w, in, out, b);
        return;
      }
    }
    // No fused algorithm for this shape: the plain GEMM and our epilogue kernel.
    MatmulPlan* p = required(st, key, s);
    note(st, p, s, Pass::Forward, "cuBLASLt GEMM, then roofline's bias/ReLU kernel (no fused epilogue algorithm)");
    run_matmul(st, p, w, in, out, nullptr);
    if (s.dtype == DType::F32)
      launch_bias_act(st, s.n, s.out, static_cast<float*>(out), b, relu);
    else
      launch_bias_act_any(st, s.dtype, MemoryFormat::NHWC, s.n, s.out, 1, out, b, relu);
    return;
  }
  MatmulPlan* p = required(st, key, s);
  note(st, p, s, Pass::Forward, "cuBLASLt GEMM");
  run_matmul(st, p, w, in, out, nullptr);
}

}  // namespace

void linear_forward(const CudaState* cst, const ops::LinearShape& s, void* out, const void* in, const void* w,
                    const void* b) {
  if (s.bias_dtype != DType::F32 && b) {
    // The bias in the output's type: straight into the epilogue.
    CudaState* st = mut(cst);
    MatmulKey key = typed({true, false, s.out, s.n, s.in, s.in, s.in, s.out, CUBLASLT_EPILOGUE_DEFAULT}, s, s.dtype);
    key.epilogue = s.act == ops::Activation::ReLU ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_BIAS;
    MatmulPlan* p = required(st, key, s);
    note(st, p, s, Pass::Forward,
         fmt::format("cuBLASLt {} epilogue with the {} bias", epilogue_name(key.epilogue), to_string(s.bias_dtype)));
    run_matmul(st, p, w, in, out, b);
    return;
  }
  if (linear_small_applies(s, in, w)) {
    linear_small_forward(cst, s, static_cast<float*>(out), static_cast<const float*>(in),
                         static_cast<const float*>(w), static_cast<const float*>(b));
    return;
  }
  linear_forward_gemm(cst, s, out, in, w, static_cast<const float*>(b), false);
}

void linear_forward_wt(const CudaState* cst, const ops::LinearShape& s, float* out, const float* in, const float* wt,
                       const float* b) {
  linear_forward_gemm(cst, s, out, in, wt, b, true);
}

void linear_backward_input(const CudaState* cst, const ops::LinearShape& s, void* din, const void* dpre,
                           const void* w) {
  CudaState* st = mut(cst);
  // din (n, in) row-major = C (in × n) = W (stored in×out, N) · dpre (out × n)
  const MatmulKey key = typed({false, false, s.in, s.n, s.out, s.in, s.out, s.in, CUBLASLT_EPILOGUE_DEFAULT}, s, s.dtype);
  MatmulPlan* p = required(st, key, s);
  note(st, p, s, Pass::InputGrad, "cuBLASLt GEMM");
  run_matmul(st, p, w, dpre, din, nullptr);
}

void linear_backward_weight(const CudaState* cst, const ops::LinearShape& s, float* dw, float* db, const void* dpre,
                            const void* in) {
  CudaState* st = mut(cst);
  // dw (out, in) row-major fp32 = C (in × out) = X (in × n, N) · dpreᵀ (stored out×n, T)
  const MatmulKey key = typed({false, true, s.in, s.out, s.n, s.in, s.out, s.in, CUBLASLT_EPILOGUE_DEFAULT}, s,
                              DType::F32);
  if (db && s.dtype != DType::F32) {
    // db = Σ over the GEMM's k (the batch) of op(B) = dpreᵀ: BGRADB, fp32 like D.
    MatmulKey grad = key;
    grad.epilogue = CUBLASLT_EPILOGUE_BGRADB;
    MatmulPlan* p = matmul_plan(st, grad);
    if (p->has_algo) {
      note(st, p, s, Pass::WeightGrad, "cuBLASLt GEMM with the BGRADB epilogue (fp32 dw and db)");
      run_matmul(st, p, in, dpre, dw, db);
      return;
    }
  }
  MatmulPlan* p = required(st, key, s);
  run_matmul(st, p, in, dpre, dw, nullptr);
  if (!db) {
    note(st, p, s, Pass::WeightGrad, "cuBLASLt GEMM (fp32 dw)");
    return;
  }
  if (s.dtype == DType::F32) {
    note(st, p, s, Pass::WeightGrad, "cuBLASLt GEMM (fp32 dw), db by roofline's column sums");
    launch_column_sums(st, s.n, s.out, db, static_cast<const float*>(dpre));
    return;
  }
  note(st, p, s, Pass::WeightGrad,
       "cuBLASLt GEMM (fp32 dw), db by roofline's channel sums (no BGRADB algorithm for this shape)");
  const std::int64_t scratch = channel_sums_scratch(st, MemoryFormat::NHWC, s.n, s.out, 1);
  ensure_workspace(st, static_cast<size_t>(scratch) * sizeof(float), "a bias-gradient sum");
  launch_channel_sums(st, s.dtype, MemoryFormat::NHWC, s.n, s.out, 1, db, dpre,
                      reinterpret_cast<float*>(st->workspace.get()));
}

std::string linear_path(const CudaState* st, const ops::LinearShape& s, Pass pass) {
  if (pass == Pass::Forward && linear_small_applies(s, nullptr, nullptr))
    return "roofline's small-layer kernel (linear_small.cu)";
  const auto it = st->paths.find(describe(s, pass));
  return it == st->paths.end() ? std::string() : it->second;
}

}  // namespace roofline::engine::cuda_ops

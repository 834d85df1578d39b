// The library reference for the tensor-core ceilings: one large cuBLASLt GEMM
// per type (n x n x n, "TN": A and B both K-major, which FP8 requires and which
// matches the wgmma kernels), random operands, the fastest of the heuristic's
// top candidates. FP8 runs with CUBLASLT_MATMUL_DESC_FAST_ACCUM, the plain
// tensor-core accumulation that the wgmma kernel measures too.
#include <cublasLt.h>
#include <cublas_v2.h>

#include <fmt/format.h>

#include <memory>
#include <vector>

#include "roofline/core/strings.hpp"
#include "roofline/cuda/check.hpp"
#include "src/ceilings/gpu/session.hpp"

#define LT_CHECK(call)                                                                                   \
  do {                                                                                                   \
    cublasStatus_t st_ = (call);                                                                         \
    if (st_ != CUBLAS_STATUS_SUCCESS)                                                                    \
      ::roofline::cuda::throw_status("cuBLASLt", static_cast<int>(st_), cublasGetStatusString(st_), #call, \
                                     __FILE__, __LINE__);                                                \
  } while (0)

namespace roofline::ceilings::gpu {

namespace {

struct LtConfig {
  cudaDataType_t ab, cd, scale;
  cublasComputeType_t compute;
  const char* types;  // for people
};

LtConfig config_of(TensorType t) {
  switch (t) {
    case TensorType::TF32:
      return {CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, "FP32 data, TF32 tensor math"};
    case TensorType::FP16: return {CUDA_R_16F, CUDA_R_16F, CUDA_R_32F, CUBLAS_COMPUTE_32F, "FP16 -> FP16, FP32 accumulate"};
    case TensorType::BF16:
      return {CUDA_R_16BF, CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F, "BF16 -> BF16, FP32 accumulate"};
    case TensorType::FP8:
      return {CUDA_R_8F_E4M3, CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F, "FP8 E4M3 -> BF16, fast accumulation"};
    case TensorType::INT8: return {CUDA_R_8I, CUDA_R_32I, CUDA_R_32I, CUBLAS_COMPUTE_32I, "INT8 -> INT32"};
  }
  return {};
}

size_t size_of(cudaDataType_t t) {
  switch (t) {
    case CUDA_R_32F:
    case CUDA_R_32I: return 4;
    case CUDA_R_16F:
    case CUDA_R_16BF: return 2;
    default: return 1;
  }
}

struct HandleDeleter {
  void operator()(cublasLtContext* h) const { cublasLtDestroy(h); }
};
struct DescDeleter {
  void operator()(cublasLtMatmulDescOpaque_t* d) const { cublasLtMatmulDescDestroy(d); }
};
struct LayoutDeleter {
  void operator()(cublasLtMatrixLayoutOpaque_t* l) const { cublasLtMatrixLayoutDestroy(l); }
};
struct PrefDeleter {
  void operator()(cublasLtMatmulPreferenceOpaque_t* p) const { cublasLtMatmulPreferenceDestroy(p); }
};

using LayoutPtr = std::unique_ptr<cublasLtMatrixLayoutOpaque_t, LayoutDeleter>;

LayoutPtr make_layout(cudaDataType_t type, uint64_t rows, uint64_t cols, int64_t ld) {
  cublasLtMatrixLayout_t l = nullptr;
  LT_CHECK(cublasLtMatrixLayoutCreate(&l, type, rows, cols, ld));
  return LayoutPtr(l);
}

std::string algo_text(const cublasLtMatmulAlgo_t& algo) {
  int id = 0;
  uint32_t tile = 0, stages = 0;
  size_t written = 0;
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id, &written);
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof tile, &written);
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages, sizeof stages, &written);
  return fmt::format("algo {} tile {} stages {}", id, tile, stages);
}

}  // namespace

const measure::Figure* measure_cublaslt(Session& s, TensorType t, int n) {
  const LtConfig cfg = config_of(t);
  const size_t nn = static_cast<size_t>(n) * n;
  cuda::DeviceBuffer<char> a(nn * size_of(cfg.ab), "cuBLASLt A"), b(nn * size_of(cfg.ab), "cuBLASLt B"),
      d(nn * size_of(cfg.cd), "cuBLASLt D");
  const size_t workspace_bytes = 64ull << 20;
  cuda::DeviceBuffer<char> workspace(workspace_bytes, "cuBLASLt workspace");
  fill_values(a.get(), nn, t, 0x5eed1001u, s.stream());
  fill_values(b.get(), nn, t, 0x5eed1002u, s.stream());
  CUDA_CHECK(cudaMemsetAsync(d.get(), 0xFF, d.bytes(), s.stream()));

  cublasLtHandle_t raw_handle = nullptr;
  LT_CHECK(cublasLtCreate(&raw_handle));
  std::unique_ptr<cublasLtContext, HandleDeleter> handle(raw_handle);
  cublasLtMatmulDesc_t raw_desc = nullptr;
  LT_CHECK(cublasLtMatmulDescCreate(&raw_desc, cfg.compute, cfg.scale));
  std::unique_ptr<cublasLtMatmulDescOpaque_t, DescDeleter> desc(raw_desc);
  const cublasOperation_t op_t = CUBLAS_OP_T, op_n = CUBLAS_OP_N;
  LT_CHECK(cublasLtMatmulDescSetAttribute(desc.get(), CUBLASLT_MATMUL_DESC_TRANSA, &op_t, sizeof op_t));
  LT_CHECK(cublasLtMatmulDescSetAttribute(desc.get(), CUBLASLT_MATMUL_DESC_TRANSB, &op_n, sizeof op_n));
  if (t == TensorType::FP8) {
    const int8_t fast = 1;
    LT_CHECK(cublasLtMatmulDescSetAttribute(desc.get(), CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof fast));
  }
  // Column-major, as cuBLAS counts: A^T is k x n stored (A is n x k), B is k x n, D is n x n.
  LayoutPtr la = make_layout(cfg.ab, n, n, n), lb = make_layout(cfg.ab, n, n, n), ld = make_layout(cfg.cd, n, n, n);

  cublasLtMatmulPreference_t raw_pref = nullptr;
  LT_CHECK(cublasLtMatmulPreferenceCreate(&raw_pref));
  std::unique_ptr<cublasLtMatmulPreferenceOpaque_t, PrefDeleter> pref(raw_pref);
  LT_CHECK(cublasLtMatmulPreferenceSetAttribute(pref.get(), CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                &workspace_bytes, sizeof workspace_bytes));
  constexpr int kCandidates = 8;
  cublasLtMatmulHeuristicResult_t results[kCandidates] = {};
  int returned = 0;
  LT_CHECK(cublasLtMatmulAlgoGetHeuristic(handle.get(), desc.get(), la.get(), lb.get(), ld.get(), ld.get(), pref.get(),
                                          kCandidates, results, &returned));
  if (returned == 0)
    throw_unsupported(fmt::format("cuBLASLt offers no algorithm for a {} GEMM ({}) on this GPU", to_string(t), cfg.types));

  const float alpha_f = 1.0f, beta_f = 0.0f;
  const int32_t alpha_i = 1, beta_i = 0;
  const void* alpha = cfg.scale == CUDA_R_32I ? static_cast<const void*>(&alpha_i) : &alpha_f;
  const void* beta = cfg.scale == CUDA_R_32I ? static_cast<const void*>(&beta_i) : &beta_f;
  auto run = [&](const cublasLtMatmulAlgo_t& algo, cudaStream_t st) {
    LT_CHECK(cublasLtMatmul(handle.get(), desc.get(), alpha, a.get(), la.get(), b.get(), lb.get(), beta, d.get(),
                            ld.get(), d.get(), ld.get(), &algo, workspace.get(), workspace_bytes, st));
  };

  // The fastest candidate over a few runs each (the first run of each is a warm-up).
  int best = -1;
  double best_t = 0;
  std::vector<std::string> tried;
  for (int i = 0; i < returned; ++i) {
    if (results[i].state != CUBLAS_STATUS_SUCCESS) continue;
    try {
      s.time_once([&](cudaStream_t st) { run(results[i].algo, st); });
      double tmin = 0;
      for (int r = 0; r < 3; ++r) {
        const double ti = s.time_once([&](cudaStream_t st) { run(results[i].algo, st); });
        tmin = r == 0 ? ti : std::min(tmin, ti);
      }
      tried.push_back(fmt::format("{}: {:.3f} ms", algo_text(results[i].algo), tmin * 1e3));
      if (best < 0 || tmin < best_t) best = i, best_t = tmin;
    } catch (const Error& e) {
      tried.push_back(fmt::format("{}: failed ({})", algo_text(results[i].algo), e.what()));
    }
  }
  if (best < 0) throw_device(fmt::format("every cuBLASLt {} candidate failed: {}", to_string(t), join(tried, "; ")));

  measure::Measurement m = s.timer().measure([&](cudaStream_t st) { run(results[best].algo, st); }, s.measure_options());
  const double flops = 2.0 * n * static_cast<double>(n) * n;
  measure::Figure f;
  f.name = std::string(to_string(t)) + ".tensor.cublaslt";
  f.label = fmt::format("{} tensor core, cuBLASLt GEMM {}^3", to_string(t), n);
  f.unit = t == TensorType::INT8 ? "OP/s" : "FLOP/s";
  f.precision = to_string(t);
  f.level = "tensor";
  f.method = fmt::format("cuBLASLt {}^3 TN GEMM ({}), {} (best of {} heuristic candidates)", n, cfg.types,
                         algo_text(results[best].algo), tried.size());
  f.value = flops / m.time.median;
  f.measurement = std::move(m);
  f.params["n"] = n;
  f.params["flops_per_run"] = flops;
  f.params["candidates"] = tried;
  f.params["workspace_bytes"] = workspace_bytes;
  s.add(std::move(f));
  return s.find(std::string(to_string(t)) + ".tensor.cublaslt");
}

}  // namespace roofline::ceilings::gpu

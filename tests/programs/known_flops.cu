// Kernels with exactly known FLOPs and bytes (see known_flops.hpp). Check the
// machine code with `cuobjdump -sass build/tests/programs/libknown_flops_kernels.a`:
// the FMA loops must contain only FFMA / HFMA2 / HFMA2.BF16 as floating-point
// arithmetic, the polynomial loop only FADD and FMUL.
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>

#include "tests/programs/known_flops.hpp"

namespace roofline::testprog {

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}
void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string(what) + ": cuBLAS status " + std::to_string(int(s)));
}
#define KF_CHECK(call) check((call), #call)

// ------------------------------------------------------------------ kernels

__global__ void __launch_bounds__(256)
    kf_fma_f32(const float* __restrict__ x, float* __restrict__ y, float b, float c, int iters) {
  const std::uint64_t i = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x;
  float a[kFmaChains];
#pragma unroll
  for (int k = 0; k < kFmaChains; ++k) a[k] = x[i * kFmaChains + k];
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int k = 0; k < kFmaChains; ++k) a[k] = fmaf(a[k], b, c);
  }
#pragma unroll
  for (int k = 0; k < kFmaChains; ++k) y[i * kFmaChains + k] = a[k];
}

template <class T2>
__global__ void __launch_bounds__(256) kf_fma_x2(const T2* __restrict__ x, T2* __restrict__ y, T2 b, T2 c, int iters) {
  const std::uint64_t i = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x;
  T2 a[kFmaChains];
#pragma unroll
  for (int k = 0; k < kFmaChains; ++k) a[k] = x[i * kFmaChains + k];
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int k = 0; k < kFmaChains; ++k) a[k] = __hfma2(a[k], b, c);
  }
#pragma unroll
  for (int k = 0; k < kFmaChains; ++k) y[i * kFmaChains + k] = a[k];
}

// The seed's compute_k_terms: b[i] = a + a^2 + ... + a^k, one FADD and one FMUL
// per term. The _rn intrinsics keep nvcc from contracting them into FFMA.
__global__ void kf_poly(const float* __restrict__ a, float* __restrict__ b, int n, int k) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    const float x = a[i];
    float result = 0.0f, power = x;
    for (int j = 0; j < k; ++j) {
      result = __fadd_rn(result, power);
      power = __fmul_rn(power, x);
    }
    b[i] = result;
  }
}

__global__ void kf_copy(const float4* __restrict__ x, float4* __restrict__ y) {
  const std::uint64_t i = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x;
  y[i] = x[i];
}

// XOR of every 32-bit word of x, one result per block: integer work only, and
// 4 bytes written per block. Reads with ordinary loads (allocating in L2).
__global__ void __launch_bounds__(256) kf_read(const uint4* __restrict__ x, std::uint64_t n, unsigned* out) {
  unsigned acc = 0;
  for (std::uint64_t i = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::uint64_t(gridDim.x) * blockDim.x) {
    const uint4 v = x[i];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) acc ^= __shfl_xor_sync(0xffffffffu, acc, o);
  __shared__ unsigned warp_acc[8];
  if ((threadIdx.x & 31) == 0) warp_acc[threadIdx.x >> 5] = acc;
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned t = 0;
    for (int w = 0; w < 8; ++w) t ^= warp_acc[w];
    out[blockIdx.x] = t;
  }
}

// Fresh pseudo-random inputs in [lo, hi) from a per-run seed (hash of index and seed).
__device__ __forceinline__ float kf_uniform(std::uint64_t i, std::uint64_t seed, float lo, float hi) {
  std::uint64_t z = i * 0x9E3779B97F4A7C15ull + seed;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return lo + (hi - lo) * float(z >> 40) * (1.0f / 16777216.0f);
}
template <class T>
__global__ void kf_fill(T* p, std::uint64_t n, std::uint64_t seed, float lo, float hi) {
  for (std::uint64_t i = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::uint64_t(gridDim.x) * blockDim.x)
    p[i] = T(kf_uniform(i, seed, lo, hi));
}

template <class T>
void fill(T* p, std::uint64_t n, std::uint64_t seed, float lo, float hi) {
  kf_fill<T><<<1024, 256>>>(p, n, seed, lo, hi);
  KF_CHECK(cudaGetLastError());
}

template <class T>
T* dalloc(std::uint64_t count) {
  void* p = nullptr;
  KF_CHECK(cudaMalloc(&p, count * sizeof(T)));
  return static_cast<T*>(p);
}

template <class T>
std::vector<T> download(const T* d, std::uint64_t offset, std::uint64_t count) {
  std::vector<T> h(count);
  KF_CHECK(cudaMemcpy(h.data(), d + offset, count * sizeof(T), cudaMemcpyDeviceToHost));
  return h;
}

double rel_err(double got, double want, double scale) { return std::fabs(got - want) / std::max(scale, 1e-30); }

}  // namespace

// ------------------------------------------------------------------ state

struct KnownFlops::Impl {
  Sizes s;
  std::uint64_t seed = 0;
  float fb = 0.999f, fc = 0.001f;  // FMA loop constants: iterates stay near c / (1 - b)
  float *fx = nullptr, *fy = nullptr;
  __half2 *hx = nullptr, *hy = nullptr;
  __nv_bfloat162 *bx = nullptr, *by = nullptr;
  float *pa = nullptr, *pb = nullptr;
  float4 *cx = nullptr, *cy = nullptr;
  unsigned* rx = nullptr;                                     // read's per-block XORs (kReadBlocks)
  __nv_bfloat16 *ga = nullptr, *gb = nullptr, *gd = nullptr;  // A (K x M, col-major), B (K x N), D (M x N)
  float *ta = nullptr, *tb = nullptr, *td = nullptr;
  void* workspace = nullptr;
  std::size_t workspace_bytes = 64ull << 20;
  cublasLtHandle_t lt = nullptr;

  void gemm(bool bf16);
};

void KnownFlops::Impl::gemm(bool bf16) {
  const int M = s.gemm_m, N = s.gemm_n, K = s.gemm_k;
  const cudaDataType_t dt = bf16 ? CUDA_R_16BF : CUDA_R_32F;
  const cublasComputeType_t ct = bf16 ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_32F_FAST_TF32;
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, ld = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  struct Cleanup {
    cublasLtMatmulDesc_t& op;
    cublasLtMatrixLayout_t &la, &lb, &ld;
    cublasLtMatmulPreference_t& pref;
    ~Cleanup() {
      if (pref) cublasLtMatmulPreferenceDestroy(pref);
      if (ld) cublasLtMatrixLayoutDestroy(ld);
      if (lb) cublasLtMatrixLayoutDestroy(lb);
      if (la) cublasLtMatrixLayoutDestroy(la);
      if (op) cublasLtMatmulDescDestroy(op);
    }
  } cleanup{op, la, lb, ld, pref};
  // D = op(A) * B with op(A) = A^T: both operands K-major ("TN"), the layout
  // wgmma reads directly for BF16 and TF32.
  KF_CHECK(cublasLtMatmulDescCreate(&op, ct, CUDA_R_32F));
  const cublasOperation_t ta_op = CUBLAS_OP_T, tb_op = CUBLAS_OP_N;
  KF_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta_op, sizeof(ta_op)));
  KF_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb_op, sizeof(tb_op)));
  KF_CHECK(cublasLtMatrixLayoutCreate(&la, dt, K, M, K));
  KF_CHECK(cublasLtMatrixLayoutCreate(&lb, dt, K, N, K));
  KF_CHECK(cublasLtMatrixLayoutCreate(&ld, dt, M, N, M));
  KF_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  KF_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace_bytes,
                                                sizeof(workspace_bytes)));
  cublasLtMatmulHeuristicResult_t heur{};
  int found = 0;
  KF_CHECK(cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, ld, ld, pref, 1, &heur, &found));
  if (found < 1) throw std::runtime_error("cuBLASLt found no algorithm for the known-FLOPs GEMM");
  const float alpha = 1.0f, beta = 0.0f;
  const void* A = bf16 ? static_cast<const void*>(ga) : static_cast<const void*>(ta);
  const void* B = bf16 ? static_cast<const void*>(gb) : static_cast<const void*>(tb);
  void* D = bf16 ? static_cast<void*>(gd) : static_cast<void*>(td);
  KF_CHECK(cublasLtMatmul(lt, op, &alpha, A, la, B, lb, &beta, D, ld, D, ld, &heur.algo, workspace, workspace_bytes,
                          nullptr));
}

KnownFlops::KnownFlops(const Sizes& s) : impl_(std::make_unique<Impl>()) {
  Impl& im = *impl_;
  im.s = s;
  if (s.fma_threads % 256 || s.poly_n % 256 || s.copy_bytes % (16 * 256))
    throw std::invalid_argument("known_flops sizes must be multiples of the 256-thread block");
  im.seed = std::random_device{}();
  const std::uint64_t fma_elems = s.fma_threads * kFmaChains;
  im.fx = dalloc<float>(fma_elems);
  im.fy = dalloc<float>(fma_elems);
  im.hx = dalloc<__half2>(fma_elems);
  im.hy = dalloc<__half2>(fma_elems);
  im.bx = dalloc<__nv_bfloat162>(fma_elems);
  im.by = dalloc<__nv_bfloat162>(fma_elems);
  im.pa = dalloc<float>(s.poly_n);
  im.pb = dalloc<float>(s.poly_n);
  const std::uint64_t n4 = s.copy_bytes / 16;
  im.cx = dalloc<float4>(n4);
  im.cy = dalloc<float4>(n4);
  im.rx = dalloc<unsigned>(kReadBlocks);
  const std::uint64_t mk = std::uint64_t(s.gemm_m) * s.gemm_k, nk = std::uint64_t(s.gemm_n) * s.gemm_k,
                      mn = std::uint64_t(s.gemm_m) * s.gemm_n;
  im.ga = dalloc<__nv_bfloat16>(mk);
  im.gb = dalloc<__nv_bfloat16>(nk);
  im.gd = dalloc<__nv_bfloat16>(mn);
  im.ta = dalloc<float>(mk);
  im.tb = dalloc<float>(nk);
  im.td = dalloc<float>(mn);
  KF_CHECK(cudaMalloc(&im.workspace, im.workspace_bytes));
  KF_CHECK(cublasLtCreate(&im.lt));

  fill(im.fx, fma_elems, im.seed + 1, 0.5f, 1.0f);
  fill(reinterpret_cast<__half*>(im.hx), 2 * fma_elems, im.seed + 2, 0.5f, 1.0f);
  fill(reinterpret_cast<__nv_bfloat16*>(im.bx), 2 * fma_elems, im.seed + 3, 0.5f, 1.0f);
  fill(im.pa, s.poly_n, im.seed + 4, 0.5f, 0.99f);  // |x| < 1 keeps x^100 finite
  fill(reinterpret_cast<float*>(im.cx), 4 * n4, im.seed + 5, -1.0f, 1.0f);
  fill(im.ga, mk, im.seed + 6, -1.0f, 1.0f);
  fill(im.gb, nk, im.seed + 7, -1.0f, 1.0f);
  fill(im.ta, mk, im.seed + 8, -1.0f, 1.0f);
  fill(im.tb, nk, im.seed + 9, -1.0f, 1.0f);
  // Poison the outputs so an unwritten element shows in check_phase.
  KF_CHECK(cudaMemset(im.fy, 0xFF, fma_elems * sizeof(float)));
  KF_CHECK(cudaMemset(im.pb, 0xFF, s.poly_n * sizeof(float)));
  KF_CHECK(cudaMemset(im.cy, 0xFF, n4 * sizeof(float4)));
  KF_CHECK(cudaMemset(im.rx, 0xFF, kReadBlocks * sizeof(unsigned)));
  KF_CHECK(cudaDeviceSynchronize());
}

KnownFlops::~KnownFlops() {
  Impl& im = *impl_;
  if (im.lt) cublasLtDestroy(im.lt);
  for (void* p :
       {static_cast<void*>(im.fx), static_cast<void*>(im.fy), static_cast<void*>(im.hx), static_cast<void*>(im.hy),
        static_cast<void*>(im.bx), static_cast<void*>(im.by), static_cast<void*>(im.pa), static_cast<void*>(im.pb),
        static_cast<void*>(im.cx), static_cast<void*>(im.cy), static_cast<void*>(im.rx), static_cast<void*>(im.ga),
        static_cast<void*>(im.gb), static_cast<void*>(im.gd), static_cast<void*>(im.ta), static_cast<void*>(im.tb),
        static_cast<void*>(im.td), im.workspace})
    if (p) cudaFree(p);
}

const Sizes& KnownFlops::sizes() const { return impl_->s; }

std::vector<std::string> KnownFlops::phases() {
  // read right after copy: copy leaves L2 full of dirty lines (docs/counters.md, "DRAM writes").
  return {"fp32_fma", "half2_fma", "bf16x2_fma", "poly", "copy", "read", "gemm_bf16", "gemm_tf32"};
}

Expected KnownFlops::expected(const std::string& phase) const {
  const Sizes& s = impl_->s;
  Expected e;
  e.phase = phase;
  const double fma_instr = double(s.fma_threads) * s.fma_iters * kFmaChains;
  const double fma_bytes = double(s.fma_threads) * kFmaChains * 4;  // 4-byte elements (float, half2, bf16x2)
  const double gemm_flops = 2.0 * s.gemm_m * s.gemm_n * double(s.gemm_k);
  auto zero_cuda = [&] {
    for (const char* op : {"dadd", "dmul", "dfma", "fadd", "fmul", "ffma", "hadd", "hmul", "hfma"})
      e.instructions[op] = 0;
  };
  // e.flops are the arithmetic's FLOPs; the counters add 4 x threads x hfma_moves_per_thread
  // to "fp16" (the moves, see known_flops.hpp).
  // hfma_moves_per_thread: from `cuobjdump -sass` of these kernels (nvcc 13.0, sm_90,
  // the first H100 run): kf_fma_f32, kf_fma_x2 (both) and kf_poly each zero one
  // register with `HFMA2.MMA Rd, -RZ, RZ, 0, 0` before their loop; kf_copy has none.
  if (phase == "fp32_fma") {
    e.kernel = "kf_fma_f32";
    zero_cuda();
    e.instructions["ffma"] = fma_instr;
    e.flops = {{"fp64", 0}, {"fp32", 2 * fma_instr}, {"fp16", 0}};
    e.dram_read_min = e.dram_write_min = fma_bytes;
    e.threads = s.fma_threads;
    e.hfma_moves_per_thread = 1;
  } else if (phase == "half2_fma" || phase == "bf16x2_fma") {
    e.kernel = phase == "half2_fma" ? "kf_fma_x2I7__half2" : "kf_fma_x2I14__nv_bfloat162";
    zero_cuda();
    e.instructions["hfma"] = fma_instr;  // packed instructions, two lanes each
    e.flops = {{"fp64", 0}, {"fp32", 0}, {"fp16", 4 * fma_instr}};
    e.dram_read_min = e.dram_write_min = fma_bytes;
    e.threads = s.fma_threads;
    e.hfma_moves_per_thread = 1;
  } else if (phase == "poly") {
    e.kernel = "kf_poly";
    zero_cuda();
    e.instructions["fadd"] = e.instructions["fmul"] = double(s.poly_n) * s.poly_k;
    e.flops = {{"fp64", 0}, {"fp32", 2.0 * double(s.poly_n) * s.poly_k}, {"fp16", 0}};
    e.dram_read_min = e.dram_write_min = 4.0 * double(s.poly_n);
    e.streaming = true;
    e.threads = s.poly_n;
    e.hfma_moves_per_thread = 1;
  } else if (phase == "copy") {
    e.kernel = "kf_copy";
    zero_cuda();
    e.flops = {{"fp64", 0}, {"fp32", 0}, {"fp16", 0}};
    e.dram_read_min = e.dram_write_min = double(s.copy_bytes);
    e.streaming = true;
    e.threads = s.copy_bytes / 16;
    e.hfma_moves_per_thread = 0;
  } else if (phase == "read") {
    e.kernel = "kf_read";
    zero_cuda();
    e.flops = {{"fp64", 0}, {"fp32", 0}, {"fp16", 0}};
    e.dram_read_min = double(s.copy_bytes);
    e.dram_write_min = 0;  // 4 KiB of block results, which stay in L2
    e.streaming = true;
    e.threads = std::uint64_t(kReadBlocks) * 256;
    e.hfma_moves_per_thread = -1;  // new kernel: counted from its SASS on the device
  } else if (phase == "gemm_bf16") {
    e.tensor_flops = {{"bf16", gemm_flops}, {"tf32", 0}, {"fp16", 0}, {"fp64", 0}, {"fp8", 0}, {"int8", 0}};
    e.dram_read_min = 2.0 * (double(s.gemm_m) + s.gemm_n) * s.gemm_k;
    e.dram_write_min = 2.0 * double(s.gemm_m) * s.gemm_n;
  } else if (phase == "gemm_tf32") {
    e.tensor_flops = {{"tf32", gemm_flops}, {"bf16", 0}, {"fp16", 0}, {"fp64", 0}, {"fp8", 0}, {"int8", 0}};
    e.dram_read_min = 4.0 * (double(s.gemm_m) + s.gemm_n) * s.gemm_k;
    e.dram_write_min = 4.0 * double(s.gemm_m) * s.gemm_n;
  } else {
    throw std::invalid_argument("unknown known_flops phase: " + phase);
  }
  return e;
}

Expected KnownFlops::run_phase(const std::string& phase) {
  Impl& im = *impl_;
  const Sizes& s = im.s;
  Expected e = expected(phase);
  const unsigned fma_blocks = unsigned(s.fma_threads / 256);
  if (phase == "fp32_fma") {
    kf_fma_f32<<<fma_blocks, 256>>>(im.fx, im.fy, im.fb, im.fc, s.fma_iters);
  } else if (phase == "half2_fma") {
    kf_fma_x2<__half2><<<fma_blocks, 256>>>(im.hx, im.hy, __floats2half2_rn(im.fb, im.fb),
                                            __floats2half2_rn(im.fc, im.fc), s.fma_iters);
  } else if (phase == "bf16x2_fma") {
    kf_fma_x2<__nv_bfloat162><<<fma_blocks, 256>>>(im.bx, im.by, __floats2bfloat162_rn(im.fb, im.fb),
                                                   __floats2bfloat162_rn(im.fc, im.fc), s.fma_iters);
  } else if (phase == "poly") {
    kf_poly<<<unsigned(s.poly_n / 256), 256>>>(im.pa, im.pb, int(s.poly_n), s.poly_k);
  } else if (phase == "copy") {
    kf_copy<<<unsigned(s.copy_bytes / 16 / 256), 256>>>(im.cx, im.cy);
  } else if (phase == "read") {
    kf_read<<<kReadBlocks, 256>>>(reinterpret_cast<const uint4*>(im.cx), s.copy_bytes / 16, im.rx);
  } else if (phase == "gemm_bf16") {
    im.gemm(true);
  } else if (phase == "gemm_tf32") {
    im.gemm(false);
  }
  KF_CHECK(cudaGetLastError());
  KF_CHECK(cudaDeviceSynchronize());
  return e;
}

double KnownFlops::check_phase(const std::string& phase) const {
  const Impl& im = *impl_;
  const Sizes& s = im.s;
  double worst = 0;
  const std::uint64_t sample = 4096;  // elements checked (spread over the output)
  if (phase == "fp32_fma" || phase == "half2_fma" || phase == "bf16x2_fma") {
    const std::uint64_t n = s.fma_threads * kFmaChains, step = std::max<std::uint64_t>(1, n / sample);
    for (std::uint64_t i = 0; i < n; i += step) {
      double want = 0, got = 0;
      if (phase == "fp32_fma") {
        float a = download(im.fx, i, 1)[0];
        for (int it = 0; it < s.fma_iters; ++it) a = std::fma(a, im.fb, im.fc);  // correctly rounded, like FFMA
        want = a;
        got = download(im.fy, i, 1)[0];
      } else if (phase == "half2_fma") {
        const __half2 x = download(im.hx, i, 1)[0], y = download(im.hy, i, 1)[0];
        const float b = __half2float(__float2half_rn(im.fb)), c = __half2float(__float2half_rn(im.fc));
        float a = __low2float(x);
        for (int it = 0; it < s.fma_iters; ++it) a = __half2float(__float2half_rn(std::fma(a, b, c)));
        want = a;
        got = __low2float(y);
      } else {
        const __nv_bfloat162 x = download(im.bx, i, 1)[0], y = download(im.by, i, 1)[0];
        const float b = __bfloat162float(__float2bfloat16_rn(im.fb)), c = __bfloat162float(__float2bfloat16_rn(im.fc));
        float a = __low2float(x);
        for (int it = 0; it < s.fma_iters; ++it) a = __bfloat162float(__float2bfloat16_rn(std::fma(a, b, c)));
        want = a;
        got = __low2float(y);
      }
      worst = std::max(worst, std::isfinite(got) ? rel_err(got, want, std::fabs(want)) : INFINITY);
    }
  } else if (phase == "poly") {
    const std::uint64_t step = std::max<std::uint64_t>(1, s.poly_n / sample);
    for (std::uint64_t i = 0; i < s.poly_n; i += step) {
      const float x = download(im.pa, i, 1)[0];
      float result = 0, power = x;
      for (int j = 0; j < s.poly_k; ++j) {
        result += power;
        power *= x;
      }
      const float got = download(im.pb, i, 1)[0];
      worst = std::max(worst, std::isfinite(got) ? rel_err(got, result, std::fabs(result)) : INFINITY);
    }
  } else if (phase == "copy") {
    const std::uint64_t n4 = s.copy_bytes / 16, step = std::max<std::uint64_t>(1, n4 / sample);
    for (std::uint64_t i = 0; i < n4; i += step) {
      const float4 a = download(im.cx, i, 1)[0], b = download(im.cy, i, 1)[0];
      if (a.x != b.x || a.y != b.y || a.z != b.z || a.w != b.w) worst = INFINITY;
    }
  } else if (phase == "read") {
    // Every word of the input, XORed on the host, against the XOR of the block results.
    const auto words = download(reinterpret_cast<const unsigned*>(im.cx), 0, s.copy_bytes / 4);
    unsigned want = 0;
    for (unsigned w : words) want ^= w;
    unsigned got = 0;
    for (unsigned b : download(im.rx, 0, kReadBlocks)) got ^= b;
    worst = got == want ? 0 : INFINITY;
  } else if (phase == "gemm_bf16" || phase == "gemm_tf32") {
    const bool bf16 = phase == "gemm_bf16";
    std::mt19937 rng(unsigned(im.seed));
    for (int t = 0; t < 24; ++t) {
      const int i = int(rng() % unsigned(s.gemm_m)), j = int(rng() % unsigned(s.gemm_n));
      double want = 0, scale = 0, got = 0;
      if (bf16) {
        auto a = download(im.ga, std::uint64_t(i) * s.gemm_k, s.gemm_k);
        auto b = download(im.gb, std::uint64_t(j) * s.gemm_k, s.gemm_k);
        for (int k = 0; k < s.gemm_k; ++k) {
          const double p = double(__bfloat162float(a[k])) * double(__bfloat162float(b[k]));
          want += p;
          scale += std::fabs(p);
        }
        got = __bfloat162float(download(im.gd, std::uint64_t(j) * s.gemm_m + i, 1)[0]);
      } else {
        auto a = download(im.ta, std::uint64_t(i) * s.gemm_k, s.gemm_k);
        auto b = download(im.tb, std::uint64_t(j) * s.gemm_k, s.gemm_k);
        for (int k = 0; k < s.gemm_k; ++k) {
          const double p = double(a[k]) * double(b[k]);
          want += p;
          scale += std::fabs(p);
        }
        got = download(im.td, std::uint64_t(j) * s.gemm_m + i, 1)[0];
      }
      // Relative to the sum of |terms|: rounding of bf16 output / tf32 inputs.
      worst = std::max(worst, std::isfinite(got) ? rel_err(got, want, scale) : INFINITY);
    }
  }
  return worst;
}

}  // namespace roofline::testprog

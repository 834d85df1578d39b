// attention_backward on the GPU (ops_cuda_transformer.hpp): the scores
// recomputed from Q and K and the lse the forward kept, as flash attention
// does, but through cuBLASLt's strided-batched GEMMs on tensor cores with the
// score matrices in a scratch buffer, one GEMM per product over every
// (sequence, head) at once:
//   pack      Q, K, V, dO (b, h, L, d) from qkv and dout, L the sequences'
//             rows (padded or the longest, rounded up to 8), rows past a
//             sequence zero;
//             D (b, h, L) = dout·out per query row
//   S  = Q·Kᵀ, dP = dO·Vᵀ                (b·h GEMMs each, fp32 out)
//   P  = exp(scale·S − lse), keys past len[b] 0; dS = scale·P·(dP − D)   (dtype)
//   dV = Pᵀ·dO, dQ = dS·K, dK = dSᵀ·Q      (dtype out)
//   unpack    dQ, dK, dV into dqkv's layout.
// The probabilities and dS are rounded to the dtype before their GEMMs, as
// flash attention's backward rounds them for its tensor-core products.
// Scratch: 2·b·h·L² fp32 and 2·b·h·L² of dtype (830 MB for BERT-base at
// sequence 384, batch 32, bf16), grown on the first call of a shape.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <string>
#include <type_traits>

#include "roofline/core/error.hpp"
#include "src/engine/cuda/cnn_common.cuh"
#include "src/engine/cuda/cuda_state.hpp"
#include "src/engine/cuda/launch.cuh"
#include "src/engine/cuda/ops_cuda_transformer.hpp"

namespace roofline::engine::cuda_ops {

namespace {

// A warp per (sequence row r = b·L + i, head h): Q, K, V, dO rows into the
// packed layout, zero past the sequence's rows; D = dO·O.
template <class T>
__global__ void attention_bwd_pack(std::int64_t L, int heads, int d, std::int64_t padded,
                                   const T* __restrict__ qkv, const T* __restrict__ dout, const T* __restrict__ out,
                                   const std::int32_t* __restrict__ start, const std::int32_t* __restrict__ len,
                                   T* __restrict__ q, T* __restrict__ k, T* __restrict__ v, T* __restrict__ dop,
                                   float* __restrict__ D, std::int64_t rows_total) {
  const std::int64_t warp = (blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (warp >= rows_total * heads) return;
  const std::int64_t r = warp / heads;
  const int h = static_cast<int>(warp - r * heads);
  const std::int64_t b = r / L, i = r - b * L;
  const std::int64_t rows = padded > 0 ? padded : len[b];
  const std::int64_t hd = std::int64_t(heads) * d, dst = ((b * heads + h) * L + i) * d;
  float acc = 0;
  if (i < rows) {
    const std::int64_t t = start[b] + i;
    const T* src = qkv + t * 3 * hd + std::int64_t(h) * d;
    for (int c = lane; c < d; c += 32) {
      q[dst + c] = src[c];
      k[dst + c] = src[hd + c];
      v[dst + c] = src[2 * hd + c];
      const T g = dout[t * hd + std::int64_t(h) * d + c];
      dop[dst + c] = g;
      acc += cnn::to_f(g) * cnn::to_f(out[t * hd + std::int64_t(h) * d + c]);
    }
  } else {
    const T zero = cnn::from_f<T>(0.0f);
    for (int c = lane; c < d; c += 32) q[dst + c] = k[dst + c] = v[dst + c] = dop[dst + c] = zero;
  }
  for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
  if (lane == 0) D[(b * heads + h) * L + i] = acc;
}

// The same gather 16 bytes a thread: V threads per (row, head), V = the head's
// 16-byte vectors (8 for 64-wide bf16 heads), a power of two up to 32, D
// reduced over them by shuffles. The warp-per-row kernel above took 91 µs at
// BERT-base s384 b32 bf16 on an H100 (2-byte accesses).
template <class T>
__global__ void attention_bwd_pack_vec(int V, std::int64_t L, int heads, std::int64_t padded,
                                       const uint4* __restrict__ qkv, const uint4* __restrict__ dout,
                                       const uint4* __restrict__ out, const std::int32_t* __restrict__ start,
                                       const std::int32_t* __restrict__ len, uint4* __restrict__ q,
                                       uint4* __restrict__ k, uint4* __restrict__ v, uint4* __restrict__ dop,
                                       float* __restrict__ D, std::int64_t items) {
  const std::int64_t idx = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  const bool active = idx < items;  // lanes past the end still shuffle, within their own groups of V
  const std::int64_t item = active ? idx : items - 1;
  const std::int64_t c = item % V, rh = item / V, r = rh / heads, h = rh - r * heads, b = r / L, i = r - b * L;
  const std::int64_t rows = padded > 0 ? padded : len[b];
  const std::int64_t hv = std::int64_t(heads) * V, dst = ((b * heads + h) * L + i) * V + c;
  float acc = 0;
  uint4 qv{}, kv{}, vv{}, gv{};
  if (i < rows) {
    const std::int64_t t = start[b] + i;
    const uint4* src = qkv + t * 3 * hv + h * V + c;
    qv = src[0], kv = src[hv], vv = src[2 * hv];
    gv = dout[t * hv + h * V + c];
    const uint4 ov = out[t * hv + h * V + c];
    const T* ge = reinterpret_cast<const T*>(&gv);
    const T* oe = reinterpret_cast<const T*>(&ov);
#pragma unroll
    for (int e = 0; e < int(16 / sizeof(T)); ++e) acc += cnn::to_f(ge[e]) * cnn::to_f(oe[e]);
  }
  if (active) q[dst] = qv, k[dst] = kv, v[dst] = vv, dop[dst] = gv;
  for (int o = V / 2; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
  if (active && c == 0) D[(b * heads + h) * L + i] = acc;
}

// A block per score row (b, h, i): P and dS over its L keys.
template <class T>
__global__ void attention_bwd_probs(std::int64_t L, int heads, std::int64_t padded, std::int64_t tokens, float scale,
                                    const float* __restrict__ S, const float* __restrict__ dP,
                                    const float* __restrict__ D, const float* __restrict__ lse,
                                    const std::int32_t* __restrict__ start, const std::int32_t* __restrict__ len,
                                    T* __restrict__ P, T* __restrict__ dS) {
  const std::int64_t row = blockIdx.x;  // (b·heads + h)·L + i
  const std::int64_t bh = row / L, i = row - bh * L, b = bh / heads, h = bh - b * heads;
  const std::int64_t n = len[b], rows = padded > 0 ? padded : n;
  const bool live = i < rows;
  const float l = live ? lse[h * tokens + start[b] + i] : 0.0f, di = D[row];
  const std::int64_t base = row * L;
  for (std::int64_t j = threadIdx.x; j < L; j += blockDim.x) {
    const float p = live && j < n ? __expf(scale * S[base + j] - l) : 0.0f;
    P[base + j] = cnn::from_f<T>(p);
    dS[base + j] = cnn::from_f<T>(scale * p * (dP[base + j] - di));
  }
}

// A warp per (row, head) of dqkv: the packed gradients back into qkv's layout.
template <class T>
__global__ void attention_bwd_unpack(std::int64_t L, int heads, int d, std::int64_t padded, const T* __restrict__ dq,
                                     const T* __restrict__ dk, const T* __restrict__ dv,
                                     const std::int32_t* __restrict__ start, const std::int32_t* __restrict__ len,
                                     T* __restrict__ dqkv, std::int64_t rows_total) {
  const std::int64_t warp = (blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (warp >= rows_total * heads) return;
  const std::int64_t r = warp / heads;
  const int h = static_cast<int>(warp - r * heads);
  const std::int64_t b = r / L, i = r - b * L;
  const std::int64_t rows = padded > 0 ? padded : len[b];
  if (i >= rows) return;
  const std::int64_t hd = std::int64_t(heads) * d, src = ((b * heads + h) * L + i) * d;
  T* dst = dqkv + (start[b] + i) * 3 * hd + std::int64_t(h) * d;
  for (int c = lane; c < d; c += 32) {
    dst[c] = dq[src + c];
    dst[hd + c] = dk[src + c];
    dst[2 * hd + c] = dv[src + c];
  }
}

template <class T>
__global__ void attention_bwd_unpack_vec(int V, std::int64_t L, int heads, std::int64_t padded,
                                         const uint4* __restrict__ dq, const uint4* __restrict__ dk,
                                         const uint4* __restrict__ dv, const std::int32_t* __restrict__ start,
                                         const std::int32_t* __restrict__ len, uint4* __restrict__ dqkv,
                                         std::int64_t items) {
  const std::int64_t idx = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (idx >= items) return;
  const std::int64_t c = idx % V, rh = idx / V, r = rh / heads, h = rh - r * heads, b = r / L, i = r - b * L;
  const std::int64_t rows = padded > 0 ? padded : len[b];
  if (i >= rows) return;
  const std::int64_t hv = std::int64_t(heads) * V, src = ((b * heads + h) * L + i) * V + c;
  uint4* dst = dqkv + (start[b] + i) * 3 * hv + h * V + c;
  dst[0] = dq[src];
  dst[hv] = dk[src];
  dst[2 * hv] = dv[src];
}

int cuda_type(DType t) {
  return t == DType::BF16 ? CUDA_R_16BF : t == DType::F16 ? CUDA_R_16F : CUDA_R_32F;
}

std::int64_t align256(std::int64_t bytes) { return (bytes + 255) / 256 * 256; }

// One strided-batched GEMM over the b·h (sequence, head) pairs, in cuBLAS's column-major terms.
void batched(CudaState* st, const MatmulKey& key, const void* A, const void* B, void* C) {
  MatmulPlan* p = matmul_plan(st, key);
  if (!p->has_algo)
    throw Error(ErrorKind::Device,
                "cuBLASLt has no algorithm for attention's backward GEMM " + std::to_string(key.m) + "x" +
                    std::to_string(key.n) + "x" + std::to_string(key.k) + " over " + std::to_string(key.batch) +
                    " batches",
                "report the shape; the CPU backend (--device cpu) computes attention's backward in fp32");
  run_matmul(st, p, A, B, C, nullptr);
}

}  // namespace

void attention_backward(const CudaState* cst, const ops::AttentionShape& s, void* dqkv, const void* dout,
                        const void* qkv, const void* out, const float* lse, const std::int32_t* start,
                        const std::int32_t* len) {
  CudaState* st = const_cast<CudaState*>(cst);  // its scratch and plan cache are caches
  // L: each sequence's rows in the packed layout, rounded up to 8 so that every matrix of a 16-bit dtype
  // starts and leads at 16-byte multiples (cuBLASLt's fast kernels); the extra rows are zero and masked.
  const std::int64_t rows = s.padded > 0 ? s.padded : s.max_len, L = (rows + 7) / 8 * 8, d = s.head_dim,
                     BH = s.batch * s.heads;
  const std::int64_t es = static_cast<std::int64_t>(dtype_size(s.dtype));
  const std::int64_t packed = align256(BH * L * d * es), scores = align256(BH * L * L * 4),
                     lowp = align256(BH * L * L * es), row_bytes = align256(BH * L * 4);
  // Q K V dO dQ dK dV | S dP | P dS | D
  char* base = ensure_scratch(st, st->attention, static_cast<size_t>(7 * packed + 2 * scores + 2 * lowp + row_bytes),
                              "attention backward's score matrices");
  char* q = base;
  char *k = q + packed, *v = k + packed, *dop = v + packed, *dq = dop + packed, *dk = dq + packed, *dv = dk + packed;
  float* S = reinterpret_cast<float*>(dv + packed);
  float* dP = reinterpret_cast<float*>(reinterpret_cast<char*>(S) + scores);
  char* P = reinterpret_cast<char*>(dP) + scores;
  char* dS = P + lowp;
  float* D = reinterpret_cast<float*>(dS + lowp);

  const std::int64_t rows_total = s.batch * L, warps = rows_total * s.heads;
  const unsigned pack_blocks = static_cast<unsigned>((warps * 32 + kThreads - 1) / kThreads);
  const float scale = 1.0f / sqrtf(float(d));
  // 16-byte gathers where every row of a head is whole 16-byte vectors, a power of two of them up to 32.
  const std::int64_t vec = d * es % 16 == 0 ? d * es / 16 : 0;
  const auto aligned = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; };
  const bool vectors = vec > 0 && vec <= 32 && (vec & (vec - 1)) == 0 && aligned(qkv) && aligned(dout) &&
                       aligned(out) && aligned(dqkv);
  const std::int64_t items = warps * vec;
  const unsigned vec_blocks = static_cast<unsigned>((items + kThreads - 1) / kThreads);
  with_dtype(s.dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    if (vectors) {
      attention_bwd_pack_vec<T><<<vec_blocks, kThreads, 0, stream_of(st)>>>(
          static_cast<int>(vec), L, static_cast<int>(s.heads), s.padded, static_cast<const uint4*>(qkv),
          static_cast<const uint4*>(dout), static_cast<const uint4*>(out), start, len, reinterpret_cast<uint4*>(q),
          reinterpret_cast<uint4*>(k), reinterpret_cast<uint4*>(v), reinterpret_cast<uint4*>(dop), D, items);
      return;
    }
    attention_bwd_pack<T><<<pack_blocks, kThreads, 0, stream_of(st)>>>(
        L, static_cast<int>(s.heads), static_cast<int>(d), s.padded, static_cast<const T*>(qkv),
        static_cast<const T*>(dout), static_cast<const T*>(out), start, len, reinterpret_cast<T*>(q),
        reinterpret_cast<T*>(k), reinterpret_cast<T*>(v), reinterpret_cast<T*>(dop), D, rows_total);
  });
  CUDA_CHECK_LAUNCH();

  // fp32 data in true fp32 unless the shape allows TF32; 16-bit data with fp32 accumulation.
  MatmulKey key;
  key.ab_type = cuda_type(s.dtype);
  key.compute = s.dtype == DType::F32 && s.tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  key.batch = BH;
  // S (row-major L_q × L_k) = column-major Sᵀ (L_k × L_q) = Kᵀ-op(K) · Q: A = K stored d × L_k, op T.
  MatmulKey scores_key = key;
  scores_key.ta = true, scores_key.tb = false;
  scores_key.m = L, scores_key.n = L, scores_key.k = d;
  scores_key.lda = d, scores_key.ldb = d, scores_key.ldc = L;
  scores_key.c_type = CUDA_R_32F;
  scores_key.sa = L * d, scores_key.sb = L * d, scores_key.sc = L * L;
  batched(st, scores_key, k, q, S);
  batched(st, scores_key, v, dop, dP);  // dP = dO · Vᵀ

  with_dtype(s.dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    attention_bwd_probs<T><<<static_cast<unsigned>(BH * L), 128, 0, stream_of(st)>>>(
        L, static_cast<int>(s.heads), s.padded, s.tokens, scale, S, dP, D, lse, start, len, reinterpret_cast<T*>(P),
        reinterpret_cast<T*>(dS));
  });
  CUDA_CHECK_LAUNCH();

  // Outputs (row-major L × d) are column-major d × L: C = A (d × L, op N) · B (L × L stored column-major).
  MatmulKey grad_key = key;
  grad_key.c_type = key.ab_type;
  grad_key.m = d, grad_key.n = L, grad_key.k = L;
  grad_key.lda = d, grad_key.ldb = L, grad_key.ldc = d;
  grad_key.sa = L * d, grad_key.sb = L * L, grad_key.sc = L * d;
  MatmulKey transposed = grad_key;  // B's stored (L_k × L_q) used as its transpose
  transposed.ta = false, transposed.tb = true;
  batched(st, transposed, dop, P, dv);  // dVᵀ (d × L_k) = dOᵀ (d × L_q) · P (L_q × L_k)
  batched(st, transposed, q, dS, dk);   // dKᵀ = Qᵀ · dS
  MatmulKey straight = grad_key;
  straight.ta = false, straight.tb = false;
  batched(st, straight, k, dS, dq);  // dQᵀ (d × L_q) = Kᵀ (d × L_k) · dSᵀ (L_k × L_q)

  // Every row of dqkv that no sequence covers stays as it was: none, for the batches BertBatch makes.
  with_dtype(s.dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    if (vectors) {
      attention_bwd_unpack_vec<T><<<vec_blocks, kThreads, 0, stream_of(st)>>>(
          static_cast<int>(vec), L, static_cast<int>(s.heads), s.padded, reinterpret_cast<const uint4*>(dq),
          reinterpret_cast<const uint4*>(dk), reinterpret_cast<const uint4*>(dv), start, len,
          static_cast<uint4*>(dqkv), items);
      return;
    }
    attention_bwd_unpack<T><<<pack_blocks, kThreads, 0, stream_of(st)>>>(
        L, static_cast<int>(s.heads), static_cast<int>(d), s.padded, reinterpret_cast<const T*>(dq),
        reinterpret_cast<const T*>(dk), reinterpret_cast<const T*>(dv), start, len, static_cast<T*>(dqkv), rows_total);
  });
  CUDA_CHECK_LAUNCH();
}

}  // namespace roofline::engine::cuda_ops

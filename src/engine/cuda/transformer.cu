// The transformer ops' kernels (ops_cuda_transformer.hpp): embeddings,
// LayerNorm with its residual add, GELU, and attention fused in one kernel
// (online softmax over tiles of keys in shared memory: the score matrix is
// never written). Activations in F32, BF16 or F16, arithmetic in fp32.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <string>
#include <type_traits>

#include "roofline/core/error.hpp"
#include "src/engine/cuda/cnn_common.cuh"
#include "src/engine/cuda/launch.cuh"
#include "src/engine/cuda/ops_cuda_transformer.hpp"

namespace roofline::engine::cuda_ops {

namespace {

__device__ __forceinline__ float ld(const float* p, std::int64_t i) { return p[i]; }
__device__ __forceinline__ float ld(const __nv_bfloat16* p, std::int64_t i) { return __bfloat162float(p[i]); }
__device__ __forceinline__ float ld(const __half* p, std::int64_t i) { return __half2float(p[i]); }
__device__ __forceinline__ void st(float* p, std::int64_t i, float v) { p[i] = v; }
__device__ __forceinline__ void st(__nv_bfloat16* p, std::int64_t i, float v) { p[i] = __float2bfloat16_rn(v); }
__device__ __forceinline__ void st(__half* p, std::int64_t i, float v) { p[i] = __float2half_rn(v); }

template <class T>
__global__ void embeddings_kernel(std::int64_t tokens, std::int64_t hidden, T* __restrict__ out,
                                  const std::int32_t* __restrict__ ids, const std::int32_t* __restrict__ positions,
                                  const std::int32_t* __restrict__ type_ids, const float* __restrict__ word,
                                  const float* __restrict__ pos, const float* __restrict__ type) {
  const std::int64_t total = tokens * hidden;
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < total;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t t = i / hidden, j = i - t * hidden;
    st(out, i, word[std::int64_t(ids[t]) * hidden + j] + pos[std::int64_t(positions[t]) * hidden + j] +
                   type[std::int64_t(type_ids[t]) * hidden + j]);
  }
}

__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// A warp per row held in registers, 16 bytes a lane a load: rows whose
// length is a multiple of 16 bytes · 32 lanes' worth of chunks up to kChunks
// per lane (BERT-base's 768 bf16: 3 chunks a lane). One read of each input,
// the statistics from the registers. The plain kernel below (three passes
// over the row, element loads) took 31.6 µs for 12288 × 768 bf16 on an H100.
template <class T, int kChunks>
__global__ void layernorm_vec_kernel(std::int64_t rows, std::int64_t cols, float eps, T* out, float* mean,
                                     float* rstd, const T* in, const T* residual, const float* __restrict__ gamma,
                                     const float* __restrict__ beta) {
  constexpr int kPer = 16 / sizeof(T);
  const std::int64_t r = blockIdx.x * std::int64_t(blockDim.y) + threadIdx.y;
  if (r >= rows) return;
  const int chunks = int(cols / kPer);
  float x[kChunks][kPer];
  float sum = 0.f;
#pragma unroll
  for (int c = 0; c < kChunks; ++c) {
    const int chunk = c * 32 + threadIdx.x;
    if (chunk >= chunks) continue;
    uint4 a = reinterpret_cast<const uint4*>(in + r * cols)[chunk];
    uint4 b = residual ? reinterpret_cast<const uint4*>(residual + r * cols)[chunk] : make_uint4(0, 0, 0, 0);
    const T* ea = reinterpret_cast<const T*>(&a);
    const T* eb = reinterpret_cast<const T*>(&b);
#pragma unroll
    for (int k = 0; k < kPer; ++k) {
      x[c][k] = ld(ea, k) + (residual ? ld(eb, k) : 0.f);
      sum += x[c][k];
    }
  }
  const float m = warp_sum(sum) / float(cols);
  float var = 0.f;
#pragma unroll
  for (int c = 0; c < kChunks; ++c)
    if (c * 32 + int(threadIdx.x) < chunks)
#pragma unroll
      for (int k = 0; k < kPer; ++k) var += (x[c][k] - m) * (x[c][k] - m);
  const float rs = rsqrtf(warp_sum(var) / float(cols) + eps);
#pragma unroll
  for (int c = 0; c < kChunks; ++c) {
    const int chunk = c * 32 + threadIdx.x;
    if (chunk >= chunks) continue;
    uint4 o;
    T* eo = reinterpret_cast<T*>(&o);
#pragma unroll
    for (int k = 0; k < kPer; ++k) {
      const std::int64_t j = std::int64_t(chunk) * kPer + k;
      st(eo, k, (x[c][k] - m) * rs * gamma[j] + beta[j]);
    }
    reinterpret_cast<uint4*>(out + r * cols)[chunk] = o;
  }
  if (threadIdx.x == 0) {
    if (mean) mean[r] = m;
    if (rstd) rstd[r] = rs;
  }
}

// A warp per row: the sum, then the squared deviations (the row is in L1 by
// then), then the normalised output, each lane over columns lane, lane+32, ...
template <class T>
__global__ void layernorm_kernel(std::int64_t rows, std::int64_t cols, float eps, T* out, float* mean, float* rstd,
                                 const T* in, const T* residual, const float* __restrict__ gamma,
                                 const float* __restrict__ beta) {
  const std::int64_t r = blockIdx.x * std::int64_t(blockDim.y) + threadIdx.y;
  if (r >= rows) return;
  const T* a = in + r * cols;
  const T* b = residual ? residual + r * cols : nullptr;
  float sum = 0.f;
  for (std::int64_t j = threadIdx.x; j < cols; j += 32) sum += ld(a, j) + (b ? ld(b, j) : 0.f);
  const float m = warp_sum(sum) / float(cols);
  float var = 0.f;
  for (std::int64_t j = threadIdx.x; j < cols; j += 32) {
    const float x = ld(a, j) + (b ? ld(b, j) : 0.f) - m;
    var += x * x;
  }
  const float rs = rsqrtf(warp_sum(var) / float(cols) + eps);
  T* o = out + r * cols;
  for (std::int64_t j = threadIdx.x; j < cols; j += 32) {
    const float x = ld(a, j) + (b ? ld(b, j) : 0.f);  // read before o[j] is written: out may alias in
    st(o, j, (x - m) * rs * gamma[j] + beta[j]);
  }
  if (threadIdx.x == 0) {
    if (mean) mean[r] = m;
    if (rstd) rstd[r] = rs;
  }
}

__device__ __forceinline__ float gelu(float x) { return 0.5f * x * (1.f + erff(x * 0.70710678118654752f)); }

// 16 bytes a thread a step (8 bf16/fp16 or 4 fp32): the byte-wide loads of
// the plain kernel reached 1.17 TB/s on an H100 (128.7 µs for BERT-base's
// 12288 × 3072 bf16 at batch 32, sequence 384), a third of its DRAM bandwidth.
template <class T>
__global__ void gelu_vec_kernel(std::int64_t vecs, uint4* out, const uint4* in) {
  constexpr int kPer = 16 / sizeof(T);
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < vecs;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    uint4 v = in[i];
    T* e = reinterpret_cast<T*>(&v);
#pragma unroll
    for (int k = 0; k < kPer; ++k) st(e, k, gelu(ld(e, k)));
    out[i] = v;
  }
}

template <class T>
__global__ void gelu_kernel(std::int64_t n, T* out, const T* in) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    st(out, i, gelu(ld(in, i)));
  }
}

// Attention: block (query block, head, sequence), a thread per query row with
// its query and output in registers; tiles of kKeys keys and values staged in
// shared memory as fp32 and read by every thread at the same address
// (broadcast); the softmax online, rescaling the output once per kSub keys.
constexpr int kQueries = 64, kKeys = 64, kSub = 16;

template <class T, int D>
__global__ void __launch_bounds__(kQueries) attention_kernel(std::int64_t tokens, int heads, std::int64_t padded,
                                                             float scale, T* __restrict__ out, float* __restrict__ lse,
                                                             const T* __restrict__ qkv,
                                                             const std::int32_t* __restrict__ start,
                                                             const std::int32_t* __restrict__ len) {
  __shared__ float4 ks[kKeys][D / 4], vs[kKeys][D / 4];
  const int b = blockIdx.z, h = blockIdx.y;
  const std::int64_t t0 = start[b], n = len[b], queries = padded > 0 ? padded : n;
  const std::int64_t i = std::int64_t(blockIdx.x) * kQueries + threadIdx.x;
  if (std::int64_t(blockIdx.x) * kQueries >= queries) return;  // the whole block is past this sequence
  const std::int64_t hd = std::int64_t(heads) * D, row = 3 * hd;
  const bool active = i < queries;
  float q[D], o[D];
  for (int c = 0; c < D; ++c) {
    q[c] = active ? ld(qkv, (t0 + i) * row + std::int64_t(h) * D + c) * scale : 0.f;
    o[c] = 0.f;
  }
  float m = -INFINITY, l = 0.f;
  for (std::int64_t j0 = 0; j0 < n; j0 += kKeys) {
    const int kt = int(n - j0 < kKeys ? n - j0 : std::int64_t(kKeys));
    __syncthreads();  // the previous tile is no longer read
    for (int e = threadIdx.x; e < kt * (D / 4); e += kQueries) {
      const int j = e / (D / 4), c4 = e % (D / 4);
      const std::int64_t base = (t0 + j0 + j) * row + std::int64_t(h) * D + c4 * 4;
      ks[j][c4] = make_float4(ld(qkv, base + hd), ld(qkv, base + hd + 1), ld(qkv, base + hd + 2),
                              ld(qkv, base + hd + 3));
      vs[j][c4] = make_float4(ld(qkv, base + 2 * hd), ld(qkv, base + 2 * hd + 1), ld(qkv, base + 2 * hd + 2),
                              ld(qkv, base + 2 * hd + 3));
    }
    __syncthreads();
    for (int s0 = 0; s0 < kt; s0 += kSub) {
      const int sn = min(kSub, kt - s0);
      float sc[kSub];
      float tile_max = -INFINITY;
#pragma unroll
      for (int s = 0; s < kSub; ++s) {
        float dot = 0.f;
        if (s < sn) {
#pragma unroll
          for (int c4 = 0; c4 < D / 4; ++c4) {
            const float4 k = ks[s0 + s][c4];
            dot = fmaf(q[4 * c4], k.x, fmaf(q[4 * c4 + 1], k.y, fmaf(q[4 * c4 + 2], k.z, fmaf(q[4 * c4 + 3], k.w, dot))));
          }
          tile_max = fmaxf(tile_max, dot);
        }
        sc[s] = dot;
      }
      const float m_new = fmaxf(m, tile_max);
      const float corr = __expf(m - m_new);  // 0 on the first tile (m = −inf)
      l *= corr;
#pragma unroll
      for (int c = 0; c < D; ++c) o[c] *= corr;
#pragma unroll
      for (int s = 0; s < kSub; ++s) {
        if (s < sn) {
          const float p = __expf(sc[s] - m_new);
          l += p;
#pragma unroll
          for (int c4 = 0; c4 < D / 4; ++c4) {
            const float4 v = vs[s0 + s][c4];
            o[4 * c4] = fmaf(p, v.x, o[4 * c4]);
            o[4 * c4 + 1] = fmaf(p, v.y, o[4 * c4 + 1]);
            o[4 * c4 + 2] = fmaf(p, v.z, o[4 * c4 + 2]);
            o[4 * c4 + 3] = fmaf(p, v.w, o[4 * c4 + 3]);
          }
        }
      }
      m = m_new;
    }
  }
  if (!active) return;
  const float inv = 1.f / l;
  for (int c = 0; c < D; ++c) st(out, (t0 + i) * hd + std::int64_t(h) * D + c, o[c] * inv);
  if (lse) lse[std::int64_t(h) * tokens + t0 + i] = m + logf(l);
}

template <class T, int D>
void launch_attention(const CudaState* st, const ops::AttentionShape& s, void* out, float* lse, const void* qkv,
                      const std::int32_t* start, const std::int32_t* len) {
  const std::int64_t queries = s.padded > 0 ? s.padded : s.max_len;
  const dim3 grid(static_cast<unsigned>((queries + kQueries - 1) / kQueries), static_cast<unsigned>(s.heads),
                  static_cast<unsigned>(s.batch));
  attention_kernel<T, D><<<grid, kQueries, 0, stream_of(st)>>>(
      s.tokens, static_cast<int>(s.heads), s.padded, 1.0f / sqrtf(float(D)), static_cast<T*>(out), lse,
      static_cast<const T*>(qkv), start, len);
}

}  // namespace

void embeddings_forward(const CudaState* st, const ops::EmbeddingShape& s, void* out, const std::int32_t* ids,
                        const std::int32_t* positions, const std::int32_t* type_ids, const float* word,
                        const float* pos, const float* type) {
  with_dtype(s.dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    embeddings_kernel<T><<<blocks_for(s.tokens * s.hidden, st), kThreads, 0, stream_of(st)>>>(
        s.tokens, s.hidden, static_cast<T*>(out), ids, positions, type_ids, word, pos, type);
  });
  CUDA_CHECK_LAUNCH();
}

void layernorm_forward(const CudaState* st, const ops::LayerNormShape& s, void* out, float* mean, float* rstd,
                       const void* in, const void* residual, const float* gamma, const float* beta) {
  constexpr int kRowsPerBlock = 8;
  with_dtype(s.dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    constexpr std::int64_t kPer = 16 / sizeof(T), kChunks = 32 / kPer;  // rows up to 1024 elements
    const auto aligned = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; };
    if (s.cols % kPer == 0 && s.cols <= kChunks * 32 * kPer && aligned(out) && aligned(in) &&
        (!residual || aligned(residual))) {
      layernorm_vec_kernel<T, int(kChunks)><<<static_cast<unsigned>((s.rows + kRowsPerBlock - 1) / kRowsPerBlock),
                                         dim3(32, kRowsPerBlock), 0, stream_of(st)>>>(
          s.rows, s.cols, s.eps, static_cast<T*>(out), mean, rstd, static_cast<const T*>(in),
          static_cast<const T*>(residual), gamma, beta);
      return;
    }
    layernorm_kernel<T><<<static_cast<unsigned>((s.rows + kRowsPerBlock - 1) / kRowsPerBlock), dim3(32, kRowsPerBlock),
                          0, stream_of(st)>>>(s.rows, s.cols, s.eps, static_cast<T*>(out), mean, rstd,
                                              static_cast<const T*>(in), static_cast<const T*>(residual), gamma, beta);
  });
  CUDA_CHECK_LAUNCH();
}

void gelu_forward(const CudaState* st, const ops::GeluShape& s, void* out, const void* in) {
  with_dtype(s.dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    constexpr std::int64_t kPer = 16 / sizeof(T);
    if (s.n % kPer == 0 && reinterpret_cast<std::uintptr_t>(out) % 16 == 0 &&
        reinterpret_cast<std::uintptr_t>(in) % 16 == 0) {
      const std::int64_t vecs = s.n / kPer;
      gelu_vec_kernel<T><<<blocks_for(vecs, st), kThreads, 0, stream_of(st)>>>(vecs, static_cast<uint4*>(out),
                                                                                static_cast<const uint4*>(in));
    } else {
      gelu_kernel<T><<<blocks_for(s.n, st), kThreads, 0, stream_of(st)>>>(s.n, static_cast<T*>(out),
                                                                           static_cast<const T*>(in));
    }
  });
  CUDA_CHECK_LAUNCH();
}

void attention_forward(const CudaState* st, const ops::AttentionShape& s, void* out, float* lse, const void* qkv,
                       const std::int32_t* start, const std::int32_t* len) {
  if (attention_mma_applies(s, out, qkv)) return attention_mma_forward(st, s, out, lse, qkv, start, len);
  with_dtype(s.dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    switch (s.head_dim) {
      case 16:
        return launch_attention<T, 16>(st, s, out, lse, qkv, start, len);
      case 32:
        return launch_attention<T, 32>(st, s, out, lse, qkv, start, len);
      case 64:
        return launch_attention<T, 64>(st, s, out, lse, qkv, start, len);
      default:
        throw Error(ErrorKind::Unsupported,
                    "the GPU attention kernel takes head dimensions 16, 32 and 64, not " + std::to_string(s.head_dim),
                    "use --device cpu for this model, or a model with 64-wide heads (BERT-base and -large)");
    }
  });
  CUDA_CHECK_LAUNCH();
}

}  // namespace roofline::engine::cuda_ops

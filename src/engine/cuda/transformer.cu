// The transformer ops' kernels (ops_cuda_transformer.hpp): embeddings,
// LayerNorm with its residual add, GELU, and attention fused in one kernel
// (online softmax over tiles of keys in shared memory: the score matrix is
// never written). Activations in F32, BF16 or F16, arithmetic in fp32.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <string>
#include <type_traits>

#include "roofline/core/error.hpp"
#include "src/engine/cuda/cnn_common.cuh"
#include "src/engine/cuda/launch.cuh"
#include "src/engine/cuda/ops_cuda_transformer.hpp"

namespace roofline::engine::cuda_ops {

namespace {

// Element i in fp32, and back (cnn_common.cuh's conversions).
template <class T>
__device__ __forceinline__ float ld(const T* p, std::int64_t i) {
  return cnn::to_f(p[i]);
}
template <class T>
__device__ __forceinline__ void st(T* p, std::int64_t i, float v) {
  p[i] = cnn::from_f<T>(v);
}

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

// The tables' gradients: zeroed, then each token's gradient row added with
// atomics (a thread per element of the token matrix), none to the padding row.
template <class T>
__global__ void embeddings_backward_kernel(std::int64_t tokens, std::int64_t hidden, const T* __restrict__ dout,
                                           const std::int32_t* __restrict__ ids,
                                           const std::int32_t* __restrict__ positions,
                                           const std::int32_t* __restrict__ type_ids, std::int64_t padding_idx,
                                           float* dword, float* dpos, float* dtype) {
  const std::int64_t total = tokens * hidden;
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < total;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t t = i / hidden, j = i - t * hidden;
    const float g = ld(dout, i);
    if (ids[t] != padding_idx) atomicAdd(dword + std::int64_t(ids[t]) * hidden + j, g);  // that row stays 0
    atomicAdd(dpos + std::int64_t(positions[t]) * hidden + j, g);
    atomicAdd(dtype + std::int64_t(type_ids[t]) * hidden + j, g);
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
  // Every load of the row first (up to 2·kChunks 16-byte loads in flight a lane), then the arithmetic.
  uint4 a[kChunks], b[kChunks];
#pragma unroll
  for (int c = 0; c < kChunks; ++c) {
    const int chunk = c * 32 + threadIdx.x;
    a[c] = b[c] = make_uint4(0, 0, 0, 0);
    if (chunk < chunks) {
      a[c] = reinterpret_cast<const uint4*>(in + r * cols)[chunk];
      if (residual) b[c] = reinterpret_cast<const uint4*>(residual + r * cols)[chunk];
    }
  }
  float x[kChunks][kPer];
  float sum = 0.f;
#pragma unroll
  for (int c = 0; c < kChunks; ++c) {
    const T* ea = reinterpret_cast<const T*>(&a[c]);
    const T* eb = reinterpret_cast<const T*>(&b[c]);
#pragma unroll
    for (int k = 0; k < kPer; ++k) {
      x[c][k] = ld(ea, k) + (residual ? ld(eb, k) : 0.f);  // zeros past the row: they add nothing
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
    // gamma and beta 16 bytes a load too (the dispatcher checks their alignment).
    float gv[kPer], bv[kPer];
#pragma unroll
    for (int k = 0; k < kPer; k += 4) {
      const float4 g = reinterpret_cast<const float4*>(gamma)[(chunk * kPer + k) / 4];
      const float4 be = reinterpret_cast<const float4*>(beta)[(chunk * kPer + k) / 4];
      gv[k] = g.x, gv[k + 1] = g.y, gv[k + 2] = g.z, gv[k + 3] = g.w;
      bv[k] = be.x, bv[k + 1] = be.y, bv[k + 2] = be.z, bv[k + 3] = be.w;
    }
    uint4 o;
    T* eo = reinterpret_cast<T*>(&o);
#pragma unroll
    for (int k = 0; k < kPer; ++k) st(eo, k, (x[c][k] - m) * rs * gv[k] + bv[k]);
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

// LayerNorm's backward. din: a warp per row (the row's two sums over the
// columns, then each element). dgamma, dbeta: per-column sums over the rows,
// as per-chunk partials (block: 32 columns × 8 row lanes over a chunk of
// rows) then one sum per column over the chunks, in a fixed order.
template <class T>
__global__ void layernorm_dx_kernel(std::int64_t rows, std::int64_t cols, T* din, const T* dout, const T* in,
                                    const T* residual, const float* __restrict__ gamma,
                                    const float* __restrict__ mean, const float* __restrict__ rstd) {
  const std::int64_t r = blockIdx.x * std::int64_t(blockDim.y) + threadIdx.y;
  if (r >= rows) return;
  const float m = mean[r], rs = rstd[r];
  const std::int64_t o = r * cols;
  float sg = 0.f, sgx = 0.f;
  for (std::int64_t j = threadIdx.x; j < cols; j += 32) {
    const float xh = (ld(in, o + j) + (residual ? ld(residual, o + j) : 0.f) - m) * rs;
    const float g = ld(dout, o + j) * gamma[j];
    sg += g;
    sgx += g * xh;
  }
  const float mg = warp_sum(sg) / float(cols), mgx = warp_sum(sgx) / float(cols);
  for (std::int64_t j = threadIdx.x; j < cols; j += 32) {
    const float xh = (ld(in, o + j) + (residual ? ld(residual, o + j) : 0.f) - m) * rs;
    st(din, o + j, rs * (ld(dout, o + j) * gamma[j] - mg - xh * mgx));  // every read of o + j before the write
  }
}

template <class T>
__global__ void layernorm_dgamma_partials(std::int64_t rows, std::int64_t cols, std::int64_t per_chunk,
                                          const T* dout, const T* in, const T* residual,
                                          const float* __restrict__ mean, const float* __restrict__ rstd,
                                          float* __restrict__ partial) {
  __shared__ float pg[8][33], pb[8][33];
  const std::int64_t j = blockIdx.x * 32 + threadIdx.x, chunk = blockIdx.y;
  const std::int64_t r0 = chunk * per_chunk, r1 = min(rows, r0 + per_chunk);
  float g = 0.f, b = 0.f;
  if (j < cols)
    for (std::int64_t r = r0 + threadIdx.y; r < r1; r += 8) {
      const std::int64_t i = r * cols + j;
      const float dy = ld(dout, i);
      g += dy * (ld(in, i) + (residual ? ld(residual, i) : 0.f) - mean[r]) * rstd[r];
      b += dy;
    }
  pg[threadIdx.y][threadIdx.x] = g;
  pb[threadIdx.y][threadIdx.x] = b;
  __syncthreads();
  if (threadIdx.y == 0 && j < cols) {
    float sg = 0.f, sb = 0.f;
    for (int k = 0; k < 8; ++k) sg += pg[k][threadIdx.x], sb += pb[k][threadIdx.x];
    partial[(2 * chunk) * cols + j] = sg;
    partial[(2 * chunk + 1) * cols + j] = sb;
  }
}

__global__ void layernorm_dgamma_sum(std::int64_t chunks, std::int64_t cols, const float* __restrict__ partial,
                                     float* __restrict__ dgamma, float* __restrict__ dbeta) {
  for (std::int64_t j = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; j < cols;
       j += std::int64_t(gridDim.x) * blockDim.x) {
    float g = 0.f, b = 0.f;
    for (std::int64_t c = 0; c < chunks; ++c) g += partial[(2 * c) * cols + j], b += partial[(2 * c + 1) * cols + j];
    dgamma[j] = g;
    dbeta[j] = b;
  }
}

__device__ __forceinline__ float gelu_grad(float x) {
  return 0.5f * (1.f + erff(x * 0.70710678118654752f)) + x * 0.39894228040143268f * __expf(-0.5f * x * x);
}

template <class T>
__global__ void gelu_backward_kernel(std::int64_t n, T* din, const T* dout, const T* in) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x)
    st(din, i, ld(dout, i) * gelu_grad(ld(in, i)));
}

// 16 bytes of each operand a thread a step, as gelu_vec_kernel: the element
// kernel above took 155 µs for BERT-base's 12288 × 3072 bf16 on an H100
// (1.46 TB/s over its 226 MB).
template <class T>
__global__ void gelu_backward_vec_kernel(std::int64_t vecs, uint4* din, const uint4* dout, const uint4* in) {
  constexpr int kPer = 16 / sizeof(T);
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < vecs;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    const uint4 x = in[i];
    uint4 g = dout[i];
    const T* xe = reinterpret_cast<const T*>(&x);
    T* ge = reinterpret_cast<T*>(&g);
#pragma unroll
    for (int k = 0; k < kPer; ++k) st(ge, k, ld(ge, k) * gelu_grad(ld(xe, k)));
    din[i] = g;
  }
}

// Attention in fp32 arithmetic (fp32 activations, and bf16/fp16 ones the
// tensor-core kernel does not take): block (64 queries, head, sequence), 128
// threads, each a 4 × 8 register tile of S = Q·Kᵀ for a tile of 64 keys and
// a 4 × D/8 tile of O, both GEMM-like products read from shared memory, Q and
// K transposed there so that each thread's operands are float4 loads. The
// softmax runs online on the register tile (a row's maximum and sum over the 8
// threads that share it, by shuffles); P goes through shared memory, never
// global. A thread per query row (each key's K and V read as broadcasts)
// reached 11 TFLOP/s on an H100 at BERT-base s128 b32.
constexpr int kQ = 64, kK = 64, kThreadsAttn = 128;

// One block: each of the 2·batch rows (sequence b, start or end) reduced by
// the block in turn (a few thousand logits), the loss summed in a fixed
// order, so it is the same every run.
template <class T>
__global__ void span_loss_kernel(std::int64_t batch, std::int64_t seq, float* loss, T* dlogits, const T* logits,
                                 const std::int32_t* start_pos, const std::int32_t* end_pos) {
  __shared__ float red[32];
  __shared__ float total;
  const int tid = threadIdx.x, lane = tid % 32, wid = tid / 32, warps = blockDim.x / 32;
  auto block_reduce = [&](float v, bool is_max) {
    for (int o = 16; o > 0; o >>= 1) {
      const float u = __shfl_xor_sync(0xffffffffu, v, o);
      v = is_max ? fmaxf(v, u) : v + u;
    }
    __syncthreads();
    if (lane == 0) red[wid] = v;
    __syncthreads();
    float r = is_max ? -INFINITY : 0.0f;
    for (int w = 0; w < warps; ++w) r = is_max ? fmaxf(r, red[w]) : r + red[w];
    return r;
  };
  if (tid == 0) total = 0;
  const float g = 1.0f / float(2 * batch);
  for (std::int64_t row = 0; row < 2 * batch; ++row) {
    const std::int64_t b = row / 2;
    const int which = int(row % 2);
    const T* x = logits + b * seq * 2 + which;
    T* dx = dlogits + b * seq * 2 + which;
    const std::int64_t target = which == 0 ? start_pos[b] : end_pos[b];
    float m = -INFINITY;
    for (std::int64_t j = tid; j < seq; j += blockDim.x) m = fmaxf(m, ld(x, 2 * j));
    m = block_reduce(m, true);
    float sum = 0;
    for (std::int64_t j = tid; j < seq; j += blockDim.x) sum += __expf(ld(x, 2 * j) - m);
    const float lse = m + logf(block_reduce(sum, false));
    for (std::int64_t j = tid; j < seq; j += blockDim.x)
      st(dx, 2 * j, g * (__expf(ld(x, 2 * j) - lse) - (j == target ? 1.0f : 0.0f)));
    if (tid == 0) total += lse - ld(x, 2 * target);
  }
  if (tid == 0 && loss) *loss = total * g;
}

template <int D>
struct AttnSmem {
  float qt[D][kQ + 4];   // Q transposed, pre-scaled into log2 units
  float kt[D][kK + 4];   // K transposed
  float v[kK][D + 4];
  float pt[kK][kQ + 4];  // P transposed
};

template <class T, int D>
__global__ void __launch_bounds__(kThreadsAttn) attention_kernel(std::int64_t tokens, int heads, std::int64_t padded,
                                                                 float scale_log2, T* __restrict__ out,
                                                                 float* __restrict__ lse, const T* __restrict__ qkv,
                                                                 const std::int32_t* __restrict__ start,
                                                                 const std::int32_t* __restrict__ len) {
  extern __shared__ __align__(16) unsigned char attn_smem[];
  AttnSmem<D>& sm = *reinterpret_cast<AttnSmem<D>*>(attn_smem);
  constexpr int kDo = D / 8;  // output dims a thread
  const int b = blockIdx.z, h = blockIdx.y, tid = threadIdx.x;
  const std::int64_t t0 = start[b], n = len[b], queries = padded > 0 ? padded : n;
  const std::int64_t q0 = std::int64_t(blockIdx.x) * kQ;
  if (q0 >= queries) return;
  const std::int64_t hd = std::int64_t(heads) * D, row = 3 * hd;
  const T* head = qkv + std::int64_t(h) * D;
  // Row group ty (rows 4ty..4ty+3), column group tx (keys 8tx..8tx+7 of S, dims kDo·tx.. of O):
  // the 8 threads of a row group are lanes ty·8 .. ty·8+7 of one warp.
  const int tx = tid % 8, ty = tid / 8;
  for (int e = tid; e < kQ * D; e += kThreadsAttn) {
    const int r = e / D, c = e % D;
    sm.qt[c][r] = q0 + r < queries ? ld(head, (t0 + q0 + r) * row + c) * scale_log2 : 0.f;
  }
  float o[4][kDo], m[4], l[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    m[i] = -INFINITY, l[i] = 0.f;
#pragma unroll
    for (int j = 0; j < kDo; ++j) o[i][j] = 0.f;
  }
  for (std::int64_t j0 = 0; j0 < n; j0 += kK) {
    __syncthreads();  // the previous tile's K, V and P are no longer read
    for (int e = tid; e < kK * D; e += kThreadsAttn) {
      const int r = e / D, c = e % D;
      const bool ok = j0 + r < n;
      sm.kt[c][r] = ok ? ld(head, (t0 + j0 + r) * row + hd + c) : 0.f;
      sm.v[r][c] = ok ? ld(head, (t0 + j0 + r) * row + 2 * hd + c) : 0.f;
    }
    __syncthreads();
    float sc[4][8] = {};
#pragma unroll 8
    for (int c = 0; c < D; ++c) {
      const float4 a = *reinterpret_cast<const float4*>(&sm.qt[c][4 * ty]);
      const float4 k0 = *reinterpret_cast<const float4*>(&sm.kt[c][8 * tx]);
      const float4 k1 = *reinterpret_cast<const float4*>(&sm.kt[c][8 * tx + 4]);
      const float av[4] = {a.x, a.y, a.z, a.w}, kv[8] = {k0.x, k0.y, k0.z, k0.w, k1.x, k1.y, k1.z, k1.w};
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) sc[i][j] = fmaf(av[i], kv[j], sc[i][j]);
    }
    // Online softmax over this tile's keys (those past the sequence masked).
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      float mx = -INFINITY;
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        if (j0 + 8 * tx + j >= n) sc[i][j] = -INFINITY;
        mx = fmaxf(mx, sc[i][j]);
      }
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 4));
      const float m_new = fmaxf(m[i], mx);  // finite: the tile holds at least one real key
      const float corr = exp2f(m[i] - m_new);
      m[i] = m_new;
      float sum = 0.f;
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        const float p = exp2f(sc[i][j] - m_new);
        sum += p;
        sm.pt[8 * tx + j][4 * ty + i] = p;
      }
      l[i] = l[i] * corr + sum;  // this thread's part of the row sum; the 8 parts are added at the end
#pragma unroll
      for (int j = 0; j < kDo; ++j) o[i][j] *= corr;
    }
    __syncthreads();
    // O += P · V over the tile's keys.
#pragma unroll 4
    for (int k = 0; k < kK; ++k) {
      const float4 a = *reinterpret_cast<const float4*>(&sm.pt[k][4 * ty]);
      const float av[4] = {a.x, a.y, a.z, a.w};
      float vv[kDo];
#pragma unroll
      for (int j = 0; j < kDo; ++j) vv[j] = sm.v[k][kDo * tx + j];
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < kDo; ++j) o[i][j] = fmaf(av[i], vv[j], o[i][j]);
    }
  }
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    l[i] += __shfl_xor_sync(0xffffffffu, l[i], 1);
    l[i] += __shfl_xor_sync(0xffffffffu, l[i], 2);
    l[i] += __shfl_xor_sync(0xffffffffu, l[i], 4);
    const std::int64_t q = q0 + 4 * ty + i;
    if (q >= queries) continue;
    const float inv = 1.f / l[i];
#pragma unroll
    for (int j = 0; j < kDo; ++j) st(out, (t0 + q) * hd + std::int64_t(h) * D + kDo * tx + j, o[i][j] * inv);
    if (lse && tx == 0) lse[std::int64_t(h) * tokens + t0 + q] = (m[i] + log2f(l[i])) * 0.69314718055994531f;
  }
}

template <class T, int D>
void launch_attention(const CudaState* st, const ops::AttentionShape& s, void* out, float* lse, const void* qkv,
                      const std::int32_t* start, const std::int32_t* len) {
  const std::int64_t queries = s.padded > 0 ? s.padded : s.max_len;
  const dim3 grid(static_cast<unsigned>((queries + kQ - 1) / kQ), static_cast<unsigned>(s.heads),
                  static_cast<unsigned>(s.batch));
  constexpr int bytes = sizeof(AttnSmem<D>);
  // Past 48 KB a kernel's dynamic shared memory needs an opt-in, once per device.
  static std::atomic<bool> opted[64];
  const int dev = st->device;
  if (bytes > 48 * 1024 && (dev < 0 || dev >= 64 || !opted[dev].load())) {
    CUDA_CHECK(cudaFuncSetAttribute(attention_kernel<T, D>, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
    if (dev >= 0 && dev < 64) opted[dev].store(true);
  }
  attention_kernel<T, D><<<grid, kThreadsAttn, bytes, stream_of(st)>>>(
      s.tokens, static_cast<int>(s.heads), s.padded, 1.4426950408889634f / sqrtf(float(D)), static_cast<T*>(out), lse,
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

void embeddings_backward(const CudaState* st, const ops::EmbeddingShape& s, float* dword, float* dpos, float* dtype,
                         const void* dout, const std::int32_t* ids, const std::int32_t* positions,
                         const std::int32_t* type_ids) {
  CUDA_CHECK(cudaMemsetAsync(dword, 0, static_cast<size_t>(s.vocab * s.hidden) * sizeof(float), stream_of(st)));
  CUDA_CHECK(cudaMemsetAsync(dpos, 0, static_cast<size_t>(s.positions * s.hidden) * sizeof(float), stream_of(st)));
  CUDA_CHECK(cudaMemsetAsync(dtype, 0, static_cast<size_t>(s.types * s.hidden) * sizeof(float), stream_of(st)));
  with_dtype(s.dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    embeddings_backward_kernel<T><<<blocks_for(s.tokens * s.hidden, st), kThreads, 0, stream_of(st)>>>(
        s.tokens, s.hidden, static_cast<const T*>(dout), ids, positions, type_ids, s.padding_idx, dword, dpos, dtype);
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
        (!residual || aligned(residual)) && aligned(gamma) && aligned(beta)) {
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

void layernorm_backward(const CudaState* st, const ops::LayerNormShape& s, void* din, float* dgamma, float* dbeta,
                        const void* dout, const void* in, const void* residual, const float* gamma,
                        const float* mean, const float* rstd) {
  constexpr int kRowsPerBlock = 8;
  // Chunks of rows for the column sums: enough blocks to fill the GPU, each chunk at least 64 rows.
  const std::int64_t col_blocks = (s.cols + 31) / 32;
  const std::int64_t want = std::max<std::int64_t>(1, std::int64_t(st->sm_count) * 8 / col_blocks);
  const std::int64_t chunks = std::max<std::int64_t>(1, std::min(want, (s.rows + 63) / 64));
  const std::int64_t per_chunk = (s.rows + chunks - 1) / chunks;
  ensure_workspace(const_cast<CudaState*>(st), static_cast<size_t>(2 * chunks * s.cols) * sizeof(float),
                   "LayerNorm's gamma/beta gradient partial sums");
  float* partial = reinterpret_cast<float*>(st->workspace.get());
  with_dtype(s.dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    layernorm_dgamma_partials<T><<<dim3(static_cast<unsigned>(col_blocks), static_cast<unsigned>(chunks)),
                                   dim3(32, 8), 0, stream_of(st)>>>(
        s.rows, s.cols, per_chunk, static_cast<const T*>(dout), static_cast<const T*>(in),
        static_cast<const T*>(residual), mean, rstd, partial);
    CUDA_CHECK_LAUNCH();
    // din after the partial sums: din may alias dout.
    layernorm_dx_kernel<T><<<static_cast<unsigned>((s.rows + kRowsPerBlock - 1) / kRowsPerBlock),
                             dim3(32, kRowsPerBlock), 0, stream_of(st)>>>(
        s.rows, s.cols, static_cast<T*>(din), static_cast<const T*>(dout), static_cast<const T*>(in),
        static_cast<const T*>(residual), gamma, mean, rstd);
  });
  CUDA_CHECK_LAUNCH();
  layernorm_dgamma_sum<<<blocks_for(s.cols, st), kThreads, 0, stream_of(st)>>>(chunks, s.cols, partial, dgamma,
                                                                                dbeta);
  CUDA_CHECK_LAUNCH();
}

void gelu_backward(const CudaState* st, const ops::GeluShape& s, void* din, const void* dout, const void* in) {
  with_dtype(s.dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    constexpr std::int64_t kPer = 16 / sizeof(T);
    const auto aligned = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; };
    if (s.n % kPer == 0 && aligned(din) && aligned(dout) && aligned(in)) {
      const std::int64_t vecs = s.n / kPer;
      gelu_backward_vec_kernel<T><<<blocks_for(vecs, st), kThreads, 0, stream_of(st)>>>(
          vecs, static_cast<uint4*>(din), static_cast<const uint4*>(dout), static_cast<const uint4*>(in));
      return;
    }
    gelu_backward_kernel<T><<<blocks_for(s.n, st), kThreads, 0, stream_of(st)>>>(
        s.n, static_cast<T*>(din), static_cast<const T*>(dout), static_cast<const T*>(in));
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

void span_loss(const CudaState* st, const ops::SpanLossShape& s, float* loss, void* dlogits, const void* logits,
               const std::int32_t* start_pos, const std::int32_t* end_pos) {
  with_dtype(s.dtype, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    span_loss_kernel<T><<<1, 512, 0, stream_of(st)>>>(s.batch, s.seq, loss, static_cast<T*>(dlogits),
                                                      static_cast<const T*>(logits), start_pos, end_pos);
  });
  CUDA_CHECK_LAUNCH();
}

}  // namespace roofline::engine::cuda_ops

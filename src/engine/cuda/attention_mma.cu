// Attention on the tensor cores for BF16 and F16 activations (head_dim 64),
// flash-attention style: a block takes 64 query rows of one sequence and head
// (a warp 16 of them) and walks the sequence's keys in tiles of 64 staged in
// shared memory; S = Q·Kᵀ and O += P·V are mma.sync m16n8k16 products with
// fp32 accumulators, the softmax is online in registers (each thread holds two
// rows' values: the accumulator layout of S is the operand layout of P), and
// neither S nor P is ever written to memory. Padding keys (j ≥ len) are
// masked; padding queries get outputs, as the fp32 kernel gives them.
//
// Fragment layouts of mma.sync.m16n8k16 (PTX ISA, "Matrix Fragments for
// mma.m16n8k16"), g = lane / 4, t = lane % 4:
//   A (16×16, row-major): a0 (g, 2t..2t+1), a1 (g+8, 2t..), a2 (g, 2t+8..), a3 (g+8, 2t+8..)
//   B (16×8, "col": B[k][n]): b0 (k 2t..2t+1, n g), b1 (k 2t+8..2t+9, n g)
//   C (16×8 fp32): c0 c1 (g, 2t..2t+1), c2 c3 (g+8, 2t..2t+1)
// So K (keys × d, row-major) read as 8×8 matrices by ldmatrix gives B of S =
// Q·Kᵀ, and V (row-major too) read by ldmatrix.trans gives B of O = P·V. The
// tiles arrive by cp.async into two buffers: the next tile's copy is in
// flight while this one is multiplied.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "src/engine/cuda/launch.cuh"
#include "src/engine/cuda/ops_cuda_transformer.hpp"

namespace roofline::engine::cuda_ops {

namespace {

constexpr int kD = 64;            // head_dim
constexpr int kRows = 64;         // query rows a block
constexpr int kTile = 64;         // keys a tile
constexpr int kWarps = kRows / 16;
constexpr int kPad = kD + 8;      // row stride in halves: 36 words, so the 8 rows g of a fragment hit 8 bank groups

template <class T>
__device__ __forceinline__ void mma16816(float* c, const std::uint32_t* a, std::uint32_t b0, std::uint32_t b1);

template <>
__device__ __forceinline__ void mma16816<__nv_bfloat16>(float* c, const std::uint32_t* a, std::uint32_t b0,
                                                        std::uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

template <>
__device__ __forceinline__ void mma16816<__half>(float* c, const std::uint32_t* a, std::uint32_t b0,
                                                 std::uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ __forceinline__ std::uint32_t pack(float lo, float hi, __nv_bfloat16*) {
  const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<const std::uint32_t*>(&v);
}
__device__ __forceinline__ std::uint32_t pack(float lo, float hi, __half*) {
  const __half2 v = __floats2half2_rn(lo, hi);
  return *reinterpret_cast<const std::uint32_t*>(&v);
}
// Two consecutive halves of shared memory as one operand register.
template <class T>
__device__ __forceinline__ std::uint32_t word(const T* p) {
  return *reinterpret_cast<const std::uint32_t*>(p);
}

__device__ __forceinline__ unsigned smem_addr(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
// 16 bytes global -> shared without a register round trip; zeros when !valid.
__device__ __forceinline__ void cp_async16(void* dst, const void* src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(dst)), "l"(src),
               "r"(valid ? 16 : 0));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }
__device__ __forceinline__ void ldmatrix_x4(std::uint32_t* r, const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(p)));
}
__device__ __forceinline__ void ldmatrix_x4_trans(std::uint32_t* r, const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(p)));
}

// Shared memory of a block: its Q rows and two buffers of K and V tiles (the
// next tile's copy in flight while this one is used), rows padded to kPad.
template <class T>
struct Smem {
  T q[kRows][kPad];
  T k[2][kTile][kPad];
  T v[2][kTile][kPad];
};

template <class T>
__global__ void __launch_bounds__(kWarps * 32) attention_mma_kernel(std::int64_t tokens, int heads,
                                                                    std::int64_t padded, float scale_log2,
                                                                    T* __restrict__ out, float* __restrict__ lse,
                                                                    const T* __restrict__ qkv,
                                                                    const std::int32_t* __restrict__ start,
                                                                    const std::int32_t* __restrict__ len) {
  __shared__ __align__(16) Smem<T> sm;
  const int b = blockIdx.z, h = blockIdx.y;
  const std::int64_t t0 = start[b], n = len[b], queries = padded > 0 ? padded : n;
  const std::int64_t q0 = std::int64_t(blockIdx.x) * kRows;
  if (q0 >= queries) return;
  const std::int64_t hd = std::int64_t(heads) * kD, row = 3 * hd;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  const T* head = qkv + std::int64_t(h) * kD;

  // Q rows (zeros past the queries), then K and V tiles, 16 bytes a thread a step.
  for (int e = threadIdx.x; e < kRows * kD / 8; e += kWarps * 32) {
    const int r = e / (kD / 8), c = (e % (kD / 8)) * 8;
    const bool ok = q0 + r < queries;
    cp_async16(&sm.q[r][c], ok ? head + (t0 + q0 + r) * row + c : head, ok);
  }
  auto load_tile = [&](std::int64_t j0, int buf) {
    for (int e = threadIdx.x; e < kTile * kD / 8; e += kWarps * 32) {
      const int r = e / (kD / 8), c = (e % (kD / 8)) * 8;
      const bool ok = j0 + r < n;
      const T* src = ok ? head + (t0 + j0 + r) * row + c : head;
      cp_async16(&sm.k[buf][r][c], src + (ok ? hd : 0), ok);
      cp_async16(&sm.v[buf][r][c], src + (ok ? 2 * hd : 0), ok);
    }
  };
  load_tile(0, 0);
  cp_async_commit();

  std::uint32_t qa[kD / 16][4];  // the warp's 16 rows as A fragments, one per 16 dims
  const int r0 = warp * 16;
  float o[kD / 8][4];
#pragma unroll
  for (int j = 0; j < kD / 8; ++j) o[j][0] = o[j][1] = o[j][2] = o[j][3] = 0.f;
  float m[2] = {-INFINITY, -INFINITY}, l[2] = {0.f, 0.f};  // rows g and g+8, in log2 units

  const std::int64_t tiles = (n + kTile - 1) / kTile;
  for (std::int64_t i = 0; i < tiles; ++i) {
    const int buf = int(i & 1);
    if (i + 1 < tiles) {
      load_tile((i + 1) * kTile, buf ^ 1);  // its buffer was last read before the previous iteration's barrier
      cp_async_commit();
      cp_async_wait<1>();
    } else {
      cp_async_wait<0>();
    }
    __syncthreads();
    if (i == 0) {
#pragma unroll
      for (int kk = 0; kk < kD / 16; ++kk) {
        qa[kk][0] = word(&sm.q[r0 + g][16 * kk + 2 * t]);
        qa[kk][1] = word(&sm.q[r0 + g + 8][16 * kk + 2 * t]);
        qa[kk][2] = word(&sm.q[r0 + g][16 * kk + 2 * t + 8]);
        qa[kk][3] = word(&sm.q[r0 + g + 8][16 * kk + 2 * t + 8]);
      }
    }
    const std::int64_t j0 = i * kTile;
    // S = Q · Kᵀ for the 64 keys: 8 fragments of 8 keys; B fragments of K by ldmatrix, two 16-dim steps a load.
    float s[kTile / 8][4];
#pragma unroll
    for (int j = 0; j < kTile / 8; ++j) {
      s[j][0] = s[j][1] = s[j][2] = s[j][3] = 0.f;
#pragma unroll
      for (int kk = 0; kk < kD / 16; kk += 2) {
        std::uint32_t kb[4];
        ldmatrix_x4(kb, &sm.k[buf][8 * j + (lane & 7)][16 * kk + 8 * (lane >> 3)]);
        mma16816<T>(s[j], qa[kk], kb[0], kb[1]);
        mma16816<T>(s[j], qa[kk + 1], kb[2], kb[3]);
      }
    }
    // Scale into log2 units, mask the keys past the sequence (last tile only), each row's maximum.
    float tile_max[2] = {-INFINITY, -INFINITY};
    const bool partial = j0 + kTile > n;
#pragma unroll
    for (int j = 0; j < kTile / 8; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        s[j][e] *= scale_log2;
        if (partial && j0 + 8 * j + 2 * t + (e & 1) >= n) s[j][e] = -INFINITY;
        tile_max[e >> 1] = fmaxf(tile_max[e >> 1], s[j][e]);
      }
    float corr[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      tile_max[r] = fmaxf(tile_max[r], __shfl_xor_sync(0xffffffffu, tile_max[r], 1));
      tile_max[r] = fmaxf(tile_max[r], __shfl_xor_sync(0xffffffffu, tile_max[r], 2));
      const float m_new = fmaxf(m[r], tile_max[r]);  // finite: every tile holds at least one real key
      corr[r] = exp2f(m[r] - m_new);
      m[r] = m_new;
      l[r] *= corr[r];
    }
#pragma unroll
    for (int j = 0; j < kD / 8; ++j) {
      o[j][0] *= corr[0], o[j][1] *= corr[0];
      o[j][2] *= corr[1], o[j][3] *= corr[1];
    }
    // P = exp2(S − m), summed per row, packed as A fragments (16 keys each) of O += P · V; B fragments of V
    // by ldmatrix.trans from its row-major tile, two 8-dim fragments a load.
#pragma unroll
    for (int kk = 0; kk < kTile / 16; ++kk) {
      float p[2][4];
#pragma unroll
      for (int half = 0; half < 2; ++half)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          p[half][e] = exp2f(s[2 * kk + half][e] - m[e >> 1]);
          l[e >> 1] += p[half][e];
        }
      const std::uint32_t pa[4] = {pack(p[0][0], p[0][1], (T*)nullptr), pack(p[0][2], p[0][3], (T*)nullptr),
                                   pack(p[1][0], p[1][1], (T*)nullptr), pack(p[1][2], p[1][3], (T*)nullptr)};
#pragma unroll
      for (int j = 0; j < kD / 8; j += 2) {
        std::uint32_t vb[4];
        ldmatrix_x4_trans(vb, &sm.v[buf][16 * kk + 8 * ((lane >> 3) & 1) + (lane & 7)][8 * j + 8 * (lane >> 4)]);
        mma16816<T>(o[j], pa, vb[0], vb[1]);
        mma16816<T>(o[j + 1], pa, vb[2], vb[3]);
      }
    }
    __syncthreads();  // every warp is done with this buffer before the next load overwrites it
  }
  // Each row's sum is spread over the 4 threads of its quad.
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    l[r] += __shfl_xor_sync(0xffffffffu, l[r], 1);
    l[r] += __shfl_xor_sync(0xffffffffu, l[r], 2);
  }
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const std::int64_t q = q0 + r0 + g + 8 * r;
    if (q >= queries) continue;
    const float inv = 1.f / l[r];
    T* dst = out + (t0 + q) * hd + std::int64_t(h) * kD;
#pragma unroll
    for (int j = 0; j < kD / 8; ++j)
      *reinterpret_cast<std::uint32_t*>(dst + 8 * j + 2 * t) =
          pack(o[j][2 * r] * inv, o[j][2 * r + 1] * inv, (T*)nullptr);
    if (lse && t == 0) lse[std::int64_t(h) * tokens + t0 + q] = (m[r] + log2f(l[r])) * 0.69314718055994531f;
  }
}

}  // namespace

bool attention_mma_applies(const ops::AttentionShape& s, const void* out, const void* qkv) {
  // 16-byte loads of Q, K and V rows, 4-byte stores of output pairs.
  return (s.dtype == DType::BF16 || s.dtype == DType::F16) && s.head_dim == kD &&
         reinterpret_cast<std::uintptr_t>(qkv) % 16 == 0 && reinterpret_cast<std::uintptr_t>(out) % 4 == 0;
}

void attention_mma_forward(const CudaState* st, const ops::AttentionShape& s, void* out, float* lse, const void* qkv,
                           const std::int32_t* start, const std::int32_t* len) {
  const std::int64_t queries = s.padded > 0 ? s.padded : s.max_len;
  const dim3 grid(static_cast<unsigned>((queries + kRows - 1) / kRows), static_cast<unsigned>(s.heads),
                  static_cast<unsigned>(s.batch));
  const float scale_log2 = 1.4426950408889634f / sqrtf(float(kD));
  if (s.dtype == DType::BF16)
    attention_mma_kernel<__nv_bfloat16><<<grid, kWarps * 32, 0, stream_of(st)>>>(
        s.tokens, static_cast<int>(s.heads), s.padded, scale_log2, static_cast<__nv_bfloat16*>(out), lse,
        static_cast<const __nv_bfloat16*>(qkv), start, len);
  else
    attention_mma_kernel<__half><<<grid, kWarps * 32, 0, stream_of(st)>>>(
        s.tokens, static_cast<int>(s.heads), s.padded, scale_log2, static_cast<__half*>(out), lse,
        static_cast<const __half*>(qkv), start, len);
  CUDA_CHECK_LAUNCH();
}

}  // namespace roofline::engine::cuda_ops

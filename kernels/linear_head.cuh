// probs = softmax(act2(W2 · act1(W1 · x + b1) + b2)) row by row (fp32): a
// network's last two Linear layers and the softmax of inference in one
// kernel. ece408's head (1024 → 32 → 10) took three kernels and two graph
// gaps, 4.2 + 1.8 + 1.9 µs of kernels at batch 64 on an H100; its
// work is 2 MFLOP.
//
// A block = kHeadRows batch rows (or one, for small batches), 8 warps: each warp takes kHeadFeatures
// hidden features at a time for all the rows (lanes along the inputs in
// float4s, a shuffle tree per row), the hidden rows go to shared memory,
// then a warp per (row, class) computes the logits and a warp per row the
// softmax (kernels/warp_softmax.cuh).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/warp_softmax.cuh"

namespace roofline::kernels {

constexpr int kHeadRows = 4;
constexpr int kHeadWarps = 8;         // warps of a block of kHeadRows rows
constexpr int kHeadRowWarps = 16;     // warps of a block of one row
constexpr int kHeadFeatures = 4;      // hidden features per warp at once
constexpr int kHeadMaxIn = 1024;      // shared memory: kHeadRows × in floats
constexpr int kHeadMaxHidden = 1024;  // shared memory: kHeadRows × hidden floats
constexpr int kHeadMaxClasses = 32;   // a warp's lanes
// Dynamic shared memory of linear_head_forward: the second layer's weights.
__host__ __device__ constexpr int head_dynamic_bytes(int hidden, int classes) {
  return hidden * classes * static_cast<int>(sizeof(float));
}

// probs (n, classes); x (n, in) with in % 4 == 0 and in ≤ kHeadMaxIn, x and
// w1 16-byte aligned; w1 (hidden, in), b1 (hidden) or null, w2 (classes,
// hidden), b2 (classes) or null. Grid: ⌈n / ROWS⌉ blocks of 32 · WARPS
// threads. ROWS = ROWS shares each weight load among 4 rows; ROWS = 1
// for small batches, where rows past the batch would be computed for nothing
// (at batch 1, 4 rows made each warp issue ~1600 instructions, and the
// kernel took 7.0 µs on the H100: issue-bound on one SM, by ncu),
// with 16 warps: simple-mlp's 128 hidden features in 2 passes of the
// feature loop instead of 4, each pass an L2 round trip.
//
// Every load is issued before anything waits on it: the block's x rows and
// the second layer's weights go to shared memory first, and a warp takes
// kHeadFeatures hidden features at once, all their weight loads in flight (a
// first version that walked the features one by one, each an L2 round trip,
// and read w2 from global memory per (row, class) took 11.6 µs at batch 64).
template <int ROWS, int WARPS = kHeadWarps>
__global__ void __launch_bounds__(32 * WARPS)
    linear_head_forward(int n, int in, int hidden, int classes, float* __restrict__ probs,
                        const float* __restrict__ x, const float* __restrict__ w1, const float* __restrict__ b1,
                        bool relu1, const float* __restrict__ w2, const float* __restrict__ b2, bool relu2) {
  __shared__ float4 xs[ROWS][kHeadMaxIn / 4];
  __shared__ float h[ROWS][kHeadMaxHidden];
  __shared__ float z[ROWS][kHeadMaxClasses];
  extern __shared__ float w2s[];  // (classes, hidden)
  const int tid = static_cast<int>(threadIdx.x), lane = tid & 31, warp = tid >> 5;
  constexpr int kThreadsHead = 32 * WARPS;
  const int m0 = static_cast<int>(blockIdx.x) * ROWS;
  const int in4 = in / 4;
  for (int i = tid; i < ROWS * in4; i += kThreadsHead) {
    const int r = i / in4, k = i - r * in4;
    const int m = m0 + r < n ? m0 + r : m0;  // rows past the batch repeat row m0 and are not written
    xs[r][k] = __ldg(reinterpret_cast<const float4*>(x + static_cast<std::int64_t>(m) * in) + k);
  }
  for (int i = tid; i < classes * hidden; i += kThreadsHead) w2s[i] = __ldg(w2 + i);
  __syncthreads();
  for (int f0 = warp * kHeadFeatures; f0 < hidden; f0 += WARPS * kHeadFeatures) {
    const float4* wrow[kHeadFeatures];
    float bias[kHeadFeatures];  // loaded beside the weights, not after the sums
#pragma unroll
    for (int j = 0; j < kHeadFeatures; ++j) {
      const int f = f0 + j < hidden ? f0 + j : f0;
      wrow[j] = reinterpret_cast<const float4*>(w1 + static_cast<std::int64_t>(f) * in);
      bias[j] = b1 && lane < ROWS ? __ldg(b1 + f) : 0.f;
    }
    float acc[kHeadFeatures][ROWS];
#pragma unroll
    for (int j = 0; j < kHeadFeatures; ++j)
#pragma unroll
      for (int r = 0; r < ROWS; ++r) acc[j][r] = 0.f;
#pragma unroll 8
    for (int k = lane; k < in4; k += 32) {
      float4 wv[kHeadFeatures];
#pragma unroll
      for (int j = 0; j < kHeadFeatures; ++j) wv[j] = __ldg(wrow[j] + k);
#pragma unroll
      for (int r = 0; r < ROWS; ++r) {
        const float4 xv = xs[r][k];
#pragma unroll
        for (int j = 0; j < kHeadFeatures; ++j) {
          acc[j][r] = fmaf(xv.x, wv[j].x, acc[j][r]);
          acc[j][r] = fmaf(xv.y, wv[j].y, acc[j][r]);
          acc[j][r] = fmaf(xv.z, wv[j].z, acc[j][r]);
          acc[j][r] = fmaf(xv.w, wv[j].w, acc[j][r]);
        }
      }
    }
#pragma unroll
    for (int j = 0; j < kHeadFeatures; ++j)
#pragma unroll
      for (int r = 0; r < ROWS; ++r) acc[j][r] = warp_sum(acc[j][r]);
#pragma unroll
    for (int j = 0; j < kHeadFeatures; ++j) {
      const int f = f0 + j;
      if (f >= hidden || lane >= ROWS) continue;
      float v = bias[j];
#pragma unroll
      for (int r = 0; r < ROWS; ++r)
        if (r == lane) v += acc[j][r];
      h[lane][f] = relu1 ? (v <= 0.f ? 0.f : v) : v;
    }
  }
  __syncthreads();
  for (int rc = warp; rc < ROWS * classes; rc += WARPS) {
    const int r = rc / classes, c = rc - r * classes;
    const float bias = b2 && lane == 0 ? __ldg(b2 + c) : 0.f;
    float acc = 0.f;
    for (int k = lane; k < hidden; k += 32) acc = fmaf(h[r][k], w2s[c * hidden + k], acc);
    acc = warp_sum(acc);
    if (lane == 0) {
      const float v = acc + bias;
      z[r][c] = relu2 ? (v <= 0.f ? 0.f : v) : v;
    }
  }
  __syncthreads();
  if (warp >= ROWS || m0 + warp >= n) return;
  const int r = warp;
  const bool valid = lane < classes;
  const float p = warp_softmax(valid ? z[r][lane] : 0.f, classes);
  if (valid) probs[static_cast<std::int64_t>(m0 + r) * classes + lane] = p;
}

}  // namespace roofline::kernels

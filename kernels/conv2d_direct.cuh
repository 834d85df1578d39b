// Direct 2-D convolution (cross-correlation, zero padding, NCHW, fp32): the
// first rung of the ECE408 ladder (roadmap item 6) and the engine's CUDA
// convolution. One thread per output (forward) or per input element (input
// gradient, a gather: no atomics, deterministic); one block per weight for
// the weight gradient (a block reduction in a fixed order). Correct first:
// later rungs (tiling, constant memory, im2col + GEMM, tensor cores) are
// checked against these.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

namespace roofline::kernels {

struct ConvDims {
  int n, c, h, w;  // input (n, c, h, w)
  int k, r, s;     // weights (k, c, r, s)
  int stride, pad;
  int oh, ow;  // output (n, k, oh, ow)
};

// out (n, k, oh, ow) = act(Σ in · w + b); relu keeps NaN (v <= 0 ? 0 : v)
__global__ void conv2d_forward_direct(ConvDims d, float* __restrict__ out, const float* __restrict__ in,
                                      const float* __restrict__ w, const float* __restrict__ b, bool relu) {
  const std::int64_t total = std::int64_t(d.n) * d.k * d.oh * d.ow;
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < total;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    const int x = int(i % d.ow), y = int((i / d.ow) % d.oh), k = int((i / (std::int64_t(d.ow) * d.oh)) % d.k);
    const int n = int(i / (std::int64_t(d.ow) * d.oh * d.k));
    float acc = b ? b[k] : 0.f;
    for (int c = 0; c < d.c; ++c) {
      const float* ip = in + (std::int64_t(n) * d.c + c) * d.h * d.w;
      const float* wp = w + (std::int64_t(k) * d.c + c) * d.r * d.s;
      for (int r = 0; r < d.r; ++r) {
        const int iy = y * d.stride - d.pad + r;
        if (iy < 0 || iy >= d.h) continue;
        for (int q = 0; q < d.s; ++q) {
          const int ix = x * d.stride - d.pad + q;
          if (ix < 0 || ix >= d.w) continue;
          acc += ip[iy * d.w + ix] * wp[r * d.s + q];
        }
      }
    }
    out[i] = relu ? (acc <= 0.f ? 0.f : acc) : acc;
  }
}

// din (n, c, h, w) = Σ over the outputs each input fed of dpre · w
__global__ void conv2d_backward_input_direct(ConvDims d, float* __restrict__ din, const float* __restrict__ dpre,
                                             const float* __restrict__ w) {
  const std::int64_t total = std::int64_t(d.n) * d.c * d.h * d.w;
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < total;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    const int ix = int(i % d.w), iy = int((i / d.w) % d.h), c = int((i / (std::int64_t(d.w) * d.h)) % d.c);
    const int n = int(i / (std::int64_t(d.w) * d.h * d.c));
    float acc = 0.f;
    for (int k = 0; k < d.k; ++k) {
      const float* gp = dpre + (std::int64_t(n) * d.k + k) * d.oh * d.ow;
      const float* wp = w + (std::int64_t(k) * d.c + c) * d.r * d.s;
      for (int r = 0; r < d.r; ++r) {
        const int ty = iy + d.pad - r;  // = y · stride
        if (ty < 0 || ty % d.stride != 0) continue;
        const int y = ty / d.stride;
        if (y >= d.oh) continue;
        for (int q = 0; q < d.s; ++q) {
          const int tx = ix + d.pad - q;
          if (tx < 0 || tx % d.stride != 0) continue;
          const int x = tx / d.stride;
          if (x >= d.ow) continue;
          acc += gp[y * d.ow + x] * wp[r * d.s + q];
        }
      }
    }
    din[i] = acc;
  }
}

// One block per weight (k, c, r, s), then one per bias k: a sum over every
// image and output position, reduced in shared memory in a fixed order.
template <int kThreads>
__global__ void conv2d_backward_weight_direct(ConvDims d, float* __restrict__ dw, float* __restrict__ db,
                                              const float* __restrict__ dpre, const float* __restrict__ in) {
  __shared__ float part[kThreads];
  const int nw = d.k * d.c * d.r * d.s;
  const int j = blockIdx.x;
  const std::int64_t plane = std::int64_t(d.oh) * d.ow, count = std::int64_t(d.n) * plane;
  float acc = 0.f;
  if (j < nw) {
    const int q = j % d.s, r = (j / d.s) % d.r, c = (j / (d.s * d.r)) % d.c, k = j / (d.s * d.r * d.c);
    for (std::int64_t e = threadIdx.x; e < count; e += kThreads) {
      const int n = int(e / plane), yx = int(e % plane), y = yx / d.ow, x = yx % d.ow;
      const int iy = y * d.stride - d.pad + r, ix = x * d.stride - d.pad + q;
      if (iy < 0 || iy >= d.h || ix < 0 || ix >= d.w) continue;
      acc += dpre[(std::int64_t(n) * d.k + k) * plane + yx] * in[((std::int64_t(n) * d.c + c) * d.h + iy) * d.w + ix];
    }
  } else {
    const int k = j - nw;
    for (std::int64_t e = threadIdx.x; e < count; e += kThreads) {
      const int n = int(e / plane), yx = int(e % plane);
      acc += dpre[(std::int64_t(n) * d.k + k) * plane + yx];
    }
  }
  part[threadIdx.x] = acc;
  __syncthreads();
  for (int stride = kThreads / 2; stride > 0; stride >>= 1) {
    if (threadIdx.x < stride) part[threadIdx.x] += part[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    if (j < nw)
      dw[j] = part[0];
    else
      db[j - nw] = part[0];
  }
}

}  // namespace roofline::kernels

// Element-wise ops, bias reductions and the batch gather on the GPU (the
// optimizers: optim.cu).
#include <cstdint>
#include "src/engine/cuda/elementwise.cuh"
#include "src/engine/cuda/launch.cuh"
#include "src/engine/cuda/ops_cuda.hpp"

namespace roofline::engine::cuda_ops {

namespace {

__device__ __forceinline__ float relu(float v) { return v <= 0.f ? 0.f : v; }  // keeps NaN, as torch.relu

__global__ void bias_act_kernel(std::int64_t n, std::int64_t m, float* __restrict__ out, const float* __restrict__ b,
                                bool relu_on) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n * m;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    float v = out[i] + (b ? b[i % m] : 0.f);
    out[i] = relu_on ? relu(v) : v;
  }
}

__global__ void relu_forward_kernel(std::int64_t n, float* out, const float* in) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x)
    out[i] = relu(in[i]);
}

__global__ void copy_kernel(std::int64_t n, float* out, const float* in) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x)
    out[i] = in[i];
}

__global__ void relu_backward_kernel(std::int64_t n, float* din, const float* dout, const float* out) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x)
    din[i] = out[i] > 0.f ? dout[i] : 0.f;
}

// sums (m) = Σ_rows x (n, m): blocks of 32 columns × 8 row lanes, reduced in
// shared memory in a fixed order (deterministic).
__global__ void column_sums_kernel(std::int64_t n, std::int64_t m, float* __restrict__ sums,
                                   const float* __restrict__ x) {
  __shared__ float part[8][33];
  const std::int64_t col = blockIdx.x * 32 + threadIdx.x;
  float acc = 0.f;
  if (col < m)
    for (std::int64_t r = threadIdx.y; r < n; r += 8) acc += x[r * m + col];
  part[threadIdx.y][threadIdx.x] = acc;
  __syncthreads();
  if (threadIdx.y == 0 && col < m) {
    float s = 0.f;
    for (int k = 0; k < 8; ++k) s += part[k][threadIdx.x];
    sums[col] = s;
  }
}

// dpre = dout ⊙ [out > 0] (or dout) and db = Σ_rows dpre: the column-sum
// layout above, with the mask applied on the way. dpre may alias dout (each
// element is read and written by the same thread).
__global__ void activation_bias_backward_kernel(std::int64_t n, std::int64_t m, bool relu_on, float* dpre,
                                                float* __restrict__ db, const float* dout, const float* out) {
  __shared__ float part[8][33];
  const std::int64_t col = blockIdx.x * 32 + threadIdx.x;
  float acc = 0.f;
  if (col < m)
    for (std::int64_t r = threadIdx.y; r < n; r += 8) {
      const std::int64_t k = r * m + col;
      const float g = relu_on ? (out[k] > 0.f ? dout[k] : 0.f) : dout[k];
      dpre[k] = g;
      acc += g;
    }
  part[threadIdx.y][threadIdx.x] = acc;
  __syncthreads();
  if (threadIdx.y == 0 && col < m) {
    float sum = 0.f;
    for (int k = 0; k < 8; ++k) sum += part[k][threadIdx.x];
    db[col] = sum;
  }
}

// A pixel value (0-255, resized or not) normalised: (v / 255 − mean) / std as
// the CPU reference computes it (same float operations, no FMA contraction).
__device__ __forceinline__ float normalized(float v, const ops::BatchShape& s) {
  return __fmul_rn(__fsub_rn(__fmul_rn(v, static_cast<float>(1.0 / 255.0)), s.mean), s.inv_std);
}

// One thread per output pixel; bilinear with half-pixel centres, as the CPU
// reference (same float operations, no FMA contraction).
__global__ void gather_kernel(ops::BatchShape s, float* __restrict__ x, std::int32_t* __restrict__ y,
                              const std::uint8_t* __restrict__ images, const std::uint8_t* __restrict__ labels,
                              const std::int32_t* __restrict__ order, std::int64_t first,
                              const std::int32_t* __restrict__ step) {
  const std::int64_t per = s.out_h * s.out_w, total = s.batch * per;
  const std::int64_t base = first + (step ? std::int64_t(*step) : 0) * s.stride;
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < total;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t b = i / per, oy = (i % per) / s.out_w, ox = i % s.out_w;
    const std::int64_t idx = order[base + b];
    const std::uint8_t* img = images + idx * s.in_h * s.in_w;
    float v;
    if (s.in_h == s.out_h && s.in_w == s.out_w) {
      v = static_cast<float>(img[oy * s.in_w + ox]);
    } else {
      const float scale_y = __fdiv_rn(static_cast<float>(s.in_h), static_cast<float>(s.out_h));
      const float scale_x = __fdiv_rn(static_cast<float>(s.in_w), static_cast<float>(s.out_w));
      float sy = __fsub_rn(__fmul_rn(__fadd_rn(static_cast<float>(oy), 0.5f), scale_y), 0.5f);
      float sx = __fsub_rn(__fmul_rn(__fadd_rn(static_cast<float>(ox), 0.5f), scale_x), 0.5f);
      sy = sy < 0.f ? 0.f : sy;
      sx = sx < 0.f ? 0.f : sx;
      const std::int64_t y0 = static_cast<std::int64_t>(sy), x0 = static_cast<std::int64_t>(sx);
      const std::int64_t y1 = y0 + 1 < s.in_h ? y0 + 1 : s.in_h - 1, x1 = x0 + 1 < s.in_w ? x0 + 1 : s.in_w - 1;
      const float fy = __fsub_rn(sy, static_cast<float>(y0)), fx = __fsub_rn(sx, static_cast<float>(x0));
      const float gx = __fsub_rn(1.f, fx), gy = __fsub_rn(1.f, fy);
      const float top = __fadd_rn(__fmul_rn(static_cast<float>(img[y0 * s.in_w + x0]), gx),
                                  __fmul_rn(static_cast<float>(img[y0 * s.in_w + x1]), fx));
      const float bot = __fadd_rn(__fmul_rn(static_cast<float>(img[y1 * s.in_w + x0]), gx),
                                  __fmul_rn(static_cast<float>(img[y1 * s.in_w + x1]), fx));
      v = __fadd_rn(__fmul_rn(top, gy), __fmul_rn(bot, fy));
    }
    x[i] = normalized(v, s);
    if (oy == 0 && ox == 0) y[b] = labels[idx];
  }
}

// The same without resizing, 4 pixels a thread (per % 4 == 0, batch·per/4 <
// 2³¹): 32-bit indices and one division a run instead of three 64-bit ones an
// element, a 4-byte load and a 16-byte store. The gather of a fused launch's
// 334 batches of 128 (42,752 images) took 190 µs on an H100 in the general
// kernel, bound by its index arithmetic. Same float operations per element.
__global__ void gather_same_kernel(ops::BatchShape s, float* __restrict__ x, std::int32_t* __restrict__ y,
                                   const std::uint8_t* __restrict__ images, const std::uint8_t* __restrict__ labels,
                                   const std::int32_t* __restrict__ order, std::int64_t first,
                                   const std::int32_t* __restrict__ step) {
  const int per = static_cast<int>(s.out_h * s.out_w), per4 = per / 4, total4 = static_cast<int>(s.batch) * per4;
  const std::int64_t base = first + (step ? std::int64_t(*step) : 0) * s.stride;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < total4; i += gridDim.x * blockDim.x) {
    const int b = i / per4, q = i - b * per4;
    const std::int64_t idx = order[base + b];
    const uchar4 p = reinterpret_cast<const uchar4*>(images + idx * per)[q];
    reinterpret_cast<float4*>(x)[i] =
        make_float4(normalized(p.x, s), normalized(p.y, s), normalized(p.z, s), normalized(p.w, s));
    if (q == 0) y[b] = labels[idx];
  }
}

}  // namespace

void launch_bias_act(const CudaState* st, std::int64_t n, std::int64_t m, float* out, const float* b, bool relu_on) {
  bias_act_kernel<<<blocks_for(n * m, st), kThreads, 0, stream_of(st)>>>(n, m, out, b, relu_on);
  CUDA_CHECK_LAUNCH();
}

void launch_column_sums(const CudaState* st, std::int64_t n, std::int64_t m, float* sums, const float* x) {
  column_sums_kernel<<<static_cast<unsigned>((m + 31) / 32), dim3(32, 8), 0, stream_of(st)>>>(n, m, sums, x);
  CUDA_CHECK_LAUNCH();
}

void activation_forward(const CudaState* st, const ops::EltwiseShape& s, float* out, const float* in) {
  if (s.act == ops::Activation::ReLU)
    relu_forward_kernel<<<blocks_for(s.n, st), kThreads, 0, stream_of(st)>>>(s.n, out, in);
  else if (out != in)
    copy_kernel<<<blocks_for(s.n, st), kThreads, 0, stream_of(st)>>>(s.n, out, in);
  else
    return;
  CUDA_CHECK_LAUNCH();
}

void activation_backward(const CudaState* st, const ops::EltwiseShape& s, float* din, const float* dout,
                         const float* out) {
  if (s.act == ops::Activation::ReLU)
    relu_backward_kernel<<<blocks_for(s.n, st), kThreads, 0, stream_of(st)>>>(s.n, din, dout, out);
  else if (din != dout)
    copy_kernel<<<blocks_for(s.n, st), kThreads, 0, stream_of(st)>>>(s.n, din, dout);
  else
    return;
  CUDA_CHECK_LAUNCH();
}

void activation_bias_backward(const CudaState* st, const ops::BiasGradShape& s, float* dpre, float* db,
                              const float* dout, const float* out) {
  activation_bias_backward_kernel<<<static_cast<unsigned>((s.cols + 31) / 32), dim3(32, 8), 0, stream_of(st)>>>(
      s.rows, s.cols, s.act == ops::Activation::ReLU, dpre, db, dout, out);
  CUDA_CHECK_LAUNCH();
}

void gather_batch(const CudaState* st, const ops::BatchShape& s, float* x, std::int32_t* y, const std::uint8_t* images,
                  const std::uint8_t* labels, const std::int32_t* order, std::int64_t first, const std::int32_t* step) {
  const std::int64_t per = s.out_h * s.out_w;
  const bool aligned = reinterpret_cast<std::uintptr_t>(images) % 4 == 0 && reinterpret_cast<std::uintptr_t>(x) % 16 == 0;
  if (s.in_h == s.out_h && s.in_w == s.out_w && per % 4 == 0 && s.batch * (per / 4) < (std::int64_t{1} << 31) &&
      aligned)
    gather_same_kernel<<<blocks_for(s.batch * (per / 4), st), kThreads, 0, stream_of(st)>>>(s, x, y, images, labels,
                                                                                           order, first, step);
  else
    gather_kernel<<<blocks_for(s.batch * per, st), kThreads, 0, stream_of(st)>>>(s, x, y, images, labels, order,
                                                                                first, step);
  CUDA_CHECK_LAUNCH();
}

}  // namespace roofline::engine::cuda_ops

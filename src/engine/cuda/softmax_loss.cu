// Softmax, log-softmax, NLL and the fused cross-entropy on the GPU: one warp
// per row (rows here are short: 10 classes), shuffles for the reductions.
#include <cfloat>

#include "kernels/warp_softmax.cuh"
#include "src/engine/cuda/launch.cuh"
#include "src/engine/cuda/ops_cuda.hpp"

namespace roofline::engine::cuda_ops {

namespace {

using kernels::warp_sum;

// Row max that lets NaN through (fmaxf would drop it), so NaN rows stay NaN.
__device__ __forceinline__ float row_max(const float* x, std::int64_t cols, int lane) {
  float m = -FLT_MAX;
  bool nan = false;
  for (std::int64_t j = lane; j < cols; j += 32) {
    m = fmaxf(m, x[j]);
    nan |= isnan(x[j]);
  }
  m = kernels::warp_max(m);
  kernels::warp_nan_max(m, nan);
  return m;
}

__global__ void softmax_kernel(std::int64_t rows, std::int64_t cols, float* __restrict__ out,
                               const float* __restrict__ in, bool log) {
  const int lane = threadIdx.x % 32;
  const std::int64_t warps = std::int64_t(gridDim.x) * (blockDim.x / 32);
  for (std::int64_t r = blockIdx.x * std::int64_t(blockDim.x / 32) + threadIdx.x / 32; r < rows; r += warps) {
    const float* x = in + r * cols;
    const float m = row_max(x, cols, lane);
    float sum = 0.f;
    for (std::int64_t j = lane; j < cols; j += 32) sum += expf(x[j] - m);
    sum = warp_sum(sum);
    if (log) {
      const float lse = m + logf(sum);
      for (std::int64_t j = lane; j < cols; j += 32) out[r * cols + j] = x[j] - lse;
    } else {
      for (std::int64_t j = lane; j < cols; j += 32) out[r * cols + j] = expf(x[j] - m) / sum;
    }
  }
}

__global__ void softmax_backward_kernel(std::int64_t rows, std::int64_t cols, float* __restrict__ din,
                                        const float* __restrict__ dout, const float* __restrict__ out, bool log) {
  const int lane = threadIdx.x % 32;
  const std::int64_t warps = std::int64_t(gridDim.x) * (blockDim.x / 32);
  for (std::int64_t r = blockIdx.x * std::int64_t(blockDim.x / 32) + threadIdx.x / 32; r < rows; r += warps) {
    const float* g = dout + r * cols;
    const float* y = out + r * cols;
    float acc = 0.f;
    for (std::int64_t j = lane; j < cols; j += 32) acc += log ? g[j] : g[j] * y[j];
    acc = warp_sum(acc);
    for (std::int64_t j = lane; j < cols; j += 32)
      din[r * cols + j] = log ? g[j] - expf(y[j]) * acc : y[j] * (g[j] - acc);
  }
}

// loss (1) = −(1/rows) Σ logp[i, label_i]: one block.
__global__ void nll_forward_kernel(std::int64_t rows, std::int64_t cols, float* loss, const float* __restrict__ logp,
                                   const std::int32_t* __restrict__ labels) {
  __shared__ double part[kThreads];
  double acc = 0;
  for (std::int64_t i = threadIdx.x; i < rows; i += blockDim.x) acc -= logp[i * cols + labels[i]];
  part[threadIdx.x] = acc;
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) *loss = static_cast<float>(part[0] / static_cast<double>(rows));
}

__global__ void nll_backward_kernel(std::int64_t rows, std::int64_t cols, float* __restrict__ dlogp,
                                    const std::int32_t* __restrict__ labels, float value) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < rows * cols;
       i += std::int64_t(gridDim.x) * blockDim.x)
    dlogp[i] = (i % cols) == labels[i / cols] ? value : 0.f;
}

// Fused log-softmax + NLL over a batch, with the statistics a training loop
// keeps on the device. One block: warps take rows; the block sums the rows'
// losses in double and thread 0 updates the statistics (no atomics needed).
__global__ void cross_entropy_kernel(std::int64_t rows, std::int64_t cols, float* __restrict__ dlogits,
                                     const float* __restrict__ logits, const std::int32_t* __restrict__ labels,
                                     float grad_scale, ops::LossStats stats) {
  __shared__ double loss_part[kThreads / 32];
  __shared__ int correct_part[kThreads / 32];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  double loss_acc = 0;
  int correct = 0;
  for (std::int64_t r = warp; r < rows; r += kThreads / 32) {
    const float* x = logits + r * cols;
    // Max and its first index (the argmax of the CPU paths).
    float m = -FLT_MAX;
    int arg = 0x7fffffff;
    bool nan = false;
    for (std::int64_t j = lane; j < cols; j += 32) {
      const float v = x[j];
      nan |= isnan(v);
      if (v > m || (v == m && j < arg)) {
        m = v;
        arg = int(j);
      }
    }
    const kernels::MaxAt row = kernels::warp_argmax(m, arg);
    m = row.m;
    arg = row.arg;
    nan = kernels::warp_nan_max(m, nan);
    float sum = 0.f;
    for (std::int64_t j = lane; j < cols; j += 32) sum += expf(x[j] - m);
    const float lse = kernels::warp_logsumexp(m, sum);
    const int label = labels[r];
    if (lane == 0) {
      loss_acc += static_cast<double>(lse - x[label]);
      correct += (!nan && arg == label) ? 1 : 0;
    }
    if (dlogits)
      for (std::int64_t j = lane; j < cols; j += 32)
        dlogits[r * cols + j] = grad_scale * (expf(x[j] - lse) - (j == label ? 1.f : 0.f));
  }
  if (lane == 0) {
    loss_part[warp] = loss_acc;
    correct_part[warp] = correct;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    double total = 0;
    int right = 0;
    for (int w = 0; w < kThreads / 32; ++w) {
      total += loss_part[w];
      right += correct_part[w];
    }
    const std::int32_t step = stats.step ? *stats.step : 0;
    const float mean = static_cast<float>(total / static_cast<double>(rows));
    if (stats.loss_sum) *stats.loss_sum += total;
    if (stats.correct) *stats.correct += right;
    if (stats.step_loss) stats.step_loss[step] = mean;
    if (stats.first_bad_step && !isfinite(mean) && step < *stats.first_bad_step) *stats.first_bad_step = step;
  }
}

unsigned row_blocks(std::int64_t rows, const CudaState* st) {
  return blocks_for(rows * 32, st);  // a warp per row
}

}  // namespace

void softmax_forward(const CudaState* st, const ops::RowsShape& s, float* out, const float* in) {
  softmax_kernel<<<row_blocks(s.rows, st), kThreads, 0, stream_of(st)>>>(s.rows, s.cols, out, in, false);
  CUDA_CHECK_LAUNCH();
}

void softmax_backward(const CudaState* st, const ops::RowsShape& s, float* din, const float* dout, const float* out) {
  softmax_backward_kernel<<<row_blocks(s.rows, st), kThreads, 0, stream_of(st)>>>(s.rows, s.cols, din, dout, out,
                                                                                  false);
  CUDA_CHECK_LAUNCH();
}

void log_softmax_forward(const CudaState* st, const ops::RowsShape& s, float* out, const float* in) {
  softmax_kernel<<<row_blocks(s.rows, st), kThreads, 0, stream_of(st)>>>(s.rows, s.cols, out, in, true);
  CUDA_CHECK_LAUNCH();
}

void log_softmax_backward(const CudaState* st, const ops::RowsShape& s, float* din, const float* dout,
                          const float* out) {
  softmax_backward_kernel<<<row_blocks(s.rows, st), kThreads, 0, stream_of(st)>>>(s.rows, s.cols, din, dout, out, true);
  CUDA_CHECK_LAUNCH();
}

void nll_loss_forward(const CudaState* st, const ops::RowsShape& s, float* loss, const float* logp,
                      const std::int32_t* labels) {
  nll_forward_kernel<<<1, kThreads, 0, stream_of(st)>>>(s.rows, s.cols, loss, logp, labels);
  CUDA_CHECK_LAUNCH();
}

void nll_loss_backward(const CudaState* st, const ops::RowsShape& s, float* dlogp, const std::int32_t* labels,
                       float dloss) {
  nll_backward_kernel<<<blocks_for(s.rows * s.cols, st), kThreads, 0, stream_of(st)>>>(
      s.rows, s.cols, dlogp, labels, -dloss / static_cast<float>(s.rows));
  CUDA_CHECK_LAUNCH();
}

void cross_entropy(const CudaState* st, const ops::RowsShape& s, float* dlogits, const float* logits,
                   const std::int32_t* labels, float grad_scale, const ops::LossStats& stats) {
  cross_entropy_kernel<<<1, kThreads, 0, stream_of(st)>>>(s.rows, s.cols, dlogits, logits, labels, grad_scale, stats);
  CUDA_CHECK_LAUNCH();
}

}  // namespace roofline::engine::cuda_ops

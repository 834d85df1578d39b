// Convolution (kernels/conv2d_direct.cuh) and max-pooling on the GPU.
#include "kernels/conv2d_direct.cuh"
#include "src/engine/cuda/launch.cuh"
#include "src/engine/cuda/ops_cuda.hpp"

namespace roofline::engine::cuda_ops {

namespace {

kernels::ConvDims dims(const ops::Conv2dShape& s) {
  kernels::ConvDims d;
  d.n = int(s.n);
  d.c = int(s.c);
  d.h = int(s.h);
  d.w = int(s.w);
  d.k = int(s.k);
  d.r = int(s.r);
  d.s = int(s.s);
  d.stride = int(s.stride);
  d.pad = int(s.pad);
  d.oh = int(s.oh());
  d.ow = int(s.ow());
  return d;
}

// out, argmax (n·c, oh, ow): first maximum in row-major window order; NaN wins (as PyTorch).
__global__ void maxpool_forward_kernel(std::int64_t planes, int h, int w, int kernel, int stride, int oh, int ow,
                                       float* __restrict__ out, std::int32_t* __restrict__ argmax,
                                       const float* __restrict__ in) {
  const std::int64_t total = planes * oh * ow;
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < total;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    const int x = int(i % ow), y = int((i / ow) % oh);
    const std::int64_t p = i / (std::int64_t(ow) * oh);
    const float* ip = in + p * h * w;
    int best = (y * stride) * w + x * stride;
    float m = ip[best];
    for (int r = 0; r < kernel; ++r)
      for (int q = 0; q < kernel; ++q) {
        const int idx = (y * stride + r) * w + x * stride + q;
        const float v = ip[idx];
        if (v > m || isnan(v)) {
          m = v;
          best = idx;
        }
      }
    out[i] = m;
    argmax[i] = best;
  }
}

// din (n·c, h, w): each input element gathers dout from the windows that
// chose it (windows may overlap when stride < kernel). No atomics.
__global__ void maxpool_backward_kernel(std::int64_t planes, int h, int w, int kernel, int stride, int oh, int ow,
                                        float* __restrict__ din, const float* __restrict__ dout,
                                        const std::int32_t* __restrict__ argmax) {
  const std::int64_t total = planes * h * w;
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < total;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    const int ix = int(i % w), iy = int((i / w) % h);
    const std::int64_t p = i / (std::int64_t(w) * h);
    const int idx = iy * w + ix;
    // Windows y with y·stride <= iy < y·stride + kernel.
    const int y_lo = iy >= kernel ? (iy - kernel) / stride + 1 : 0, y_hi = min(iy / stride, oh - 1);
    const int x_lo = ix >= kernel ? (ix - kernel) / stride + 1 : 0, x_hi = min(ix / stride, ow - 1);
    float acc = 0.f;
    for (int y = y_lo; y <= y_hi; ++y)
      for (int x = x_lo; x <= x_hi; ++x) {
        const std::int64_t o = (p * oh + y) * ow + x;
        if (argmax[o] == idx) acc += dout[o];
      }
    din[i] = acc;
  }
}

}  // namespace

void conv2d_forward(const CudaState* st, const ops::Conv2dShape& s, float* out, const float* in, const float* w,
                    const float* b) {
  const kernels::ConvDims d = dims(s);
  kernels::conv2d_forward_direct<<<blocks_for(s.n * s.k * s.oh() * s.ow(), st), kThreads, 0, stream_of(st)>>>(
      d, out, in, w, b, s.act == ops::Activation::ReLU);
  CUDA_CHECK_LAUNCH();
}

void conv2d_backward_input(const CudaState* st, const ops::Conv2dShape& s, float* din, const float* dpre,
                           const float* w) {
  const kernels::ConvDims d = dims(s);
  kernels::conv2d_backward_input_direct<<<blocks_for(s.n * s.c * s.h * s.w, st), kThreads, 0, stream_of(st)>>>(d, din,
                                                                                                               dpre, w);
  CUDA_CHECK_LAUNCH();
}

void conv2d_backward_weight(const CudaState* st, const ops::Conv2dShape& s, float* dw, float* db, const float* dpre,
                            const float* in) {
  const kernels::ConvDims d = dims(s);
  const unsigned blocks = static_cast<unsigned>(s.k * s.c * s.r * s.s + (db ? s.k : 0));
  kernels::conv2d_backward_weight_direct<kThreads><<<blocks, kThreads, 0, stream_of(st)>>>(d, dw, db, dpre, in);
  CUDA_CHECK_LAUNCH();
}

void maxpool2d_forward(const CudaState* st, const ops::Pool2dShape& s, float* out, std::int32_t* argmax,
                       const float* in) {
  maxpool_forward_kernel<<<blocks_for(s.n * s.c * s.oh() * s.ow(), st), kThreads, 0, stream_of(st)>>>(
      s.n * s.c, int(s.h), int(s.w), int(s.kernel), int(s.stride), int(s.oh()), int(s.ow()), out, argmax, in);
  CUDA_CHECK_LAUNCH();
}

void maxpool2d_backward(const CudaState* st, const ops::Pool2dShape& s, float* din, const float* dout,
                        const std::int32_t* argmax) {
  maxpool_backward_kernel<<<blocks_for(s.n * s.c * s.h * s.w, st), kThreads, 0, stream_of(st)>>>(
      s.n * s.c, int(s.h), int(s.w), int(s.kernel), int(s.stride), int(s.oh()), int(s.ow()), din, dout, argmax);
  CUDA_CHECK_LAUNCH();
}

}  // namespace roofline::engine::cuda_ops

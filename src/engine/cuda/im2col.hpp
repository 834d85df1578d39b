// Convolutions over a few input channels as one GEMM over an explicit im2col
// matrix (im2col.cu's kernels, conv_im2col_gpu.cpp's orchestration): the
// first layers of the networks in bf16/fp16 NHWC (3 channels), which cuDNN
// pads and runs at a small fraction of the tensor cores' rate (ResNet-18's
// conv1 forward 770 us at batch 128, AlexNet's features.0 660 us, H200,
// 2026-11-27).
//
//   A (rows, Kp):  row (n, oy, ox), column (r, s, c) of the receptive field,
//                  zero past R·S·C (Kp: R·S·C rounded up to 8, so rows stay
//                  16-byte aligned for cuBLASLt) and outside the image
//   forward        out (rows, K) = A · Wpᵀ (ReLU in cuBLASLt's epilogue),
//                  Wp (K, Kp) the weights (k, r, s, c) padded the same way;
//                  a bias rides in the padding where two columns are free:
//                  A's are ones, Wp's the bias split into two 16-bit parts,
//                  so the fp32 accumulator adds the fp32 bias to within
//                  2^-16 (cuBLASLt's bias epilogue with a 16-bit output takes
//                  only a 16-bit bias: 2^-8 in bf16); else the epilogue's
//                  bias
//   weight grad    dWp (K, Kp) = dpreᵀ · A per chunk of images, fp32, the
//                  chunks' results summed into dW (K, R·S·C); db by the
//                  channel sums of the cuDNN path
// A is built a chunk of images at a time, at most kIm2colBytes.
#pragma once
#include <cstdint>

#include "roofline/engine/ops.hpp"
#include "src/engine/cuda/cuda_state.hpp"

namespace roofline::engine::cuda_ops {

// Whether conv2d's forward and weight gradient take this path.
bool im2col_applies(const ops::Conv2dShape& s);
// Whether a bias fits in two padding columns (R·S·C rounded up to 8 leaves two
// free): then the forward carries it there rather than in cuBLASLt's epilogue.
bool im2col_bias_fits(const ops::Conv2dShape& s);
void im2col_conv_forward(const CudaState* st, const ops::Conv2dShape& s, void* out, const void* in, const void* w,
                         const float* b);
void im2col_conv_backward_weight(const CudaState* st, const ops::Conv2dShape& s, float* dw, float* db,
                                 const void* dpre, const void* in);

// Kernels (im2col.cu). x (n, h, w, c) NHWC in dtype t; a (rows, kp) for the
// images [n0, n0 + images), columns [rsc, rsc + ones) ones, the rest past rsc zeros.
void launch_im2col_nhwc(const CudaState* st, DType t, const ops::Conv2dShape& s, std::int64_t n0,
                        std::int64_t images, std::int64_t kp, int ones, const void* x, void* a);
// wp (k, kp) from w (k, rsc) in dtype t; past rsc zeros, or with a bias (k,
// fp32) its two 16-bit parts in columns rsc and rsc + 1.
void launch_pad_rows(const CudaState* st, DType t, std::int64_t k, std::int64_t rsc, std::int64_t kp, const void* w,
                     const float* bias, void* wp);
// dw (k, rsc) = Σ over `parts` slices (k, kp) of partial, fp32, in slice order.
void launch_sum_rows(const CudaState* st, std::int64_t parts, std::int64_t k, std::int64_t rsc, std::int64_t kp,
                     const float* partial, float* dw);

}  // namespace roofline::engine::cuda_ops

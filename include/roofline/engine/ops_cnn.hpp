// The ops of the big CNNs (ResNet-18, AlexNet) beside convolution and Linear:
// BatchNorm2d, AdaptiveAvgPool2d, the residual add and Dropout (MaxPool2d with
// padding and ReLU are in ops.hpp). Conventions as in ops.hpp, and:
//  - Activations (inputs, outputs and their gradients) are in the shape's
//    dtype, F32 on every backend, BF16 or F16 on the GPU (the CPU backends
//    throw Error(Unsupported)), passed as void*; images in the shape's format
//    (NCHW, or NHWC: channels last). The GPU computes in fp32.
//  - BatchNorm's parameters (gamma, beta), statistics (running and saved) and
//    parameter gradients are fp32 (float*), whatever the activations' dtype.
//  - Backward functions overwrite their outputs.
#pragma once
#include <cstdint>

#include "roofline/engine/context.hpp"
#include "roofline/engine/cost.hpp"
#include "roofline/engine/ops.hpp"

namespace roofline::engine::ops {

// ---- BatchNorm2d, with an optional residual add and ReLU after it -------------
struct BatchNormShape {  // BatchNorm2d over (n, c, h, w) in `format`, statistics per channel
  std::int64_t n = 0, c = 0, h = 0, w = 0;
  MemoryFormat format = MemoryFormat::NCHW;
  DType dtype = DType::F32;
  float eps = 1e-5f, momentum = 0.1f;               // as torch.nn.BatchNorm2d
  Activation act = Activation::None;                // fused ReLU after the (optional) residual add
  bool residual = false;                            // out = act(bn(in) + residual)
  std::int64_t count() const { return n * h * w; }  // values per channel
  bool valid() const;                               // positive sizes, eps > 0, momentum in [0, 1], a float dtype
  // forward: the training forward (statistics, normalisation); input_grad: the
  // whole backward, dgamma and dbeta included (they are the sums din needs);
  // weight_grad: none. Bytes: each activation read once, each output written once.
  PassCosts cost() const;
  OpCost eval_cost() const;  // the inference forward (running statistics)
};
// Training forward. mean, var: the batch's per channel (biased var to
// normalise); out (n, c, h, w) = act(gamma·(in − mean)/sqrt(var + eps) + beta
// [+ residual (n, c, h, w)]); running_mean/var (c) = (1 − momentum)·running +
// momentum·batch, running_var taking the unbiased variance (as PyTorch);
// save_mean (c) = mean, save_invstd (c) = 1/sqrt(var + eps) for the backward.
// residual is read when s.residual (else null); out may alias residual, not in.
// Needs count() > 1, as PyTorch.
void batchnorm_forward_train(Context& ctx, const BatchNormShape& s, void* out, const void* in, const void* residual,
                             const float* gamma, const float* beta, float* running_mean, float* running_var,
                             float* save_mean, float* save_invstd);
// Inference forward: the same normalisation with running_mean and running_var (c);
// out may alias residual, or in.
void batchnorm_forward_eval(Context& ctx, const BatchNormShape& s, void* out, const void* in, const void* residual,
                            const float* gamma, const float* beta, const float* running_mean, const float* running_var);
// Backward of the training forward. dout (n, c, h, w) is turned IN PLACE into
// dpre = dout ⊙ act'(out) (with act None it stays as it is): this is also the
// residual's gradient. Then from dpre, in, gamma, save_mean and save_invstd:
// dbeta (c) = Σ dpre, dgamma (c) = Σ dpre·x̂ with x̂ = (in − mean)·invstd, and
// din (n, c, h, w) = gamma·invstd·(dpre − dbeta/count − x̂·dgamma/count).
// din may not alias dout.
void batchnorm_backward(Context& ctx, const BatchNormShape& s, void* din, float* dgamma, float* dbeta, void* dout,
                        const void* out, const void* in, const float* gamma, const float* save_mean,
                        const float* save_invstd);

// ---- AdaptiveAvgPool2d -------------------------------------------------------------
struct AvgPoolShape {
  std::int64_t n = 0, c = 0, h = 0, w = 0, oh = 1, ow = 1;
  MemoryFormat format = MemoryFormat::NCHW;
  DType dtype = DType::F32;
  bool valid() const;
  PassCosts cost() const;
};
// torch.nn.AdaptiveAvgPool2d bins: rows [floor(i·h/oh), ceil((i+1)·h/oh)), the same
// for columns; each output the mean of its bin.
// out (n, c, oh, ow) from in (n, c, h, w), both in s.format
void adaptive_avgpool2d_forward(Context& ctx, const AvgPoolShape& s, void* out, const void* in);
// din (n, c, h, w): each element gets dout/area of every bin it lies in
void adaptive_avgpool2d_backward(Context& ctx, const AvgPoolShape& s, void* din, const void* dout);

// ---- Residual add ------------------------------------------------------------------
// out (n) = act(a + b), in s.dtype; out may alias a or b. Its backward is the
// activation's (activation_backward on out): a and b both get that gradient.
void add_forward(Context& ctx, const EltwiseShape& s, void* out, const void* a, const void* b);
// The add's cost (EltwiseShape::cost() is the activation's): forward n adds [+ n
// ReLU], 3n elements; input_grad the ReLU mask when act is ReLU.
PassCosts add_cost(const EltwiseShape& s);

// ---- Dropout (seeded, counter-based) -----------------------------------------------
struct DropoutShape {
  std::int64_t n = 0;
  float p = 0.5f;  // probability of dropping an element, in [0, 1]
  DType dtype = DType::F32;
  bool valid() const;
  PassCosts cost() const;
};
// Element i is kept with probability 1 − p, decided by a counter-based hash of
// (seed, step, i) (kernels/dropout_hash.cuh) that every backend computes bit for
// bit alike; out (n) = kept ? in/(1 − p) : 0. `step` points at the step index
// (device memory on CUDA, host memory on the CPU backends; null = 0), so a
// captured graph draws a new mask each replay. out may alias in.
void dropout_forward(Context& ctx, const DropoutShape& s, void* out, const void* in, std::uint64_t seed,
                     const std::int32_t* step);
// din (n) = kept ? dout/(1 − p) : 0, the same mask; din may alias dout.
void dropout_backward(Context& ctx, const DropoutShape& s, void* din, const void* dout, std::uint64_t seed,
                      const std::int32_t* step);

}  // namespace roofline::engine::ops

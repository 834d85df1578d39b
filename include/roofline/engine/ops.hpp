// The engine's ops, llm.c style: a forward/backward function pair per op over
// raw buffers (fp32, or the shape's dtype where it has one), a shape struct that says how big everything is and what
// each pass costs (cost.hpp), and one dispatcher per function that sends the
// call to the context's backend (CpuRef, Cpu or Cuda). Pointers live on the
// context's device. Every buffer is contiguous; shapes are given in comments.
//
// Conventions:
//  - Backward functions overwrite their gradient outputs (no accumulation):
//    in a Sequential model each parameter is used once, and overwriting lets
//    tests poison outputs and lets no step spend a kernel on zeroing.
//  - Gradient outputs may not alias inputs unless the function says so.
//  - Labels are int32 class indices in [0, cols).
#pragma once
#include <cstdint>
#include <functional>

#include "roofline/engine/context.hpp"
#include "roofline/engine/cost.hpp"

namespace roofline::engine::ops {

enum class Activation { None, ReLU };
const char* to_string(Activation a);

// ---- Linear: out = act(in · wᵀ + b) --------------------------------------
// Activations (in, out and their gradients) and the weights that forward and
// the input gradient read are in `dtype` (F32, BF16 or F16: the weights a
// low-precision copy kept by the optimizer); the bias and the weight and bias
// gradients are always fp32. The CPU backends take F32 only (Error
// Unsupported otherwise); CUDA all three, accumulating in fp32. `tf32`: F32
// data may run on TF32 tensor cores (false: true fp32, never TF32).
struct LinearShape {
  std::int64_t n = 0;    // rows (batch)
  std::int64_t in = 0;   // input features
  std::int64_t out = 0;  // output features
  bool bias = true;
  Activation act = Activation::None;
  DType dtype = DType::F32;
  bool tf32 = false;
  // Inference on the GPU: the forward's bias is kept in dtype beside the
  // weights' low-precision copy (cuBLASLt's epilogue takes it as is; an fp32
  // bias with 16-bit output is converted by a kernel before each GEMM where no
  // algorithm takes it: 49 of them a BERT-base forward). F32 elsewhere.
  DType bias_dtype = DType::F32;
  PassCosts cost() const;  // bytes: activations and weights at dtype's width, bias and gradients fp32
};
// out (n, out), in (n, in), w (out, in): dtype; b (out) in s.bias_dtype or null
void linear_forward(Context& ctx, const LinearShape& s, void* out, const void* in, const void* w, const void* b);
// The same forward over the weights stored transposed, wt (in, out) = wᵀ, for
// inference (Network::prepare_inference keeps such a copy while the parameters
// do not change): out (n, out) = act(in · wt + b), F32 only. On the fast CPU backend
// each output is then one chain of multiply-adds over the inputs in order,
// with a row's inputs broadcast against rows of wt, where linear_forward's
// kernel takes dot products along rows of w; values agree to fp32 rounding,
// not bit for bit.
void linear_forward_wt(Context& ctx, const LinearShape& s, float* out, const float* in, const float* wt,
                       const float* b);
// Whether the backend's Linear forward is faster over transposed weights
// (linear_forward_wt) where they stay fixed between calls: the fast CPU backend
// (with AVX-512 its dot-product kernel computes 4 × 6 outputs a block, reading
// rows of w; the broadcast kernel over wt 8 × 48, the row split's 8 rows a
// thread in one block).
bool linear_prefers_wt(const Context& ctx);
// din (n, in) = dpre (n, out) · w (out, in), all in dtype. With act == ReLU,
// call activation_backward on the layer's output first (dpre = dout ⊙ [out > 0]).
void linear_backward_input(Context& ctx, const LinearShape& s, void* din, const void* dpre, const void* w);
// dw (out, in) fp32 = dpreᵀ · in; db (out) fp32 = Σ_rows dpre (db may be null);
// dpre (n, out) and in (n, in) in dtype.
void linear_backward_weight(Context& ctx, const LinearShape& s, float* dw, float* db, const void* dpre,
                            const void* in);

// Inference only: probs (n, l2.out) = softmax(l2(l1(in))) — a network's last
// two Linear layers (activations None or ReLU) and the softmax in one kernel,
// the hidden activations never written. True where the backend has that
// kernel (the GPU, fp32 layers, for heads of at most 2^23 multiply-adds and 1024 inputs
// (a multiple of 4) in the first layer, 32 classes, hidden · classes ≤ 3968:
// the second layer's weights in shared memory); false,
// with nothing done, elsewhere: run the two layers and softmax_forward.
bool linear_softmax_head_forward(Context& ctx, const LinearShape& l1, const LinearShape& l2, float* probs,
                                 const float* in, const float* w1, const float* b1, const float* w2, const float* b2);

// Runs f(r0, r1) over row ranges that cover [0, n): for work with no cross-row
// sums (a forward, the activation masks and input gradients of a backward). On
// the fast CPU backend the ranges run in parallel, one per thread (up to four
// per thread where a row's forward costs `row_flops` ≥ 1 MFLOP: ranges a slower
// thread has not started are taken by the others), and every op f calls runs
// on its calling thread alone, so one parallel region serves the whole network
// instead of one (and its barrier) per op. Elsewhere, or with fewer than 4 rows
// per thread: f(0, n).
void for_row_chunks(Context& ctx, std::int64_t n, const std::function<void(std::int64_t, std::int64_t)>& f,
                    double row_flops = 0);
// Whether a training step's Linear forward with `in` input features at the
// start of a network should run inside the row split (each thread its own rows)
// or before it, split by columns over the whole batch. On the fast CPU backend
// the weights change every step, so a thread with its few rows of simple-mlp's
// 784 -> 256 layer reads all 800 KB of them freshly updated from other cores'
// caches, where a column split reads 1/16 (16-core GPU host, 2026-11-25: step
// 446 -> 347 µs at batch 128, 362 -> 299 at 64). Inference keeps every layer in
// the row split (there the weights stay in each core's L2: no gain measured).
bool linear_joins_row_split(Context& ctx, std::int64_t in);

// ---- Conv2d (cross-correlation, as PyTorch), zero padding -----------------
// In `format` (NCHW or NHWC, PyTorch's channels_last): input (n, c, h, w),
// output (n, k, oh, ow) stored in that order, weights (k, c/groups, r, s) for
// NCHW and (k, r, s, c/groups) for NHWC. Groups as torch.nn.Conv2d: output
// channel o sees input channels [g·c/G, (g+1)·c/G) with g = o / (k/G).
// Activations (in, out, their gradients) and the weights that forward and the
// input gradient read are in `dtype` (F32, BF16, F16); the bias and the weight
// and bias gradients are fp32. Backends: CpuRef every format and group count in
// F32; the fast CPU path every format and group count in F32 (our tiles for
// NCHW with one group, oneDNN for the rest and the large layers); CUDA
// everything (cuDNN's graph API; our own kernels for the small models' fp32
// NCHW layers). `tf32` as for Linear.
struct Conv2dShape {
  std::int64_t n = 0, c = 0, h = 0, w = 0;  // input (n, c, h, w)
  std::int64_t k = 0, r = 0, s = 0;         // output channels, kernel rows and columns
  std::int64_t stride = 1, pad = 0;
  bool bias = true;
  Activation act = Activation::None;
  std::int64_t groups = 1;
  MemoryFormat format = MemoryFormat::NCHW;
  DType dtype = DType::F32;
  bool tf32 = false;
  std::int64_t oh() const { return (h + 2 * pad - r) / stride + 1; }
  std::int64_t ow() const { return (w + 2 * pad - s) / stride + 1; }
  std::int64_t cg() const { return groups > 0 ? c / groups : 0; }  // input channels per group
  // Positive sizes, the kernel fits the padded input, groups divide c and k,
  // dtype F32, BF16 or F16.
  bool valid() const;
  PassCosts cost() const;  // bytes: activations and weights at dtype's width, bias and gradients fp32
};
// out (n, k, oh, ow), in (n, c, h, w), w (weights): dtype, in `format`; b (k) fp32 or null
void conv2d_forward(Context& ctx, const Conv2dShape& s, void* out, const void* in, const void* w, const float* b);
// din (n, c, h, w) from dpre (n, k, oh, ow) and w, all in dtype and `format`
void conv2d_backward_input(Context& ctx, const Conv2dShape& s, void* din, const void* dpre, const void* w);
// dw (weights' shape) fp32, db (k) fp32 or null, from dpre (n, k, oh, ow) and in (n, c, h, w) in dtype
void conv2d_backward_weight(Context& ctx, const Conv2dShape& s, float* dw, float* db, const void* dpre,
                            const void* in);

// ---- MaxPool2d (floor mode; the first maximum wins, NaN wins, as PyTorch) ---
// Zero or more padding rows and columns each side that never win (PyTorch pads
// with −inf): every window holds at least one element when pad ≤ kernel/2.
// Activations (in, out, din, dout) are in `format` and `dtype` (F32 on every
// backend; BF16 and F16 on the GPU only: the CPU backends throw Unsupported).
struct Pool2dShape {
  std::int64_t n = 0, c = 0, h = 0, w = 0;
  std::int64_t kernel = 2, stride = 2;
  std::int64_t pad = 0;
  MemoryFormat format = MemoryFormat::NCHW;
  DType dtype = DType::F32;
  std::int64_t oh() const { return (h + 2 * pad - kernel) / stride + 1; }
  std::int64_t ow() const { return (w + 2 * pad - kernel) / stride + 1; }
  bool valid() const;  // positive sizes, 0 ≤ pad ≤ kernel/2, the window fits the padded input, a float dtype
  PassCosts cost() const;
};
// out (n, c, oh, ow) in s.format; argmax (n, c, oh, ow) in s.format: index of
// the maximum in its (h, w) plane (iy·w + ix, padding excluded), or null
// (inference, no backward to come): not written
void maxpool2d_forward(Context& ctx, const Pool2dShape& s, void* out, std::int32_t* argmax, const void* in);
// Inference only: out (n, k, p.oh, p.ow) = maxpool(act(conv(in))) in one
// kernel, for a max pool `p` over the convolution's output whose windows
// tile it (kernel = stride = 2 or 4, no padding, NCHW fp32, groups 1) — the
// pre-pool output is never written. True where the backend has that kernel
// (the GPU's register-tiled convolution: stride 1, kernels 3/5/7 wide); false,
// with nothing done, elsewhere: then run conv2d_forward and maxpool2d_forward.
bool conv2d_maxpool_forward(Context& ctx, const Conv2dShape& s, const Pool2dShape& p, float* out, const float* in,
                            const float* w, const float* b);
// din (n, c, h, w) = scatter of dout (n, c, oh, ow) to the argmax positions
// (overlapping windows add up); all in s.format and s.dtype
void maxpool2d_backward(Context& ctx, const Pool2dShape& s, void* din, const void* dout, const std::int32_t* argmax);

// ---- Element-wise activation ------------------------------------------------
struct EltwiseShape {
  std::int64_t n = 0;
  Activation act = Activation::ReLU;
  DType dtype = DType::F32;  // of every buffer: F32, or BF16/F16 on the GPU
  PassCosts cost() const;
};
// out (n) = act(in); out may alias in
void activation_forward(Context& ctx, const EltwiseShape& s, void* out, const void* in);
// din (n) = dout ⊙ act'(from out); din may alias dout
void activation_backward(Context& ctx, const EltwiseShape& s, void* din, const void* dout, const void* out);

// ---- Fused activation mask and bias gradient (Linear layers' backward) -------
struct BiasGradShape {
  std::int64_t rows = 0, cols = 0;
  Activation act = Activation::ReLU;
  PassCosts cost() const;  // in input_grad: the mask (rows·cols) and the column sums (rows·cols)
};
// dpre (rows, cols) = dout ⊙ act'(out) and db (cols) = Σ_rows dpre, in one pass
// over dout (one kernel instead of two on the GPU). dpre may alias dout.
void activation_bias_backward(Context& ctx, const BiasGradShape& s, float* dpre, float* db, const float* dout,
                              const float* out);

// ---- Row-wise softmax family over (rows, cols) -------------------------------
struct RowsShape {
  std::int64_t rows = 0, cols = 0;
  PassCosts softmax_cost() const;
  PassCosts log_softmax_cost() const;
  PassCosts nll_cost() const;
  PassCosts cross_entropy_cost() const;  // fused log-softmax + NLL, forward and gradient
};
void softmax_forward(Context& ctx, const RowsShape& s, float* out, const float* in);
// din = out ⊙ (dout − Σ_j dout_j out_j)
void softmax_backward(Context& ctx, const RowsShape& s, float* din, const float* dout, const float* out);
void log_softmax_forward(Context& ctx, const RowsShape& s, float* out, const float* in);
// din = dout − exp(out) Σ_j dout_j
void log_softmax_backward(Context& ctx, const RowsShape& s, float* din, const float* dout, const float* out);
// loss (1) = −(1/rows) Σ_i logp[i, label_i]   (mean reduction, as PyTorch)
void nll_loss_forward(Context& ctx, const RowsShape& s, float* loss, const float* logp, const std::int32_t* labels);
// dlogp (rows, cols) = −dloss/rows at [i, label_i], 0 elsewhere; dloss is a scalar on the host
void nll_loss_backward(Context& ctx, const RowsShape& s, float* dlogp, const std::int32_t* labels, float dloss);

// Statistics a training loop keeps on the device so that no step has to wait
// for the host. Every pointer is on the context's device and may be null.
struct LossStats {
  double* loss_sum = nullptr;              // (1) += Σ_rows per-row loss
  std::int32_t* correct = nullptr;         // (1) += rows whose argmax is the label
  float* step_loss = nullptr;              // (steps) [*step] = this batch's mean loss
  std::int32_t* first_bad_step = nullptr;  // (1) = min(itself, *step) if the batch loss is not finite
  const std::int32_t* step = nullptr;      // (1) this step's index (0 when null)
};
// Fused log-softmax + NLL: the batch's loss into `stats`, and (when dlogits is
// not null) dlogits (rows, cols) = grad_scale · (softmax(logits) − onehot(label)).
// grad_scale = 1/rows gives the gradient of the mean loss.
void cross_entropy(Context& ctx, const RowsShape& s, float* dlogits, const float* logits, const std::int32_t* labels,
                   float grad_scale, const LossStats& stats);

// ---- Optimiser: torch.optim.SGD (dampening 0) ---------------------------------
// (AdamW, the low-precision parameter copies, loss scaling and casts:
// roofline/engine/ops_optim.hpp.)
struct SgdConfig {
  float lr = 0.01f;
  float momentum = 0.9f;
  float weight_decay = 0.0f;
  bool nesterov = false;  // needs momentum, as torch.optim.SGD
};
struct SgdShape {
  std::int64_t n = 0;  // parameters
  bool momentum = true;
  OpCost cost() const;
};
// g' = g + wd·p;  buf = momentum·buf + g';  step = nesterov ? g' + momentum·buf : buf;
// p −= lr·step  (buf starts at 0, which equals torch's "buf = g' on the first
// step" when dampening is 0; without momentum, step = g').
// param, grad, buf (n). When `advance_step` is not null, *advance_step += 1
// after the update (the training loop's device-side step counter). The
// overload with a low-precision copy of the parameters and gradient
// unscaling is in ops_optim.hpp.
void sgd_update(Context& ctx, const SgdShape& s, float* param, const float* grad, float* buf, const SgdConfig& cfg,
                std::int32_t* advance_step = nullptr);

// A Linear layer's parameters beside their gradients and SGD momentum (the
// bias ones null when the layer has none; the momentum ones null without momentum).
struct LinearSgdBuffers {
  float* w = nullptr;   // (out, in)
  float* b = nullptr;   // (out)
  float* dw = nullptr;  // (out, in), written
  float* db = nullptr;  // (out), written
  float* mw = nullptr;  // (out, in)
  float* mb = nullptr;  // (out)
};
// linear_backward_weight, then sgd_update on the layer's weights and bias: the
// same values bit for bit. On the fast CPU backend in one pass, each thread
// updating the weight rows whose gradient it just computed, the rows it also
// owns in the column-split forward (linear_forward outside a row split), so a
// layer's weights, gradients and momentum stay in one core's caches from step
// to step; elsewhere the two ops one after the other.
void linear_backward_weight_sgd(Context& ctx, const LinearShape& s, const LinearSgdBuffers& p, const float* dpre,
                                const float* in, const SgdConfig& cfg);
// Whether linear_backward_weight_sgd is one pass on this backend (a training step
// then updates Linear layers as their gradients are computed).
bool fuses_weight_grad_sgd(const Context& ctx);

// ---- Data: a batch from a uint8 image set --------------------------------------
struct BatchShape {
  std::int64_t batch = 0;             // rows of this batch
  std::int64_t in_h = 0, in_w = 0;    // stored images (n, in_h, in_w), single channel
  std::int64_t out_h = 0, out_w = 0;  // model input; bilinear resize (half-pixel centres) when different
  float mean = 0, inv_std = 1;        // x = (pixel/255 − mean) · inv_std
  std::int64_t stride = 0;            // samples per step (the full batch size)
  OpCost cost() const;
};
// x (batch, 1, out_h, out_w), y (batch): samples order[first + step·stride + i]
// with step = *step (0 when null) — on the device, so a captured graph can replay.
void gather_batch(Context& ctx, const BatchShape& s, float* x, std::int32_t* y, const std::uint8_t* images,
                  const std::uint8_t* labels, const std::int32_t* order, std::int64_t first, const std::int32_t* step);

}  // namespace roofline::engine::ops

// Layers of a Sequential model (model.hpp builds them from the model's
// LayerGraph, whose parameters' initialisation is the one home). A layer holds its configuration only; the
// Network (network.hpp) owns every buffer (parameters, gradients,
// activations) and hands each layer views of them, llm.c style, so a whole
// training step touches no allocator and can be captured as a CUDA graph.
// Shapes here are per sample (no batch dimension): (C, H, W) or (F).
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "roofline/engine/cost.hpp"
#include "roofline/engine/ops.hpp"
#include "roofline/engine/rng.hpp"

namespace roofline::engine {

// What a layer is, as it was built: for code that specialises a whole model
// (the GPU's fused training kernels match models by their layers' specs).
struct LayerSpec {
  enum class Kind { Linear, Conv2d, MaxPool2d, Activation, Flatten };
  Kind kind = Kind::Flatten;
  ops::Activation act = ops::Activation::None;  // fused (Linear, Conv2d) or the layer itself (Activation)
  bool bias = false;
  std::int64_t in = 0, out = 0;                                // Linear: features
  std::int64_t c = 0, k = 0, kernel = 0, stride = 1, pad = 0;  // Conv2d (c → k channels); MaxPool2d (kernel, stride)
};

class Layer {
 public:
  struct Buffers {
    const float* in = nullptr;        // (batch, in_shape)
    float* out = nullptr;             // (batch, out_shape)
    float* dout = nullptr;            // (batch, out_shape); a layer may overwrite it in backward
    float* din = nullptr;             // (batch, in_shape); null for the first layer (not needed)
    const float* params = nullptr;    // (param_count)
    float* grads = nullptr;           // (param_count)
    std::int32_t* scratch = nullptr;  // (scratch_ints) e.g. max-pool argmax
    // prepare_inference's copy of the parameters (inference_param_count), for a
    // forward outside training; null: read `params`.
    const float* infer_params = nullptr;
  };

  explicit Layer(std::string name) : name_(std::move(name)) {}
  virtual ~Layer() = default;
  const std::string& name() const { return name_; }
  virtual std::string op() const = 0;  // "linear+relu", "conv2d", "maxpool2d", "flatten", "relu"
  virtual LayerSpec spec() const = 0;
  virtual Shape output_shape(const Shape& in) const = 0;      // throws Error(Usage) when `in` does not fit
  virtual bool is_view() const { return false; }              // output aliases the input (Flatten)
  virtual std::int64_t param_count() const { return 0; }      // floats in the parameter block, padding included
  virtual std::int64_t learnable_count() const { return 0; }  // the parameters themselves
  virtual std::int64_t scratch_ints(std::int64_t /*batch*/, const Shape& /*in*/) const { return 0; }
  virtual PassCosts cost(std::int64_t batch, const Shape& in) const = 0;
  virtual void forward(Context& ctx, std::int64_t batch, const Shape& in, const Buffers& b) const = 0;
  // The input-gradient pass: turns b.dout into the gradient before a fused
  // activation (in place) and fills b.din when it is not null. Runs first.
  virtual void backward_input(Context& ctx, std::int64_t batch, const Shape& in, const Buffers& b) const = 0;
  // The weight-gradient pass: fills b.grads from the (masked) b.dout and b.in.
  virtual void backward_weight(Context& /*ctx*/, std::int64_t /*batch*/, const Shape& /*in*/,
                               const Buffers& /*b*/) const {}
  // The same backward split by what crosses rows, for a caller that runs every
  // layer's row part on a slice of the rows (a thread per slice) before any
  // parameter part: backward_rows touches rows of b.dout and b.din only (the
  // activation mask, the input gradient); backward_params then fills every
  // gradient in b.grads from all rows. By default the input-gradient pass has no
  // cross-row work and these are backward_input and backward_weight.
  virtual void backward_rows(Context& ctx, std::int64_t rows, const Shape& in, const Buffers& b) const {
    backward_input(ctx, rows, in, b);
  }
  virtual void backward_params(Context& ctx, std::int64_t batch, const Shape& in, const Buffers& b) const {
    backward_weight(ctx, batch, in, b);
  }
  // backward_params, then the SGD update of this layer's `params` and `momentum`
  // (its blocks of the network's buffers) in one pass where the layer and the
  // backend have one (ops::fuses_weight_grad_sgd): true, with b.grads written and
  // the parameters updated; false, with nothing done, elsewhere.
  virtual bool backward_params_sgd(Context& /*ctx*/, std::int64_t /*batch*/, const Shape& /*in*/, const Buffers& /*b*/,
                                   float* /*params*/, float* /*momentum*/, const ops::SgdConfig& /*cfg*/) const {
    return false;
  }
  // Inference only: this layer and the max pool `pool` after it in one kernel
  // where the backend has one (b.out is then the pool's output; this layer's
  // own output is not written); false, with nothing done, elsewhere.
  virtual bool forward_pooled(Context& /*ctx*/, std::int64_t /*batch*/, const Shape& /*in*/, const LayerSpec& /*pool*/,
                              const Buffers& /*b*/) const {
    return false;
  }
  // Inference copies: the floats this layer's forward wants on `ctx` beside its
  // parameters when they stay fixed from call to call (0: none; a Linear
  // layer's weights transposed where ops::linear_prefers_wt), and filling them
  // from its parameter block. Asked on host backends only (host memory).
  virtual std::int64_t inference_param_count(const Context& /*ctx*/) const { return 0; }
  virtual void prepare_inference(const Context& /*ctx*/, const float* /*params*/, float* /*out*/) const {}
  // Where the bias starts in this layer's parameter block (floats); −1: none.
  virtual std::int64_t bias_offset() const { return -1; }

  // Parameter tensors start on 64-float (256-byte) boundaries, the alignment
  // cuBLASLt assumes by default; the padding stays zero.
  static std::int64_t align(std::int64_t n) { return (n + 63) / 64 * 64; }

 private:
  std::string name_;
};

// Parameters: weight (out, in) then bias (out); init kaiming_uniform_(a=√5),
// i.e. U(±1/√in), bias U(±1/√in), as torch.nn.Linear.
std::unique_ptr<Layer> make_linear(std::string name, std::int64_t in, std::int64_t out,
                                   ops::Activation act = ops::Activation::None, bool bias = true);
// Parameters: weight (k, c, r, s) then bias (k); init as torch.nn.Conv2d (fan_in = c·r·s).
std::unique_ptr<Layer> make_conv2d(std::string name, std::int64_t c, std::int64_t k, std::int64_t kernel,
                                   std::int64_t stride = 1, std::int64_t pad = 0,
                                   ops::Activation act = ops::Activation::None, bool bias = true);
std::unique_ptr<Layer> make_maxpool2d(std::string name, std::int64_t kernel, std::int64_t stride);
std::unique_ptr<Layer> make_activation(std::string name, ops::Activation act);
std::unique_ptr<Layer> make_flatten(std::string name);

}  // namespace roofline::engine

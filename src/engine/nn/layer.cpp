// The layers: each turns per-sample shapes into op shapes and calls the ops.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "roofline/core/error.hpp"
#include "roofline/engine/layer.hpp"

namespace roofline::engine {

using ops::Activation;

namespace {

[[noreturn]] void bad_input(const std::string& layer, const std::string& what, const Shape& in) {
  throw_usage(fmt::format("layer {} cannot take input {}: {}", layer, to_string(in), what),
              "check the model's layer shapes");
}

std::string with_act(const char* op, Activation a) {
  return a == Activation::ReLU ? std::string(op) + "+relu" : std::string(op);
}

class Linear final : public Layer {
 public:
  Linear(std::string name, std::int64_t in, std::int64_t out, Activation act, bool bias)
      : Layer(std::move(name)), in_(in), out_(out), act_(act), bias_(bias) {}
  std::string op() const override { return with_act("linear", act_); }
  LayerSpec spec() const override {
    LayerSpec s;
    s.kind = LayerSpec::Kind::Linear;
    s.act = act_;
    s.bias = bias_;
    s.in = in_;
    s.out = out_;
    return s;
  }
  Shape output_shape(const Shape& in) const override {
    if (numel(in) != in_) bad_input(name(), fmt::format("expects {} features", in_), in);
    return {out_};
  }
  std::int64_t param_count() const override { return align(in_ * out_) + (bias_ ? align(out_) : 0); }
  std::int64_t learnable_count() const override { return in_ * out_ + (bias_ ? out_ : 0); }
  std::int64_t bias_offset() const override { return bias_ ? align(in_ * out_) : -1; }
  PassCosts cost(std::int64_t batch, const Shape&) const override { return shape(batch).cost(); }
  void forward(Context& ctx, std::int64_t batch, const Shape&, const Buffers& b) const override {
    const float* bias = bias_ ? b.params + bias_offset() : nullptr;
    if (b.infer_params)
      ops::linear_forward_wt(ctx, shape(batch), b.out, b.in, b.infer_params, bias);
    else
      ops::linear_forward(ctx, shape(batch), b.out, b.in, b.params, bias);
  }
  // The weights transposed, wt (in, out), where the backend's forward prefers them.
  std::int64_t inference_param_count(const Context& ctx) const override {
    return ops::linear_prefers_wt(ctx) ? in_ * out_ : 0;
  }
  void prepare_inference(const Context& ctx, const float* params, float* wt) const override {
    ROOFLINE_ASSERT(!ctx.is_cuda(), "inference copies are made in host memory");
    // In 16 × 16 blocks: whole cache lines of w read and of wt written per block
    // (with the copy's pages touched at construction, 0.16-0.43 ms for simple-mlp on the development
    // machine, against 0.8-2.5 ms row by row with the first touch here).
    constexpr std::int64_t kB = 16;
    for (std::int64_t o0 = 0; o0 < out_; o0 += kB)
      for (std::int64_t k0 = 0; k0 < in_; k0 += kB)
        for (std::int64_t k = k0; k < std::min(in_, k0 + kB); ++k)
          for (std::int64_t o = o0; o < std::min(out_, o0 + kB); ++o) wt[k * out_ + o] = params[o * in_ + k];
  }
  void backward_input(Context& ctx, std::int64_t batch, const Shape&, const Buffers& b) const override {
    // With a bias and an activation, the mask and the bias gradient share one
    // pass over the gradient (one kernel instead of two on the GPU).
    if (act_ != Activation::None && bias_)
      ops::activation_bias_backward(ctx, {batch, out_, act_}, b.dout, b.grads + bias_offset(), b.dout, b.out);
    else if (act_ != Activation::None)
      ops::activation_backward(ctx, {batch * out_, act_}, b.dout, b.dout, b.out);
    if (b.din) ops::linear_backward_input(ctx, shape(batch), b.din, b.dout, b.params);
  }
  void backward_weight(Context& ctx, std::int64_t batch, const Shape&, const Buffers& b) const override {
    const bool db_done = act_ != Activation::None && bias_;  // by backward_input
    ops::linear_backward_weight(ctx, shape(batch), b.grads, bias_ && !db_done ? b.grads + bias_offset() : nullptr,
                                b.dout, b.in);
  }
  // Split: the bias gradient (a sum over rows) moves to the parameter part.
  void backward_rows(Context& ctx, std::int64_t rows, const Shape&, const Buffers& b) const override {
    if (act_ != Activation::None) ops::activation_backward(ctx, {rows * out_, act_}, b.dout, b.dout, b.out);
    if (b.din) ops::linear_backward_input(ctx, shape(rows), b.din, b.dout, b.params);
  }
  void backward_params(Context& ctx, std::int64_t batch, const Shape&, const Buffers& b) const override {
    ops::linear_backward_weight(ctx, shape(batch), b.grads, bias_ ? b.grads + bias_offset() : nullptr, b.dout, b.in);
  }
  bool backward_params_sgd(Context& ctx, std::int64_t batch, const Shape&, const Buffers& b, float* params,
                           float* momentum, const ops::SgdConfig& cfg) const override {
    if (!ops::fuses_weight_grad_sgd(ctx)) return false;
    ops::LinearSgdBuffers p;
    p.w = params;
    p.dw = b.grads;
    p.mw = momentum;
    if (bias_) {
      p.b = params + bias_offset();
      p.db = b.grads + bias_offset();
      p.mb = momentum + bias_offset();
    }
    ops::linear_backward_weight_sgd(ctx, shape(batch), p, b.dout, b.in, cfg);
    return true;
  }

 private:
  ops::LinearShape shape(std::int64_t batch) const { return {batch, in_, out_, bias_, act_}; }
  std::int64_t in_, out_;
  Activation act_;
  bool bias_;
};

class Conv2d final : public Layer {
 public:
  Conv2d(std::string name, std::int64_t c, std::int64_t k, std::int64_t kernel, std::int64_t stride, std::int64_t pad,
         Activation act, bool bias)
      : Layer(std::move(name)), c_(c), k_(k), kernel_(kernel), stride_(stride), pad_(pad), act_(act), bias_(bias) {}
  std::string op() const override { return with_act("conv2d", act_); }
  LayerSpec spec() const override {
    LayerSpec s;
    s.kind = LayerSpec::Kind::Conv2d;
    s.act = act_;
    s.bias = bias_;
    s.c = c_;
    s.k = k_;
    s.kernel = kernel_;
    s.stride = stride_;
    s.pad = pad_;
    return s;
  }
  Shape output_shape(const Shape& in) const override {
    if (in.size() != 3 || in[0] != c_) bad_input(name(), fmt::format("expects ({}, H, W)", c_), in);
    ops::Conv2dShape s = shape(1, in);
    if (!s.valid()) bad_input(name(), fmt::format("a {}x{} kernel does not fit", kernel_, kernel_), in);
    return {k_, s.oh(), s.ow()};
  }
  std::int64_t param_count() const override { return align(weights()) + (bias_ ? align(k_) : 0); }
  std::int64_t learnable_count() const override { return weights() + (bias_ ? k_ : 0); }
  std::int64_t bias_offset() const override { return bias_ ? align(weights()) : -1; }
  PassCosts cost(std::int64_t batch, const Shape& in) const override { return shape(batch, in).cost(); }
  void forward(Context& ctx, std::int64_t batch, const Shape& in, const Buffers& b) const override {
    ops::conv2d_forward(ctx, shape(batch, in), b.out, b.in, b.params, bias_ ? b.params + bias_offset() : nullptr);
  }
  bool forward_pooled(Context& ctx, std::int64_t batch, const Shape& in, const LayerSpec& pool,
                      const Buffers& b) const override {
    const ops::Conv2dShape s = shape(batch, in);
    ops::Pool2dShape p;
    p.n = batch;
    p.c = k_;
    p.h = s.oh();
    p.w = s.ow();
    p.kernel = pool.kernel;
    p.stride = pool.stride;
    return ops::conv2d_maxpool_forward(ctx, s, p, b.out, b.in, b.params, bias_ ? b.params + bias_offset() : nullptr);
  }
  void backward_input(Context& ctx, std::int64_t batch, const Shape& in, const Buffers& b) const override {
    ops::Conv2dShape s = shape(batch, in);
    if (act_ != Activation::None)
      ops::activation_backward(ctx, {batch * k_ * s.oh() * s.ow(), act_}, b.dout, b.dout, b.out);
    if (b.din) ops::conv2d_backward_input(ctx, s, b.din, b.dout, b.params);
  }
  void backward_weight(Context& ctx, std::int64_t batch, const Shape& in, const Buffers& b) const override {
    ops::conv2d_backward_weight(ctx, shape(batch, in), b.grads, bias_ ? b.grads + bias_offset() : nullptr, b.dout,
                                b.in);
  }

 private:
  std::int64_t weights() const { return k_ * c_ * kernel_ * kernel_; }
  ops::Conv2dShape shape(std::int64_t batch, const Shape& in) const {
    ops::Conv2dShape s;
    s.n = batch;
    s.c = c_;
    s.h = in.size() == 3 ? in[1] : 0;
    s.w = in.size() == 3 ? in[2] : 0;
    s.k = k_;
    s.r = s.s = kernel_;
    s.stride = stride_;
    s.pad = pad_;
    s.bias = bias_;
    s.act = act_;
    return s;
  }
  std::int64_t c_, k_, kernel_, stride_, pad_;
  Activation act_;
  bool bias_;
};

class MaxPool2d final : public Layer {
 public:
  MaxPool2d(std::string name, std::int64_t kernel, std::int64_t stride)
      : Layer(std::move(name)), kernel_(kernel), stride_(stride) {}
  std::string op() const override { return "maxpool2d"; }
  LayerSpec spec() const override {
    LayerSpec s;
    s.kind = LayerSpec::Kind::MaxPool2d;
    s.kernel = kernel_;
    s.stride = stride_;
    return s;
  }
  Shape output_shape(const Shape& in) const override {
    if (in.size() != 3) bad_input(name(), "expects (C, H, W)", in);
    ops::Pool2dShape s = shape(1, in);
    if (!s.valid()) bad_input(name(), fmt::format("a {}x{} window does not fit", kernel_, kernel_), in);
    return {in[0], s.oh(), s.ow()};
  }
  std::int64_t scratch_ints(std::int64_t batch, const Shape& in) const override {
    ops::Pool2dShape s = shape(batch, in);
    return batch * s.c * s.oh() * s.ow();
  }
  PassCosts cost(std::int64_t batch, const Shape& in) const override { return shape(batch, in).cost(); }
  void forward(Context& ctx, std::int64_t batch, const Shape& in, const Buffers& b) const override {
    ops::maxpool2d_forward(ctx, shape(batch, in), b.out, b.scratch, b.in);
  }
  void backward_input(Context& ctx, std::int64_t batch, const Shape& in, const Buffers& b) const override {
    if (b.din) ops::maxpool2d_backward(ctx, shape(batch, in), b.din, b.dout, b.scratch);
  }

 private:
  ops::Pool2dShape shape(std::int64_t batch, const Shape& in) const {
    ops::Pool2dShape s;
    s.n = batch;
    s.c = in.size() == 3 ? in[0] : 0;
    s.h = in.size() == 3 ? in[1] : 0;
    s.w = in.size() == 3 ? in[2] : 0;
    s.kernel = kernel_;
    s.stride = stride_;
    return s;
  }
  std::int64_t kernel_, stride_;
};

class ActivationLayer final : public Layer {
 public:
  ActivationLayer(std::string name, Activation act) : Layer(std::move(name)), act_(act) {}
  std::string op() const override { return ops::to_string(act_); }
  LayerSpec spec() const override {
    LayerSpec s;
    s.kind = LayerSpec::Kind::Activation;
    s.act = act_;
    return s;
  }
  Shape output_shape(const Shape& in) const override { return in; }
  PassCosts cost(std::int64_t batch, const Shape& in) const override {
    return ops::EltwiseShape{batch * numel(in), act_}.cost();
  }
  void forward(Context& ctx, std::int64_t batch, const Shape& in, const Buffers& b) const override {
    ops::activation_forward(ctx, {batch * numel(in), act_}, b.out, b.in);
  }
  void backward_input(Context& ctx, std::int64_t batch, const Shape& in, const Buffers& b) const override {
    if (b.din) ops::activation_backward(ctx, {batch * numel(in), act_}, b.din, b.dout, b.out);
  }

 private:
  Activation act_;
};

class Flatten final : public Layer {
 public:
  explicit Flatten(std::string name) : Layer(std::move(name)) {}
  std::string op() const override { return "flatten"; }
  LayerSpec spec() const override { return {}; }  // Kind::Flatten
  Shape output_shape(const Shape& in) const override { return {numel(in)}; }
  bool is_view() const override { return true; }
  PassCosts cost(std::int64_t, const Shape&) const override { return {}; }  // a view: no work
  void forward(Context&, std::int64_t, const Shape&, const Buffers&) const override {}
  void backward_input(Context&, std::int64_t, const Shape&, const Buffers&) const override {}
};

}  // namespace

std::unique_ptr<Layer> make_linear(std::string name, std::int64_t in, std::int64_t out, Activation act, bool bias) {
  return std::make_unique<Linear>(std::move(name), in, out, act, bias);
}
std::unique_ptr<Layer> make_conv2d(std::string name, std::int64_t c, std::int64_t k, std::int64_t kernel,
                                   std::int64_t stride, std::int64_t pad, Activation act, bool bias) {
  return std::make_unique<Conv2d>(std::move(name), c, k, kernel, stride, pad, act, bias);
}
std::unique_ptr<Layer> make_maxpool2d(std::string name, std::int64_t kernel, std::int64_t stride) {
  return std::make_unique<MaxPool2d>(std::move(name), kernel, stride);
}
std::unique_ptr<Layer> make_activation(std::string name, Activation act) {
  return std::make_unique<ActivationLayer>(std::move(name), act);
}
std::unique_ptr<Layer> make_flatten(std::string name) { return std::make_unique<Flatten>(std::move(name)); }

}  // namespace roofline::engine

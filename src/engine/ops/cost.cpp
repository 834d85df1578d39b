// Analytical cost of every op and pass; the convention is in cost.hpp and
// docs/engine.md. F = bytes per fp32 element; int32 labels/argmax also 4;
// Activations count at their dtype's width (bf16/fp16: 2 bytes, E, their dtype's size).
#include "roofline/engine/cost.hpp"

#include "roofline/core/error.hpp"
#include "roofline/engine/ops.hpp"

namespace roofline::engine {

const char* to_string(Pass p) {
  switch (p) {
    case Pass::Forward:
      return "forward";
    case Pass::InputGrad:
      return "input-grad";
    case Pass::WeightGrad:
      return "weight-grad";
    case Pass::Optimizer:
      return "optimizer";
  }
  return "?";
}

const OpCost& PassCosts::of(Pass p) const {
  switch (p) {
    case Pass::Forward:
      return forward;
    case Pass::InputGrad:
      return input_grad;
    case Pass::WeightGrad:
      return weight_grad;
    case Pass::Optimizer:
      break;
  }
  throw Error(ErrorKind::Internal, "layers have no optimizer pass cost");
}

namespace ops {

namespace {
constexpr double F = 4.0;
double d(std::int64_t v) { return static_cast<double>(v); }
}  // namespace

const char* to_string(Activation a) { return a == Activation::ReLU ? "relu" : "none"; }

// A fused activation's backward (the mask) belongs to the input-gradient pass,
// which reads the layer's output and also writes the masked gradient dpre
// that the GEMM parts of both backward passes read. Activations and the
// weights forward and the input gradient read are counted at the dtype's
// width (A); the bias and the weight-gradient outputs at fp32's (F).
PassCosts LinearShape::cost() const {
  PassCosts c;
  const double A = static_cast<double>(dtype_size(dtype));
  const double rows = d(n), k = d(in), m = d(out), outs = rows * m;
  const bool relu = act == Activation::ReLU;
  c.forward.flops = 2 * rows * k * m + (bias ? outs : 0) + (relu ? outs : 0);
  c.forward.bytes = A * (rows * k + m * k + outs) + (bias ? F * m : 0);
  c.input_grad.flops = 2 * rows * k * m + (relu ? outs : 0);
  c.input_grad.bytes = A * (outs + m * k + rows * k) + (relu ? A * 2 * outs : 0);
  c.weight_grad.flops = 2 * rows * k * m + (bias ? outs : 0);
  c.weight_grad.bytes = A * (outs + rows * k) + F * (m * k + (bias ? m : 0));
  return c;
}

bool Conv2dShape::valid() const {
  const bool dtype_ok = dtype == DType::F32 || dtype == DType::BF16 || dtype == DType::F16;
  return n > 0 && c > 0 && h > 0 && w > 0 && k > 0 && r > 0 && s > 0 && stride > 0 && pad >= 0 && h + 2 * pad >= r &&
         w + 2 * pad >= s && groups > 0 && c % groups == 0 && k % groups == 0 && dtype_ok;
}

// Each output sums c/groups · r · s products (a grouped convolution's
// multiply-adds are 1/groups of the dense one's).
PassCosts Conv2dShape::cost() const {
  PassCosts co;
  const double A = static_cast<double>(dtype_size(dtype));
  const double outs = d(n) * d(k) * d(oh()) * d(ow());
  const double macs = outs * d(cg()) * d(r) * d(s);
  const double ins = d(n) * d(c) * d(h) * d(w), ws = d(k) * d(cg()) * d(r) * d(s);
  const bool relu = act == Activation::ReLU;
  co.forward.flops = 2 * macs + (bias ? outs : 0) + (relu ? outs : 0);
  co.forward.bytes = A * (ins + ws + outs) + (bias ? F * d(k) : 0);
  co.input_grad.flops = 2 * macs + (relu ? outs : 0);
  co.input_grad.bytes = A * (outs + ws + ins) + (relu ? A * 2 * outs : 0);
  co.weight_grad.flops = 2 * macs + (bias ? outs : 0);
  co.weight_grad.bytes = A * (outs + ins) + F * (ws + (bias ? d(k) : 0));
  return co;
}

bool Pool2dShape::valid() const {
  const bool float_type = dtype == DType::F32 || dtype == DType::BF16 || dtype == DType::F16;
  return n > 0 && c > 0 && kernel > 0 && stride > 0 && pad >= 0 && 2 * pad <= kernel && h + 2 * pad >= kernel &&
         w + 2 * pad >= kernel && float_type;
}

// E = the activations' element size (dtype); argmax int32.
PassCosts Pool2dShape::cost() const {
  PassCosts co;
  const double outs = d(n) * d(c) * d(oh()) * d(ow()), ins = d(n) * d(c) * d(h) * d(w);
  const double E = static_cast<double>(dtype_size(dtype));
  co.forward.flops = outs * d(kernel) * d(kernel);  // one compare per window element
  co.forward.bytes = E * (ins + outs) + F * outs;   // input, output, argmax
  co.input_grad.flops = outs;                       // one add per window
  co.input_grad.bytes = E * (outs + ins) + F * outs;  // dout, din, argmax
  return co;
}

PassCosts EltwiseShape::cost() const {
  PassCosts co;
  const double E = static_cast<double>(dtype_size(dtype));
  co.forward = {d(n), E * 2 * d(n)};
  co.input_grad = {d(n), E * 3 * d(n)};
  return co;
}

PassCosts BiasGradShape::cost() const {
  const double e = d(rows) * d(cols);
  PassCosts co;
  co.input_grad = {(act == Activation::ReLU ? e : 0) + e, F * (3 * e + d(cols))};  // dout, out, dpre; db
  return co;
}

PassCosts RowsShape::softmax_cost() const {
  const double e = d(rows) * d(cols);
  PassCosts co;
  co.forward = {5 * e, F * 2 * e};     // max, subtract, exp, sum, divide
  co.input_grad = {4 * e, F * 3 * e};  // dot, subtract, multiply
  return co;
}

PassCosts RowsShape::log_softmax_cost() const {
  const double e = d(rows) * d(cols);
  PassCosts co;
  co.forward = {5 * e + d(rows), F * 2 * e};  // max, subtract, exp, sum, log, subtract
  co.input_grad = {4 * e, F * 3 * e};         // sum, exp, multiply, subtract
  return co;
}

PassCosts RowsShape::nll_cost() const {
  PassCosts co;
  co.forward = {d(rows) + 1, F * (2 * d(rows) + 1)};  // the gathered entries, labels, loss
  co.input_grad = {d(rows), F * (d(rows) * d(cols) + d(rows))};
  return co;
}

PassCosts RowsShape::cross_entropy_cost() const {
  const double e = d(rows) * d(cols);
  PassCosts co;
  co.forward = {5 * e + 2 * d(rows), F * (e + d(rows)) + 8};  // log-softmax, pick, sum
  co.input_grad = {2 * e, F * e};                             // exp, subtract one-hot, scale; written
  return co;
}

OpCost SgdShape::cost() const {
  const double p = d(n);
  return momentum ? OpCost{6 * p, F * 5 * p} : OpCost{4 * p, F * 3 * p};
}

OpCost BatchShape::cost() const {
  const double outs = d(batch) * d(out_h) * d(out_w);
  const bool resize = out_h != in_h || out_w != in_w;
  // bilinear: 3 lerps of 2 FLOPs plus weights; normalise: subtract and multiply
  return {outs * (resize ? 8.0 : 0.0) + outs * 3,
          d(batch) * d(in_h) * d(in_w) + F * outs + F * d(batch) /*order*/ + d(batch) + F * d(batch)};
}

}  // namespace ops
}  // namespace roofline::engine

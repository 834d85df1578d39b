// The CNN ops' shapes (ops_cnn.hpp): what is valid and the analytical cost of
// every pass (their dispatchers: dispatch_cnn.cpp); the cost convention is in
// cost.hpp and docs/engine.md. E = bytes of an activation element (its dtype),
// F = 4 (fp32 parameters and statistics).
#include "roofline/engine/ops_cnn.hpp"

namespace roofline::engine::ops {

namespace {
constexpr double F = 4.0;
double d(std::int64_t v) { return static_cast<double>(v); }
bool float_dtype(DType t) { return t == DType::F32 || t == DType::BF16 || t == DType::F16; }
double esize(DType t) { return static_cast<double>(dtype_size(t)); }
}  // namespace

bool BatchNormShape::valid() const {
  return n > 0 && c > 0 && h > 0 && w > 0 && eps > 0 && momentum >= 0 && momentum <= 1 && float_dtype(dtype);
}

// Forward (training), per element: the mean (add), the variance (subtract,
// multiply-add: 3), the normalisation (x − mean)·scale + beta (subtract,
// multiply-add: 3) [+ the residual add] [+ the ReLU compare]. Bytes: in, out
// [, residual]; gamma, beta, the running statistics read and written, the saved
// ones written.
// Backward, per element: [the ReLU mask,] Σ dpre (add), Σ dpre·(x − mean)
// (subtract, multiply-add: 3), din = A·(dpre − b) + B·(x − mean) (subtract,
// multiply, subtract, multiply-add: 5). Bytes: dout, in [, out; dpre written],
// din; gamma and the saved statistics read, dgamma and dbeta written. The
// parameter gradients are the sums din needs: one pass, counted in input_grad.
PassCosts BatchNormShape::cost() const {
  const double N = d(n) * d(c) * d(h) * d(w), C = d(c), E = esize(dtype);
  const bool relu = act == Activation::ReLU;
  PassCosts co;
  co.forward.flops = 7 * N + (residual ? N : 0) + (relu ? N : 0);
  co.forward.bytes = E * N * (residual ? 3 : 2) + F * 8 * C;
  co.input_grad.flops = 9 * N + (relu ? N : 0);
  co.input_grad.bytes = E * N * (relu ? 5 : 3) + F * 5 * C;
  return co;
}

// (x − mean)·scale + beta per element (3) [+ residual] [+ ReLU]; in, out
// [, residual]; gamma, beta and the running statistics read.
OpCost BatchNormShape::eval_cost() const {
  const double N = d(n) * d(c) * d(h) * d(w), C = d(c), E = esize(dtype);
  const bool relu = act == Activation::ReLU;
  return {3 * N + (residual ? N : 0) + (relu ? N : 0), E * N * (residual ? 3 : 2) + F * 4 * C};
}

bool AvgPoolShape::valid() const { return n > 0 && c > 0 && h > 0 && w > 0 && oh > 0 && ow > 0 && float_dtype(dtype); }

// Forward: every bin's elements added (bins may overlap when h is not a
// multiple of oh: Σ of the bins' areas) and one divide per output. Backward:
// one divide per output and one add per (bin, element).
PassCosts AvgPoolShape::cost() const {
  auto span = [](std::int64_t in, std::int64_t out) {
    std::int64_t total = 0;
    for (std::int64_t i = 0; i < out; ++i) total += ((i + 1) * in + out - 1) / out - (i * in) / out;
    return static_cast<double>(total);
  };
  const double planes = d(n) * d(c), reads = planes * span(h, oh) * span(w, ow), outs = planes * d(oh) * d(ow);
  const double E = esize(dtype), bytes = E * (planes * d(h) * d(w) + outs);
  PassCosts co;
  co.forward = {reads + outs, bytes};
  co.input_grad = {reads + outs, bytes};
  return co;
}

PassCosts add_cost(const EltwiseShape& s) {
  const double N = d(s.n), E = esize(s.dtype);
  const bool relu = s.act == Activation::ReLU;
  PassCosts co;
  co.forward = {N + (relu ? N : 0), E * 3 * N};
  if (relu) co.input_grad = {N, E * 3 * N};  // the mask (activation_backward); a and b share the gradient
  return co;
}

bool DropoutShape::valid() const { return n > 0 && p >= 0.0f && p <= 1.0f && float_dtype(dtype); }

// One multiply per element each way (the mask's hash is integer work, not FLOPs).
PassCosts DropoutShape::cost() const {
  const double N = d(n), E = esize(dtype);
  PassCosts co;
  co.forward = {N, E * 2 * N};
  co.input_grad = {N, E * 2 * N};
  return co;
}

}  // namespace roofline::engine::ops

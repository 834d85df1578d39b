// What an op costs, counted from its shape alone (no measurement), for each
// pass separately. The counting convention (docs/engine.md "Cost model"):
//   FLOPs: a fused multiply-add is 2 FLOPs; an add, multiply, compare (max,
//          ReLU), exp, log or divide is 1. Both GEMM-like passes of a layer are
//          counted from their own loops (no "backward = 2 x forward" rule).
//   bytes: the fewest bytes the pass must move to and from memory: each input
//          read once and each output written once, at the dtype's width. Caches
//          are ignored, so this is a lower bound on DRAM traffic (a pass whose
//          working set stays in cache may move fewer DRAM bytes).
// fvcore/ptflops count multiply-adds (half our FLOPs) and only conv/linear/
// matmul forward; seed 001 counted linear as 2*in*out+out per sample and
// backward as 2 x forward. `roofline` keeps the passes separate so the three
// can be compared.
#pragma once
#include <string>

namespace roofline::engine {

struct OpCost {
  double flops = 0;
  double bytes = 0;
  OpCost& operator+=(const OpCost& o) {
    flops += o.flops;
    bytes += o.bytes;
    return *this;
  }
  double intensity() const { return bytes > 0 ? flops / bytes : 0; }  // FLOP per byte
};
inline OpCost operator+(OpCost a, const OpCost& b) { return a += b; }

// The passes of a training step. NVTX ranges are named "<model>/<layer>/<pass>".
enum class Pass { Forward, InputGrad, WeightGrad, Optimizer };
const char* to_string(Pass p);  // "forward", "input-grad", "weight-grad", "optimizer"

struct PassCosts {
  OpCost forward, input_grad, weight_grad;
  OpCost backward() const { return input_grad + weight_grad; }
  OpCost train() const { return forward + input_grad + weight_grad; }
  const OpCost& of(Pass p) const;
  PassCosts& operator+=(const PassCosts& o) {
    forward += o.forward;
    input_grad += o.input_grad;
    weight_grad += o.weight_grad;
    return *this;
  }
};

}  // namespace roofline::engine

// The op test harness, after ggml's test-backend-ops: every op, on every
// backend, on random shapes with fresh random values, against the float64
// reference; guard regions around every output catch out-of-bounds writes,
// poisoned outputs catch unwritten elements, inputs are checked unchanged;
// finite-difference gradient checks of the reference backward passes; and a
// perf mode that times each pass and turns its cost() into GFLOP/s and GB/s.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "roofline/engine/context.hpp"
#include "roofline/engine/cost.hpp"
#include "roofline/engine/ops.hpp"
#include "roofline/engine/rng.hpp"

namespace roofline::engine::harness {

// Names of the ops the harness knows: linear, linear+relu, conv2d, conv2d+relu,
// conv2d_nets, conv2d_nhwc, conv2d_groups, maxpool2d, relu, relu+bias_grad, softmax, log_softmax,
// nll_loss, cross_entropy, sgd, linear_weight_sgd, gather_batch, sgd_nesterov, sgd_scaled, adamw,
// adamw_scaled, cast, grads_check_finite, loss_scale_update, and the CNN ops (op_cases_cnn.cpp).
std::vector<std::string> op_names();
// Why `op` is not run on `backend` (in perf mode when `perf`), or "" when it
// is: the fast CPU backend has no NHWC or grouped convolution, and the two
// networks' model-sized convolutions are not timed on the CPU.
std::string skip_reason(const std::string& op, Backend backend, bool perf = false);

// Relative error bound (‖out − ref‖₂ / ‖ref‖₂ against the float64 reference)
// of an output in `dtype`: fp32 1e-5; bf16 2^-7 and fp16 2^-10, twice the
// dtype's unit roundoff (harness.cpp says why); integers exact.
double error_bound(DType dtype);

struct CheckResult {
  std::string op, pass, shape, backend;
  std::string output;    // the output buffer checked
  double rel_error = 0;  // ‖out − ref‖ / ‖ref‖ (exact match required for integer outputs)
  double bound = 0;
  bool finite = true;     // no NaN/Inf (poison left behind reads as NaN)
  bool guards_ok = true;  // nothing written outside the output
  bool inputs_ok = true;  // inputs unchanged
  std::int64_t zero_mismatches = 0;  // exact-zero outputs (dropout): zeros not where the reference has them
  // The backend refused the case's dtype with Error(Unsupported) (bf16 and
  // fp16 on the CPU backends): not run, not failed; skip_reason says why.
  bool skipped = false;
  std::string skip_reason;
  // A CPU backend ran a bf16/fp16 case instead of refusing it (a silent fallback).
  bool accepted_unsupported = false;
  bool passed() const {
    return skipped ||
           (finite && guards_ok && inputs_ok && zero_mismatches == 0 && !accepted_unsupported && rel_error <= bound);
  }
  std::string describe() const;  // one line for failures (and skips)
};
// How many of `results` were skipped, and the first one's reason (tests print it).
std::int64_t count_skipped(const std::vector<CheckResult>& results, std::string* reason = nullptr);

// Runs `cases` random shapes of `op` on `ctx` and checks every output of every pass.
std::vector<CheckResult> check_op(const std::string& op, Context& ctx, Rng& rng, int cases);
// The same checks at the model-sized shapes of perf_op (the layers of
// simple-mlp, simple-cnn and ece408 at batch `batch`): the paths the models
// take (tiled convolutions, large GEMMs) checked at their own sizes. AlexNet's
// and ResNet-18's layers (conv2d_nets, conv2d_nhwc, conv2d_groups) are
// checked with their own channels, kernels, strides and padding but inputs cut
// to 2×2 outputs (at full size the float64 reference would take minutes).
std::vector<CheckResult> check_model_shapes(const std::string& op, Context& ctx, Rng& rng, std::int64_t batch);
// The same checks for one convolution shape `s` (conv2d, or conv2d+relu when
// s.act is ReLU): tests aim it at a kernel's edges (channel blocks, more
// images than blocks, the shapes that fall back to the direct kernels).
std::vector<CheckResult> check_conv(const ops::Conv2dShape& s, Context& ctx, Rng& rng);
// ... and for one linear shape (linear, or linear+relu when s.act is ReLU):
// the small-layer kernel's edges and the GEMM path beside it.
std::vector<CheckResult> check_linear(const ops::LinearShape& s, Context& ctx, Rng& rng);

struct GradCheckResult {
  std::string op, shape, wrt;  // the input the gradient is taken with respect to
  double rel_error = 0;        // analytic vs central differences, float64
  double bound = 0;
  bool passed() const { return rel_error <= bound; }
  std::string describe() const;
};
// Finite-difference checks of the float64 reference backward passes of `op`
// (ops with a backward pass; others return nothing).
std::vector<GradCheckResult> gradient_check(const std::string& op, Rng& rng, int cases);

struct PerfResult {
  std::string op, pass, shape, backend;
  double seconds = 0;  // median per call
  double rel_iqr = 0;
  OpCost cost;
  double gflops() const { return seconds > 0 ? cost.flops / seconds * 1e-9 : 0; }
  double gbytes() const { return seconds > 0 ? cost.bytes / seconds * 1e-9 : 0; }
};
// Times every pass of `op` at the model-sized shapes it is used with
// (simple-mlp, simple-cnn, ece408, and ResNet-18 and AlexNet for the CNN ops, at
// batch `batch`). Cases in a dtype the backend refuses (bf16 on the CPU) are left out.
std::vector<PerfResult> perf_op(const std::string& op, Context& ctx, std::int64_t batch, double min_seconds = 0.2);

}  // namespace roofline::engine::harness

// One instance of an op for the harness: its buffers (with how to fill
// them), its passes (how to run each on a Context and how to compute it in
// float64), and, for ops with a backward pass, how to check it by finite
// differences. Built by make_case() in op_cases.cpp.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "roofline/engine/context.hpp"
#include "roofline/engine/cost.hpp"
#include "roofline/engine/ops.hpp"
#include "roofline/engine/rng.hpp"

namespace roofline::engine::harness {

enum class Role { Input, Output, InOut };

struct BufSpec {
  std::string name;
  // F32, F64, I32 or U8; activations may be BF16 or F16: the harness rounds
  // their values to the dtype, uploads them in it and reads them back.
  DType dtype = DType::F32;
  std::int64_t count = 0;
  Role role = Role::Input;
  // An output whose zeros must be exactly where the reference's are (dropout:
  // the mask is the same bits on every backend), beside the error bound.
  bool exact_zeros = false;
};

// Host values of one buffer: floating types in f, I32 in i, U8 in u.
struct HostBuf {
  std::vector<double> f;
  std::vector<std::int32_t> i;
  std::vector<std::uint8_t> u;
};
using HostBufs = std::vector<HostBuf>;
using DevPtrs = std::vector<void*>;

struct PassSpec {
  std::string name;  // forward, input-grad, weight-grad, optimizer
  OpCost cost;
  std::vector<int> inputs;                            // buffers read (checked unchanged unless also an output)
  std::vector<int> outputs;                           // buffers written (poisoned first unless InOut)
  std::function<void(Context&, const DevPtrs&)> run;  // fp32 on the context
  std::function<void(HostBufs&)> ref;                 // float64 reference, in place on the outputs
};

// A finite-difference check: L(inputs) = Σ forward-output · R; the analytic
// gradient w.r.t. buffer `wrt` comes from the reference backward.
struct GradSpec {
  std::string wrt;
  int buffer = -1;                                           // the input perturbed
  std::function<double(const HostBufs&)> loss;               // L at these inputs
  std::function<std::vector<double>(const HostBufs&)> grad;  // dL/d buffer
  // Step of the central difference. Piecewise-linear ops (ReLU, max-pool and
  // what feeds them) use a small step so it rarely crosses a kink; smooth ops
  // (softmax, losses) a larger one, so the rounding of L, a sum over every
  // row, stays far below the difference.
  double eps = 1e-6;
};

struct OpCase {
  std::string op, shape;
  // Whether any buffer is BF16 or F16 (a backend without that dtype refuses
  // the case with Error(Unsupported): the harness reports it as skipped).
  bool low_precision() const {
    for (const BufSpec& b : bufs)
      if (b.dtype == DType::BF16 || b.dtype == DType::F16) return true;
    return false;
  }
  std::vector<BufSpec> bufs;
  // Fills every buffer with fresh random values (and values derived from the
  // reference, such as a forward output that a backward pass reads).
  std::function<void(Rng&, HostBufs&)> fill;
  std::vector<PassSpec> passes;
  std::vector<GradSpec> grads;
};

// A random shape of `op` (check and gradient modes) ...
OpCase make_case(const std::string& op, Rng& rng);
// ... or the model-sized shapes `op` is used with at batch `batch` (perf mode).
std::vector<OpCase> perf_cases(const std::string& op, std::int64_t batch);
// The model shapes check_model_shapes checks against float64: perf_cases,
// except for the networks' convolutions (net_conv_check_cases).
std::vector<OpCase> model_check_cases(const std::string& op, std::int64_t batch);
// One convolution shape, any (check_conv aims the GPU tests at kernel edges).
OpCase conv_case(const ops::Conv2dShape& s);
OpCase linear_case(const ops::LinearShape& s);
// Convolutions of real networks (op_cases_conv.cpp): conv2d_nets (AlexNet's and
// ResNet-18's kernel, stride and padding combinations at small sizes, NCHW,
// with more channels than the small models' layers, so the GPU runs them on
// cuDNN), conv2d_nhwc (the same in NHWC) and conv2d_groups (grouped and
// depthwise, either format). In perf mode conv2d_nets is every convolution of
// AlexNet and ResNet-18 at the batch (fp32, NCHW), too large for the float64
// reference; check_model_shapes checks the same layers (channels, kernel,
// stride, padding) at 2×2 outputs instead, NCHW, NHWC, or grouped.
bool is_net_conv_op(const std::string& op);
OpCase net_conv_case(const std::string& op, Rng& rng);
std::vector<OpCase> net_conv_perf_cases(const std::string& op, std::int64_t batch);
std::vector<OpCase> net_conv_check_cases(const std::string& op, std::int64_t batch);
// A max-pool (any padding, format and dtype) named `op`; ReLU in dtype t
// ("relu" for fp32, "relu_lowp" otherwise).
OpCase pool_case(const ops::Pool2dShape& s, const std::string& op);
OpCase relu_case(std::int64_t n, DType t);
// The CNN ops (op_cases_cnn.cpp): batchnorm, batchnorm+relu, batchnorm+add+relu,
// maxpool2d_pad, adaptive_avgpool2d, add, add+relu, relu_lowp, dropout.
const std::vector<std::string>& cnn_op_names();
bool is_cnn_op(const std::string& op);
OpCase cnn_case(const std::string& op, Rng& rng);
std::vector<OpCase> cnn_perf_cases(const std::string& op, std::int64_t batch);
// Optimiser cases (op_cases_optim.cpp).
OpCase sgd_case(std::int64_t n, const ops::SgdConfig& cfg);
OpCase linear_weight_sgd_case(const ops::LinearShape& s, const ops::SgdConfig& cfg);
// The ops of ops_optim.hpp (sgd_nesterov, sgd_scaled, adamw, adamw_scaled,
// cast, grads_check_finite, scale_loss_grad, loss_scale_update): whether `op` is one, a random
// case of it, its model-sized cases (op_cases_optim.cpp).
bool is_optim_op(const std::string& op);
OpCase optim_case(const std::string& op, Rng& rng);
std::vector<OpCase> optim_perf_cases(const std::string& op, std::int64_t batch);
// The transformer's ops (op_cases_transformer.cpp): embeddings, layernorm,
// layernorm+add, gelu, attention (padded batches), attention_packed,
// attention_grad (its backward), span_loss (the QA head's loss and gradient).
const std::vector<std::string>& transformer_op_names();
bool is_transformer_op(const std::string& op);
OpCase transformer_case(const std::string& op, Rng& rng);
std::vector<OpCase> transformer_perf_cases(const std::string& op, std::int64_t batch);
// Casts, the finiteness check and loss scaling (op_cases_mixed.cpp).
OpCase cast_case(std::int64_t n, Rng& rng);
OpCase finite_case(std::int64_t n, Rng& rng);
OpCase scale_loss_grad_case(std::int64_t n, Rng& rng);
OpCase loss_scale_case(Rng& rng);

}  // namespace roofline::engine::harness

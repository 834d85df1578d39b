// A LayerGraph instantiated on a Context for batches of up to `max_batch` in
// one precision. Every buffer is planned once, at construction:
//   - parameters (fp32 master weights), their gradients and the optimizer's
//     state, each one flat allocation with tensors on 256-byte boundaries (so
//     the optimizer is one fused pass, which also writes the bf16/fp16 copy of
//     the weights that convolutions and GEMMs read in mixed precision);
//   - BatchNorm's running statistics and saved batch statistics;
//   - one arena for activations, activation gradients and scratch, each buffer
//     placed by its lifetime within a step (forward, loss, backward), so that
//     buffers whose lives do not overlap share memory.
// A step allocates nothing and synchronises nothing, so it is captured whole
// as a CUDA graph (capture_train_step) and replayed.
//
// Gradients: a value that feeds several layers gets the sum of what each
// sends back. The first layer to send (in backward order) writes the
// gradient buffer; the others write a temporary that is added in. Where
// the first is a BatchNorm2d's residual (ResNet's shortcut), the buffer is
// the BatchNorm's own masked output gradient: no copy.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "roofline/engine/context.hpp"
#include "roofline/engine/data_parallel.hpp"
#include "roofline/engine/graph.hpp"
#include "roofline/engine/layer_graph.hpp"
#include "roofline/engine/ops_optim.hpp"
#include "roofline/engine/precision.hpp"

namespace roofline::engine {

enum class OptimizerKind { Sgd, AdamW };

// The networks' default activation layout: NHWC on the fast CPU path (oneDNN's
// AVX-512 convolutions take it without reordering: ResNet-18 inference on the
// GPU host's 16 vCPUs 4.1 ms at batch 1 against 6.2 in NCHW, 199 against 227
// ms at batch 64, 2026-11-27) and for bf16/fp16 on the GPU (tensor-core
// convolutions, as PyTorch's channels_last runs); NCHW for fp32 and tf32 on
// the GPU and on the plain CPU reference. The PyTorch peer takes the same
// (peers/pytorch_nets.py's --layout, passed by the bench).
MemoryFormat default_format(Backend backend, Precision p);

struct GraphOptions {
  Precision precision = Precision::FP32;
  // NCHW or NHWC; default: default_format below.
  std::optional<MemoryFormat> format;
  bool training = true;  // false: inference only (no gradients, no optimizer; activations reused as soon as read)
  // Inference only: each BatchNorm2d fed by a convolution alone is folded into
  // it (batchnorm_folds in layer_graph.hpp): the convolution runs with weights
  // W·γ/√(var+ε) and bias β + (b − mean)·γ/√(var+ε), its BatchNorm's ReLU fused
  // in, and writes the BatchNorm's output; a residual is then added (with the
  // ReLU) in one element-wise pass. false: the BatchNorm runs as its own pass.
  bool fold_batchnorm = true;
  OptimizerKind optimizer = OptimizerKind::Sgd;
  ops::SgdConfig sgd{0.1f, 0.9f, 1e-4f};  // torchvision's ImageNet recipe
  ops::AdamWConfig adamw;
  std::uint64_t dropout_seed = 0x5eed;
  // Dynamic loss scaling (torch.amp.GradScaler), on for fp16 training; true
  // turns it on in any precision (the CPU tests run it in fp32).
  bool loss_scaling = false;
  ops::LossScaleConfig loss_scale;  // GradScaler's defaults: 65536, ×2 every 2000 good steps, ×0.5 on overflow
};

class GraphNetwork {
 public:
  GraphNetwork(const LayerGraph& graph, Context& ctx, std::int64_t max_batch, GraphOptions options = {});
  ~GraphNetwork();
  GraphNetwork(const GraphNetwork&) = delete;
  GraphNetwork& operator=(const GraphNetwork&) = delete;

  const LayerGraph& graph() const { return graph_; }
  Context& context() const { return ctx_; }
  std::int64_t max_batch() const { return max_batch_; }
  Precision precision() const { return opt_.precision; }
  DType dtype() const { return dtype_; }
  MemoryFormat format() const { return format_; }
  bool training() const { return opt_.training; }
  // Whether training scales the loss (needs_loss_scaling(precision()) or
  // GraphOptions::loss_scaling): loss_forward multiplies the loss gradient by
  // the scale; optimizer_step checks every gradient for inf/NaN, unscales them
  // inside the update and skips the whole update (parameters, optimizer state
  // and the low-precision copy unchanged) when one overflowed, then moves the
  // scale as GradScaler.update. All of it on the stream: a captured step
  // skips and counts on the device.
  bool loss_scaling() const { return opt_.training && (opt_.loss_scaling || needs_loss_scaling(opt_.precision)); }
  // The current scale and the steps skipped since construction (synchronous
  // reads; 1 and 0 without loss scaling).
  float loss_scale() const;
  std::int64_t skipped_steps() const;

  // The state_dict tensors in graph().params() order, in torch's layout
  // (convolution weights (k, c/groups, r, s) whatever format() is).
  // An inference network that folds BatchNorm (folded_batchnorms() > 0) also
  // computes its folded weights here, from these tensors.
  void load_state(const std::vector<std::vector<float>>& tensors);
  // Recomputes the folded weights from the parameters and running statistics
  // the network holds now (synchronous: not inside a capture). load_state does
  // it; an inference network reads its state when it is loaded, so call this
  // only after writing parameters or statistics some other way. No-op without folds.
  void refresh_inference_weights();
  // How many BatchNorm2d layers run folded into their convolution (0: none,
  // a training network, or fold_batchnorm off).
  int folded_batchnorms() const;
  std::vector<std::vector<float>> state() const;
  // The learnable parameters' gradients of the last backward, in torch's
  // layout (an empty vector for buffers); with loss_scaling(), times the scale
  // of that step (as torch's .grad before GradScaler unscales it).
  std::vector<std::vector<float>> grads() const;

  // (max_batch, c, h, w) in format() and dtype(); (max_batch) int32 labels.
  void* input() const { return input_.raw(); }
  std::int32_t* labels() const { return labels_.i32(); }
  // Copies a host batch given in NCHW fp32 (and its labels) in, converting to
  // format() and dtype(). Synchronous; for set-up and tests.
  void set_batch(const std::vector<float>& nchw, const std::vector<std::int32_t>& labels, std::int64_t batch);
  // (batch, classes) fp32 logits of the last forward (synchronous copy).
  std::vector<float> logits(std::int64_t batch) const;
  // The last step's mean loss (synchronous).
  float loss() const;

  // training = true: batch statistics (and their running averages), dropout;
  // false: eval mode (running statistics, no dropout).
  void forward(std::int64_t batch, bool training);
  // Cross-entropy of the logits against labels(): the loss and its gradient.
  void loss_forward(std::int64_t batch);
  void backward(std::int64_t batch);
  void optimizer_step();
  // forward(training), loss_forward, backward, optimizer_step.
  void train_step(std::int64_t batch);

  // Data-parallel training: from now on backward hands each bucket of
  // gradients (plan_buckets(graph(), cfg), each a contiguous range of the
  // flat gradient buffer) to `sync` as soon as the last of its gradients is
  // written, and optimizer_step first waits for every bucket (sync->finish).
  // The parameters are made rank 0's (sync->broadcast), so every rank starts
  // equal. `sync` must outlive the network's training; null detaches it.
  // Set it before capture_train_step: a captured step keeps what it captured.
  // Throws Error(Usage) on an inference network.
  void set_grad_sync(dist::GradSync* sync, const dist::BucketPlanConfig& cfg = {});
  // The buckets of the current sync, in the order they are reduced (empty without one).
  const std::vector<dist::GradBucket>& grad_buckets() const { return buckets_; }
  // Captures train_step(batch) (or forward(batch, false) for infer) once as a
  // CUDA graph after one eager run, then replays it.
  void capture_train_step(std::int64_t batch);
  void capture_inference(std::int64_t batch);
  void replay() const;
  bool captured() const { return step_graph_.ready(); }

  struct Memory {
    size_t params = 0, grads = 0, optimizer = 0, copies = 0, state = 0, arena = 0, io = 0;
    size_t total() const { return params + grads + optimizer + copies + state + arena + io; }
  };
  Memory memory() const { return memory_; }
  // Bytes the arena would need without sharing (the sum of every buffer).
  size_t arena_unshared() const { return arena_unshared_; }

  // NVTX range of a node's pass: "<model>/<node>/<pass>".
  const std::string& range_name(size_t node, Pass pass) const { return names_[node * 4 + static_cast<size_t>(pass)]; }

  struct Plan;  // graph_plan.hpp
  struct Fold;  // graph_fold.hpp

 private:
  void* arena_at(int buffer) const;  // where a planned buffer starts
  void* act(int value) const;
  void* grad(int value) const;
  void* temp(size_t node, size_t input) const;
  const void* weight(int param) const;  // what a convolution or Linear reads (the copy in mixed precision)
  float* param(int p) const;
  float* param_grad(int p) const;
  float* state_of(int p) const;  // running statistics
  void forward_node(size_t i, std::int64_t batch, bool training);
  void backward_node(size_t i, std::int64_t batch);
  void refresh_copy();
  // Loss scaling (graph_loss_scale.cpp; no-ops without it).
  void init_loss_scale();
  void scale_loss_grad(std::int64_t n);
  ops::GradScale check_grads();  // after backward: found_inf from every gradient; what the update reads
  void update_loss_scale();
  // graph_fold.cpp: the folds (constructor), their weights, and the forward of a folded pair.
  void make_fold();
  void fold_weights();
  bool folded(size_t node) const;
  void forward_folded(size_t node, std::int64_t batch);

  const LayerGraph& graph_;
  Context& ctx_;
  std::int64_t max_batch_;
  GraphOptions opt_;
  DType dtype_;
  MemoryFormat format_;
  std::unique_ptr<Plan> plan_;
  std::unique_ptr<Fold> fold_;  // null: no BatchNorm folded
  Tensor params_, grads_, opt_a_, opt_b_, copy_, state_, stats_, arena_, input_, labels_, logits32_, dlogits32_,
      loss_, step_;
  Tensor scale_, scale_counts_;  // (scale, inv_scale) f32, (growth tracker, found_inf, skipped) i32
  // Per graph param: empty, or the (k, c, h, w) view whose (k, h, w, c) order
  // it is stored in (NHWC convolutions, Linear layers after an NHWC flatten).
  std::vector<Shape> channels_last_;
  std::vector<std::int64_t> param_off_;  // per graph param: offset in params_/grads_ (learnable) or state_ (buffers)
  std::vector<std::int64_t> stats_off_;  // per node: offset of save_mean (c) then save_invstd (c) in stats_
  std::int64_t learnable_floats_ = 0;    // padded size of params_
  Memory memory_;
  size_t arena_unshared_ = 0;
  std::vector<std::string> names_;
  StepGraph step_graph_;
  // Data-parallel (set_grad_sync): the buckets, each one's [first float, count)
  // in grads_, and per learnable param its bucket (−1: none).
  dist::GradSync* sync_ = nullptr;
  std::vector<dist::GradBucket> buckets_;
  std::vector<std::pair<std::int64_t, std::int64_t>> bucket_range_;
  std::vector<int> bucket_of_;
};

}  // namespace roofline::engine

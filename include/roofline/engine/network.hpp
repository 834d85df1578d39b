// A Model instantiated on a Context for batches of up to `max_batch`: one
// allocation each for parameters, gradients and momentum (so the optimiser
// is a single fused update over every parameter), and one arena of
// activations and activation gradients. Nothing is allocated after
// construction, so a step (forward, loss, backward, update) has fixed
// addresses and can be captured once as a CUDA graph and replayed.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "roofline/engine/model.hpp"

namespace roofline::engine {

class Network {
 public:
  Network(const Model& model, Context& ctx, std::int64_t max_batch);

  const Model& model() const { return model_; }
  Context& context() const { return ctx_; }
  std::int64_t max_batch() const { return max_batch_; }

  void set_params(const std::vector<float>& host);  // param_count values
  std::vector<float> params() const;                // synchronous copy to the host
  std::vector<float> grads() const;
  void zero_momentum();

  float* input() const { return acts_[0]; }         // (max_batch, input_shape)
  float* logits() const { return acts_.back(); }    // (max_batch, classes)
  float* dlogits() const { return dacts_.back(); }  // (max_batch, classes)
  // (param_count). Handing out the pointer counts as a change of the parameters
  // (prepare_inference's copies are no longer read).
  float* param_data() const {
    ++params_version_;
    return params_.f32();
  }
  float* grad_data() const { return grads_.f32(); }         // (param_count)
  float* momentum_data() const { return momentum_.f32(); }  // (param_count)

  // Forward from input() to logits() for `batch` rows; `grad_path` says
  // whether backward() will follow (a training step: a leading wide Linear then
  // runs split by columns before the row split, ops::linear_joins_row_split). Without it, a convolution followed by a
  // max pool whose windows tile its output runs as one kernel where the
  // backend has one (ops::conv2d_maxpool_forward): the convolution's own
  // output (and the pool's argmax) is then left unwritten.
  void forward(std::int64_t batch, bool grad_path = true);
  // Inference to probabilities (n, classes): forward(batch, false), then the
  // softmax; where the model ends in two Linear layers and the backend has the
  // kernel (ops::linear_softmax_head_forward) those and the softmax run as one.
  // On the fast CPU backend the rows are split between threads once, each
  // running the whole network on its rows (ops::for_row_chunks), its Linear
  // layers over prepare_inference's copies while they are current.
  void infer_probs(std::int64_t batch, float* probs);
  // Copies of the parameters in the layout the backend's forward prefers when
  // they stay fixed (Layer::prepare_inference: on the fast CPU backend every
  // Linear layer's weights transposed, ops::linear_prefers_wt), made now from the
  // current parameters. Forwards outside training (infer_probs, forward(batch,
  // false)) read them until the parameters change through this Network
  // (set_params, sgd_step, backward_sgd, param_data()). Returns false, with
  // nothing made, where no layer wants a copy on this backend.
  bool prepare_inference();
  bool inference_prepared() const { return infer_version_ == params_version_; }
  // Backward from dlogits() to every parameter gradient.
  void backward(std::int64_t batch);
  // One fused SGD update over all parameters; advances *step when given.
  void sgd_step(const ops::SgdConfig& cfg, std::int32_t* step = nullptr);
  // A training step's backward and update: backward(batch), then sgd_step — the
  // same values bit for bit. Where the backend updates a Linear layer's
  // parameters as its weight gradient is computed (ops::fuses_weight_grad_sgd, the
  // fast CPU backend) those layers do, and the other layers' parameters get one
  // update after.
  void backward_sgd(std::int64_t batch, const ops::SgdConfig& cfg, std::int32_t* step = nullptr);

  // NVTX range names, "<model>/<layer>/<pass>".
  const std::string& range_name(size_t layer, Pass pass) const;

 private:
  bool forward_conv_pool(size_t layer, std::int64_t batch);
  std::vector<bool> input_grads_needed() const;
  void backward_rows_split(std::int64_t batch, const std::vector<bool>& need_din);
  Layer::Buffers buffers(size_t layer, std::int64_t r0, bool din) const;
  // Layers [begin, end) on rows [r0, r1) of the batch.
  void forward_range(size_t begin, size_t end, std::int64_t r0, std::int64_t r1, bool grad_path);
  const Model& model_;
  Context& ctx_;
  std::int64_t max_batch_;
  Tensor params_, grads_, momentum_, arena_, scratch_;
  std::vector<float*> acts_, dacts_;         // per layer boundary, size layers+1
  std::vector<std::int32_t*> scratch_ptrs_;  // per layer
  std::vector<std::string> names_;           // layers x 4 passes
  // Leading layers a training forward runs over the whole batch before the row
  // split (views, and Linear layers that ops::linear_joins_row_split keeps out).
  size_t row_prefix_ = 0;
  // One row's forward FLOPs inside the row split (ops::for_row_chunks): a
  // training step's (the layers after the prefix) and an inference's (all).
  double train_row_flops_ = 0, infer_row_flops_ = 0;
  std::string optimizer_range_;
  // prepare_inference's copies: per layer, the offset in infer_ (−1: none).
  Tensor infer_;  // undefined where no layer wants a copy
  std::vector<std::int64_t> infer_off_;
  // Bumped by every change of the parameters; the copies are current while
  // equal (never, before the first prepare_inference).
  mutable std::uint64_t params_version_ = 0;
  std::uint64_t infer_version_ = ~std::uint64_t{0};
};

}  // namespace roofline::engine

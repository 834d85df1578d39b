#include "roofline/engine/network.hpp"

#include <fmt/format.h>

#include "roofline/core/error.hpp"

namespace roofline::engine {

Network::Network(const Model& model, Context& ctx, std::int64_t max_batch)
    : model_(model), ctx_(ctx), max_batch_(max_batch) {
  ROOFLINE_ASSERT(max_batch > 0, "network batch must be positive");
  const auto& layers = model.layers();
  const size_t L = layers.size();
  ROOFLINE_ASSERT(L > 0, "a model needs layers");
  ROOFLINE_ASSERT(numel(model.shape_before(L)) == model.classes(), "the last layer must give one logit per class");

  const std::int64_t np = model.param_count();
  params_ = ctx.empty({np}, DType::F32, "parameters");
  grads_ = ctx.empty({np}, DType::F32, "gradients");
  momentum_ = ctx.empty({np}, DType::F32, "momentum");
  // Gradients of the padding between parameter tensors are never written:
  // zero them once so the update leaves the padding at zero.
  ctx.memset_async(grads_.raw(), 0, grads_.nbytes());
  ctx.memset_async(momentum_.raw(), 0, momentum_.nbytes());
  ctx.memset_async(params_.raw(), 0, params_.nbytes());

  // Activation arena: one buffer per layer boundary and its gradient; a view
  // layer (Flatten) shares its input's buffers.
  std::vector<std::int64_t> act_off(L + 1, -1), dact_off(L + 1, -1);
  std::int64_t total = 0;
  for (size_t i = 0; i <= L; ++i) {
    if (i > 0 && layers[i - 1]->is_view()) {
      act_off[i] = act_off[i - 1];
      dact_off[i] = dact_off[i - 1];
      continue;
    }
    const std::int64_t n = Layer::align(max_batch * numel(model.shape_before(i)));
    act_off[i] = total;
    total += n;
    dact_off[i] = total;
    total += n;
  }
  std::int64_t ints = 0;
  std::vector<std::int64_t> scratch_off(L, -1);
  for (size_t i = 0; i < L; ++i) {
    std::int64_t n = layers[i]->scratch_ints(max_batch, model.shape_before(i));
    if (n > 0) {
      scratch_off[i] = ints;
      ints += Layer::align(n);
    }
  }
  arena_ = ctx.empty({total}, DType::F32, "activations");
  ctx.memset_async(arena_.raw(), 0, arena_.nbytes());
  if (ints > 0) scratch_ = ctx.empty({ints}, DType::I32, "layer scratch (max-pool argmax)");
  for (size_t i = 0; i <= L; ++i) {
    acts_.push_back(arena_.f32() + act_off[i]);
    dacts_.push_back(arena_.f32() + dact_off[i]);
  }
  for (size_t i = 0; i < L; ++i)
    scratch_ptrs_.push_back(scratch_off[i] >= 0 ? scratch_.i32() + scratch_off[i] : nullptr);
  std::int64_t infer_total = 0;
  for (size_t i = 0; i < L; ++i) {
    const std::int64_t n = layers[i]->inference_param_count(ctx);
    infer_off_.push_back(n > 0 ? infer_total : -1);
    infer_total += Layer::align(n);
  }
  if (infer_total > 0) {
    infer_ = ctx.empty({infer_total}, DType::F32, "inference copies of the parameters");
    ctx.memset_async(infer_.raw(), 0, infer_.nbytes());  // its pages touched here, not in prepare_inference
  }

  for (size_t i = 0; i < L; ++i)
    for (Pass p : {Pass::Forward, Pass::InputGrad, Pass::WeightGrad, Pass::Optimizer})
      names_.push_back(fmt::format("{}/{}/{}", model.name(), layers[i]->name(), to_string(p)));
  optimizer_range_ = fmt::format("{}/sgd/{}", model.name(), to_string(Pass::Optimizer));
  // The prefix ends after the last of the leading wide Linear layers (views between them run nothing).
  for (size_t i = 0; i < L; ++i) {
    if (layers[i]->is_view()) continue;
    const LayerSpec sp = layers[i]->spec();
    if (sp.kind != LayerSpec::Kind::Linear || ops::linear_joins_row_split(ctx, sp.in)) break;
    row_prefix_ = i + 1;
  }
  // One row's forward FLOPs in the row split, in a training step and in inference.
  for (size_t i = 0; i < L; ++i) {
    const double f = layers[i]->cost(1, model.shape_before(i)).forward.flops;
    infer_row_flops_ += f;
    if (i >= row_prefix_) train_row_flops_ += f;
  }
  ctx.synchronize();
}

const std::string& Network::range_name(size_t layer, Pass pass) const {
  return names_.at(layer * 4 + static_cast<size_t>(pass));
}

void Network::set_params(const std::vector<float>& host) {
  ROOFLINE_ASSERT(static_cast<std::int64_t>(host.size()) == model_.param_count(), "parameter count");
  ++params_version_;
  copy_bytes(params_.raw(), params_.device(), host.data(), Device::cpu(), params_.nbytes());
}

std::vector<float> Network::params() const { return params_.to_floats(); }
std::vector<float> Network::grads() const { return grads_.to_floats(); }

void Network::zero_momentum() { ctx_.memset_async(momentum_.raw(), 0, momentum_.nbytes()); }

bool Network::forward_conv_pool(size_t i, std::int64_t batch) {
  const auto& layers = model_.layers();
  if (!ctx_.is_cuda() || i + 1 >= layers.size()) return false;  // only the GPU has the pooled kernel
  const LayerSpec next = layers[i + 1]->spec();
  if (next.kind != LayerSpec::Kind::MaxPool2d) return false;
  Layer::Buffers b;
  b.in = acts_[i];
  b.out = acts_[i + 2];  // the pool's output
  b.params = params_.f32() + model_.param_offset(i);
  NvtxRange range(range_name(i, Pass::Forward));  // the pool's kernel is this one
  return layers[i]->forward_pooled(ctx_, batch, model_.shape_before(i), next, b);
}

void Network::forward(std::int64_t batch, bool grad_path) {
  ROOFLINE_ASSERT(batch > 0 && batch <= max_batch_, "batch exceeds the network's size");
  // On the fast CPU backend each thread runs every layer on its own rows (one
  // parallel region), in a training step after the leading layers that run
  // split by columns; elsewhere this is forward_range over all rows.
  const size_t prefix = grad_path ? row_prefix_ : 0;
  forward_range(0, prefix, 0, batch, grad_path);
  ops::for_row_chunks(
      ctx_, batch,
      [&](std::int64_t r0, std::int64_t r1) { forward_range(prefix, model_.layers().size(), r0, r1, grad_path); },
      grad_path ? train_row_flops_ : infer_row_flops_);
}

void Network::infer_probs(std::int64_t batch, float* probs) {
  ROOFLINE_ASSERT(batch > 0 && batch <= max_batch_, "batch exceeds the network's size");
  const auto& layers = model_.layers();
  const size_t L = layers.size();
  const std::int64_t classes = model_.classes();
  if (!ctx_.is_cuda()) {
    ops::for_row_chunks(ctx_, batch, [&](std::int64_t r0, std::int64_t r1) {
      forward_range(0, L, r0, r1, false);
      ops::softmax_forward(ctx_, {r1 - r0, classes}, probs + r0 * classes, logits() + r0 * classes);
    }, infer_row_flops_);
    return;
  }
  size_t done = 0;  // layers already run
  if (L >= 2) {
    const LayerSpec a = layers[L - 2]->spec(), c = layers[L - 1]->spec();
    if (a.kind == LayerSpec::Kind::Linear && c.kind == LayerSpec::Kind::Linear) {
      forward_range(0, L - 2, 0, batch, false);
      done = L - 2;
      const ops::LinearShape l1{batch, a.in, a.out, a.bias, a.act}, l2{batch, c.in, c.out, c.bias, c.act};
      const float* w1 = params_.f32() + model_.param_offset(L - 2);
      const float* w2 = params_.f32() + model_.param_offset(L - 1);
      const float* b1 = a.bias ? w1 + layers[L - 2]->bias_offset() : nullptr;
      const float* b2 = c.bias ? w2 + layers[L - 1]->bias_offset() : nullptr;
      NvtxRange range(range_name(L - 2, Pass::Forward));  // the head's one kernel
      if (ops::linear_softmax_head_forward(ctx_, l1, l2, probs, acts_[L - 2], w1, b1, w2, b2)) return;
    }
  }
  forward_range(done, L, 0, batch, false);
  ops::softmax_forward(ctx_, {batch, classes}, probs, logits());
}

bool Network::prepare_inference() {
  if (!infer_.defined()) return false;
  const auto& layers = model_.layers();
  for (size_t i = 0; i < layers.size(); ++i)
    if (infer_off_[i] >= 0)
      layers[i]->prepare_inference(ctx_, params_.f32() + model_.param_offset(i), infer_.f32() + infer_off_[i]);
  infer_version_ = params_version_;
  return true;
}

void Network::forward_range(size_t begin, size_t end, std::int64_t r0, std::int64_t r1, bool grad_path) {
  const auto& layers = model_.layers();
  const std::int64_t rows = r1 - r0;
  const bool copies = !grad_path && inference_prepared();
  for (size_t i = begin; i < end; ++i) {
    const Layer& l = *layers[i];
    if (l.is_view()) continue;
    if (!grad_path && i + 1 < end && r0 == 0 && forward_conv_pool(i, rows)) {
      ++i;  // the pool is done too
      continue;
    }
    NvtxRange range(range_name(i, Pass::Forward));
    Layer::Buffers b = buffers(i, r0, false);
    if (copies && infer_off_[i] >= 0) b.infer_params = infer_.f32() + infer_off_[i];
    l.forward(ctx_, rows, model_.shape_before(i), b);
  }
}

// A layer needs its input gradient only when a layer before it has parameters.
std::vector<bool> Network::input_grads_needed() const {
  const auto& layers = model_.layers();
  std::vector<bool> need_din(layers.size(), false);
  bool params_before = false;
  for (size_t i = 0; i < layers.size(); ++i) {
    need_din[i] = params_before;
    params_before = params_before || layers[i]->param_count() > 0;
  }
  return need_din;
}

void Network::backward(std::int64_t batch) {
  ROOFLINE_ASSERT(batch > 0 && batch <= max_batch_, "batch exceeds the network's size");
  const auto& layers = model_.layers();
  const std::vector<bool> need_din = input_grads_needed();
  if (ctx_.backend() == Backend::Cpu) {
    backward_rows_split(batch, need_din);
    for (size_t i = layers.size(); i-- > 0;) {
      if (layers[i]->is_view() || layers[i]->param_count() == 0) continue;
      NvtxRange range(range_name(i, Pass::WeightGrad));
      layers[i]->backward_params(ctx_, batch, model_.shape_before(i), buffers(i, 0, need_din[i]));
    }
    return;
  }
  for (size_t i = layers.size(); i-- > 0;) {
    const Layer& l = *layers[i];
    if (l.is_view()) continue;
    const Layer::Buffers b = buffers(i, 0, need_din[i]);
    {
      NvtxRange range(range_name(i, Pass::InputGrad));
      l.backward_input(ctx_, batch, model_.shape_before(i), b);
    }
    if (l.param_count() > 0) {
      NvtxRange range(range_name(i, Pass::WeightGrad));
      l.backward_weight(ctx_, batch, model_.shape_before(i), b);
    }
  }
}

// The fast CPU backend's backward splits each layer by what crosses rows: every
// layer's row part (activation masks, input gradients) on each thread's own rows
// in one parallel region; the parameter parts (sums over all rows) come after.
void Network::backward_rows_split(std::int64_t batch, const std::vector<bool>& need_din) {
  const auto& layers = model_.layers();
  ops::for_row_chunks(
      ctx_, batch,
      [&](std::int64_t r0, std::int64_t r1) {
        for (size_t i = layers.size(); i-- > 0;) {
          if (layers[i]->is_view()) continue;
          NvtxRange range(range_name(i, Pass::InputGrad));
          layers[i]->backward_rows(ctx_, r1 - r0, model_.shape_before(i), buffers(i, r0, need_din[i]));
        }
      },
      train_row_flops_);
}

void Network::backward_sgd(std::int64_t batch, const ops::SgdConfig& cfg, std::int32_t* step) {
  ROOFLINE_ASSERT(batch > 0 && batch <= max_batch_, "batch exceeds the network's size");
  if (!ops::fuses_weight_grad_sgd(ctx_)) {
    backward(batch);
    sgd_step(cfg, step);
    return;
  }
  ++params_version_;
  const auto& layers = model_.layers();
  const std::vector<bool> need_din = input_grads_needed();
  backward_rows_split(batch, need_din);
  // Parameter parts, last layer first: a layer that can updates its parameters in
  // the same pass (they are not read again this step: every input gradient is done).
  std::vector<bool> updated(layers.size(), false);
  for (size_t i = layers.size(); i-- > 0;) {
    if (layers[i]->is_view() || layers[i]->param_count() == 0) continue;
    const std::int64_t off = model_.param_offset(i);
    const Layer::Buffers b = buffers(i, 0, need_din[i]);
    NvtxRange range(range_name(i, Pass::WeightGrad));
    updated[i] = layers[i]->backward_params_sgd(ctx_, batch, model_.shape_before(i), b, params_.f32() + off,
                                                momentum_.f32() + off, cfg);
    if (!updated[i]) layers[i]->backward_params(ctx_, batch, model_.shape_before(i), b);
  }
  // The other layers' parameters: one update per run of consecutive blocks.
  NvtxRange range(optimizer_range_);
  const bool momentum = cfg.momentum != 0.0f;
  std::int64_t begin = 0, end = 0;  // the open run of parameter blocks (empty when equal)
  auto flush = [&] {
    if (end > begin)
      ops::sgd_update(ctx_, {end - begin, momentum}, params_.f32() + begin, grads_.f32() + begin,
                      momentum_.f32() + begin, cfg);
    begin = end = 0;
  };
  for (size_t i = 0; i < layers.size(); ++i) {
    if (layers[i]->param_count() == 0) continue;
    const std::int64_t off = model_.param_offset(i);
    if (updated[i]) {
      flush();
      continue;
    }
    if (end == begin) begin = off;
    end = off + layers[i]->param_count();
  }
  flush();
  if (step) ++*step;
}

// Layer i's views of the network's buffers from row r0 on: its input, output and
// their gradients (the input gradient only when `din`), parameters, gradients, scratch.
Layer::Buffers Network::buffers(size_t i, std::int64_t r0, bool din) const {
  const Shape& shape_in = model_.shape_before(i);
  const std::int64_t in = numel(shape_in), out = numel(model_.shape_before(i + 1));
  Layer::Buffers b;
  b.in = acts_[i] + r0 * in;          // (rows, in...)
  b.out = acts_[i + 1] + r0 * out;    // (rows, out...)
  b.dout = dacts_[i + 1] + r0 * out;  // (rows, out...)
  b.din = din ? dacts_[i] + r0 * in : nullptr;
  b.params = params_.f32() + model_.param_offset(i);
  b.grads = grads_.f32() + model_.param_offset(i);
  b.scratch = scratch_ptrs_[i] ? scratch_ptrs_[i] + r0 * model_.layers()[i]->scratch_ints(1, shape_in) : nullptr;
  return b;
}

void Network::sgd_step(const ops::SgdConfig& cfg, std::int32_t* step) {
  ++params_version_;
  NvtxRange range(optimizer_range_);
  ops::SgdShape s{model_.param_count(), cfg.momentum != 0.0f};
  ops::sgd_update(ctx_, s, params_.f32(), grads_.f32(), momentum_.f32(), cfg, step);
}

}  // namespace roofline::engine

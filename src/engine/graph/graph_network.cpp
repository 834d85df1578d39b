#include "roofline/engine/graph_network.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "roofline/core/error.hpp"
#include "roofline/engine/half.hpp"
#include "roofline/engine/ops_cnn.hpp"
#include "src/engine/cpu/thread_pool.hpp"
#include "src/engine/graph/graph_fold.hpp"
#include "src/engine/cuda/cuda_api.hpp"
#include "src/engine/graph/graph_plan.hpp"

namespace roofline::engine {

namespace {

constexpr std::int64_t align64(std::int64_t n) { return (n + 63) / 64 * 64; }

// (k, c, r, s) <-> (k, r, s, c): a convolution weight between torch's layout and NHWC's.
std::vector<float> to_krsc(const std::vector<float>& kcrs, const Shape& s) {
  const std::int64_t k = s[0], c = s[1], rs = s[2] * s[3];
  std::vector<float> out(kcrs.size());
  for (std::int64_t a = 0; a < k; ++a)
    for (std::int64_t b = 0; b < c; ++b)
      for (std::int64_t p = 0; p < rs; ++p) out[static_cast<size_t>((a * rs + p) * c + b)] = kcrs[static_cast<size_t>((a * c + b) * rs + p)];
  return out;
}
std::vector<float> to_kcrs(const std::vector<float>& krsc, const Shape& s) {
  const std::int64_t k = s[0], c = s[1], rs = s[2] * s[3];
  std::vector<float> out(krsc.size());
  for (std::int64_t a = 0; a < k; ++a)
    for (std::int64_t b = 0; b < c; ++b)
      for (std::int64_t p = 0; p < rs; ++p) out[static_cast<size_t>((a * c + b) * rs + p)] = krsc[static_cast<size_t>((a * rs + p) * c + b)];
  return out;
}


}  // namespace

GraphNetwork::GraphNetwork(const LayerGraph& graph, Context& ctx, std::int64_t max_batch, GraphOptions options)
    : graph_(graph), ctx_(ctx), max_batch_(max_batch), opt_(options) {
  ROOFLINE_ASSERT(max_batch > 0, "batch size");
  ROOFLINE_ASSERT(graph.output() >= 0, "a graph without an output");
  dtype_ = activation_dtype(opt_.precision);
  if (!ctx.is_cuda() && opt_.precision != Precision::FP32)
    throw Error(ErrorKind::Unsupported,
                fmt::format("{} runs on the GPU only; the CPU backends compute in fp32", to_string(opt_.precision)),
                "use --precision fp32 on the CPU");
  if (ctx.is_cuda()) {
    const auto [major, minor] = detail::cuda_compute_capability(ctx.cuda());
    if (const std::string why = precision_unsupported_reason(opt_.precision, major, minor); !why.empty())
      throw Error(ErrorKind::Unsupported, why, "use --precision fp16 or fp32 on this GPU");
  }
  format_ = opt_.format.value_or(default_format(ctx.backend(), opt_.precision));

  // Parameters and buffers.
  const auto& params = graph.params();
  // In NHWC, a convolution's weights are (k, r, s, c), and a Linear layer fed by
  // the flattening of a (c, h, w) map reads its inputs in (h, w, c) order: its
  // weight columns are stored that way (torch flattens (c, h, w)).
  channels_last_.assign(params.size(), Shape{});
  if (format_ == MemoryFormat::NHWC)
    for (const GraphNode& n : graph.nodes()) {
      if (n.op == NodeOp::Conv2d) channels_last_[static_cast<size_t>(n.params[0])] = params[static_cast<size_t>(n.params[0])].shape;
      if (n.op != NodeOp::Linear) continue;
      // Back through element-wise nodes (AlexNet's dropout) to a Flatten.
      int producer = graph.values()[static_cast<size_t>(n.inputs[0])].producer;
      while (producer >= 0 && (graph.nodes()[static_cast<size_t>(producer)].op == NodeOp::Dropout ||
                               graph.nodes()[static_cast<size_t>(producer)].op == NodeOp::ReLU))
        producer = graph.values()[static_cast<size_t>(graph.nodes()[static_cast<size_t>(producer)].inputs[0])].producer;
      if (producer < 0 || graph.nodes()[static_cast<size_t>(producer)].op != NodeOp::Flatten) continue;
      const Shape& map = graph.values()[static_cast<size_t>(graph.nodes()[static_cast<size_t>(producer)].inputs[0])].shape;
      if (map.size() == 3 && map[1] * map[2] > 1)
        channels_last_[static_cast<size_t>(n.params[0])] = {n.k, map[0], map[1], map[2]};
    }
  param_off_.assign(params.size(), 0);
  std::int64_t learnable = 0, buffers = 0;
  for (size_t i = 0; i < params.size(); ++i) {
    const std::int64_t n = numel(params[i].shape);
    if (params[i].learnable) {
      param_off_[i] = learnable;
      learnable += align64(n);
    } else {
      param_off_[i] = buffers;
      buffers += align64(n);
    }
  }
  learnable_floats_ = learnable;
  params_ = ctx.empty({learnable}, DType::F32, "parameters");
  memory_.params = params_.nbytes();
  if (dtype_ != DType::F32) {
    copy_ = ctx.empty({learnable}, dtype_, "low-precision weights");
    memory_.copies = copy_.nbytes();
  }
  state_ = ctx.empty({std::max<std::int64_t>(buffers, 64)}, DType::F32, "batch-norm running statistics");
  // Saved batch statistics per BatchNorm2d: mean (c) then 1/std (c).
  stats_off_.assign(graph.nodes().size(), -1);
  std::int64_t stats = 0;
  for (size_t i = 0; i < graph.nodes().size(); ++i)
    if (graph.nodes()[i].op == NodeOp::BatchNorm2d) {
      stats_off_[i] = stats;
      stats += align64(2 * graph.values()[static_cast<size_t>(graph.nodes()[i].output)].shape[0]);
    }
  stats_ = ctx.empty({std::max<std::int64_t>(stats, 64)}, DType::F32, "batch statistics");
  memory_.state = state_.nbytes() + stats_.nbytes();
  if (opt_.training) {
    grads_ = ctx.empty({learnable}, DType::F32, "gradients");
    ctx.memset_async(grads_.raw(), 0, grads_.nbytes());  // the padding stays zero
    opt_a_ = ctx.empty({learnable}, DType::F32, "optimizer state");
    ctx.memset_async(opt_a_.raw(), 0, opt_a_.nbytes());
    memory_.grads = grads_.nbytes();
    memory_.optimizer = opt_a_.nbytes();
    if (opt_.optimizer == OptimizerKind::AdamW) {
      opt_b_ = ctx.empty({learnable}, DType::F32, "optimizer state");
      ctx.memset_async(opt_b_.raw(), 0, opt_b_.nbytes());
      memory_.optimizer += opt_b_.nbytes();
    }
  }

  // Activations, gradients and scratch.
  make_fold();
  plan_ = std::make_unique<Plan>(
      make_plan(graph, max_batch, dtype_, opt_.training, fold_ ? fold_->partner : std::vector<int>{}));
  arena_ = ctx.empty({static_cast<std::int64_t>(std::max<size_t>(plan_->arena, 256))}, DType::U8, "activations");
  memory_.arena = arena_.nbytes();
  arena_unshared_ = plan_->unshared;
  const Shape& in = graph.input_shape();
  input_ = ctx.empty({max_batch, in[0], in[1], in[2]}, dtype_, "input batch");
  labels_ = ctx.empty({max_batch}, DType::I32, "labels");
  ctx.memset_async(labels_.raw(), 0, labels_.nbytes());
  const std::int64_t classes = graph.classes();
  logits32_ = ctx.empty({max_batch, classes}, DType::F32, "logits");
  dlogits32_ = ctx.empty({max_batch, classes}, DType::F32, "logit gradients");
  loss_ = ctx.empty({64}, DType::F32, "loss");
  step_ = ctx.empty({64}, DType::I32, "step counter");
  ctx.memset_async(step_.raw(), 0, step_.nbytes());
  memory_.io = input_.nbytes() + labels_.nbytes() + logits32_.nbytes() + dlogits32_.nbytes();
  init_loss_scale();

  for (const auto& n : graph.nodes())
    for (Pass p : {Pass::Forward, Pass::InputGrad, Pass::WeightGrad, Pass::Optimizer})
      names_.push_back(fmt::format("{}/{}/{}", graph.name(), n.name, to_string(p)));
  load_state(graph.init_params(0));
}

GraphNetwork::~GraphNetwork() = default;

MemoryFormat default_format(Backend backend, Precision p) {
  switch (backend) {
    case Backend::Cpu:
      return MemoryFormat::NHWC;
    case Backend::Cuda:
      return p == Precision::BF16 || p == Precision::FP16 ? MemoryFormat::NHWC : MemoryFormat::NCHW;
    case Backend::CpuRef:
      break;
  }
  return MemoryFormat::NCHW;
}

void* GraphNetwork::arena_at(int buffer) const {
  return static_cast<char*>(arena_.raw()) + plan_->buffers[static_cast<size_t>(buffer)].offset;
}

void* GraphNetwork::act(int value) const {
  const int b = plan_->act[static_cast<size_t>(value)];
  return b < 0 ? input_.raw() : arena_at(b);  // the input, or a view of it (the small MLP's flatten)
}
void* GraphNetwork::grad(int value) const {
  const int b = plan_->grad[static_cast<size_t>(value)];
  ROOFLINE_ASSERT(b >= 0, "a value without a gradient buffer");
  return arena_at(b);
}
void* GraphNetwork::temp(size_t node, size_t input) const {
  const int b = plan_->temp[node][input];
  return arena_at(b);
}
float* GraphNetwork::param(int p) const { return params_.f32() + param_off_[static_cast<size_t>(p)]; }
float* GraphNetwork::param_grad(int p) const { return grads_.f32() + param_off_[static_cast<size_t>(p)]; }
float* GraphNetwork::state_of(int p) const { return state_.f32() + param_off_[static_cast<size_t>(p)]; }
const void* GraphNetwork::weight(int p) const {
  if (dtype_ == DType::F32) return param(p);
  return static_cast<const char*>(copy_.raw()) + param_off_[static_cast<size_t>(p)] * 2;
}

void GraphNetwork::refresh_copy() {
  if (dtype_ == DType::F32) return;
  ops::cast(ctx_, {learnable_floats_, DType::F32, dtype_}, copy_.raw(), params_.raw());
}

void GraphNetwork::load_state(const std::vector<std::vector<float>>& tensors) {
  const auto& params = graph_.params();
  ROOFLINE_ASSERT(tensors.size() == params.size(), "state tensors");
  std::vector<float> learn(static_cast<size_t>(learnable_floats_), 0.0f), bufs(static_cast<size_t>(state_.numel()), 0.0f);
  for (size_t i = 0; i < params.size(); ++i) {
    const GraphParam& p = params[i];
    ROOFLINE_ASSERT(static_cast<std::int64_t>(tensors[i].size()) == numel(p.shape), "state tensor size: " + p.name);
    const std::vector<float> v =
        channels_last_[i].empty() ? tensors[i] : to_krsc(tensors[i], channels_last_[i]);
    auto& dst = p.learnable ? learn : bufs;
    std::copy(v.begin(), v.end(), dst.begin() + param_off_[i]);
  }
  copy_bytes(params_.raw(), params_.device(), learn.data(), Device::cpu(), learn.size() * 4);
  copy_bytes(state_.raw(), state_.device(), bufs.data(), Device::cpu(), bufs.size() * 4);
  refresh_copy();
  ctx_.synchronize();
  fold_weights();
}

std::vector<std::vector<float>> GraphNetwork::state() const {
  ctx_.synchronize();
  const std::vector<float> learn = params_.to_floats(), bufs = state_.to_floats();
  std::vector<std::vector<float>> out;
  for (size_t i = 0; i < graph_.params().size(); ++i) {
    const GraphParam& p = graph_.params()[i];
    const auto& src = p.learnable ? learn : bufs;
    std::vector<float> v(src.begin() + param_off_[i], src.begin() + param_off_[i] + numel(p.shape));
    out.push_back(channels_last_[i].empty() ? v : to_kcrs(v, channels_last_[i]));
  }
  return out;
}

std::vector<std::vector<float>> GraphNetwork::grads() const {
  ROOFLINE_ASSERT(opt_.training, "gradients of an inference network");
  ctx_.synchronize();
  const std::vector<float> g = grads_.to_floats();
  std::vector<std::vector<float>> out;
  for (size_t i = 0; i < graph_.params().size(); ++i) {
    const GraphParam& p = graph_.params()[i];
    if (!p.learnable) {
      out.emplace_back();
      continue;
    }
    std::vector<float> v(g.begin() + param_off_[i], g.begin() + param_off_[i] + numel(p.shape));
    out.push_back(channels_last_[i].empty() ? v : to_kcrs(v, channels_last_[i]));
  }
  return out;
}

void GraphNetwork::set_batch(const std::vector<float>& nchw, const std::vector<std::int32_t>& labels,
                             std::int64_t batch) {
  const Shape& s = graph_.input_shape();
  const std::int64_t c = s[0], hw = s[1] * s[2];
  ROOFLINE_ASSERT(batch <= max_batch_ && static_cast<std::int64_t>(nchw.size()) == batch * c * hw &&
                      static_cast<std::int64_t>(labels.size()) == batch,
                  "batch size");
  std::vector<float> x = nchw;
  if (format_ == MemoryFormat::NHWC)
    for (std::int64_t n = 0; n < batch; ++n)
      for (std::int64_t ch = 0; ch < c; ++ch)
        for (std::int64_t p = 0; p < hw; ++p)
          x[static_cast<size_t>((n * hw + p) * c + ch)] = nchw[static_cast<size_t>((n * c + ch) * hw + p)];
  if (dtype_ == DType::F32) {
    copy_bytes(input_.raw(), input_.device(), x.data(), Device::cpu(), x.size() * 4);
  } else {
    std::vector<std::uint16_t> h(x.size());
    for (size_t i = 0; i < x.size(); ++i) h[i] = dtype_ == DType::BF16 ? bf16_from_float(x[i]) : f16_from_float(x[i]);
    copy_bytes(input_.raw(), input_.device(), h.data(), Device::cpu(), h.size() * 2);
  }
  copy_bytes(labels_.raw(), labels_.device(), labels.data(), Device::cpu(), labels.size() * 4);
}

std::vector<float> GraphNetwork::logits(std::int64_t batch) const {
  ctx_.synchronize();
  std::vector<float> all = logits32_.to_floats();
  all.resize(static_cast<size_t>(batch * graph_.classes()));
  return all;
}

float GraphNetwork::loss() const {
  ctx_.synchronize();
  return loss_.to_floats()[0];
}

void GraphNetwork::forward(std::int64_t batch, bool training) {
  ROOFLINE_ASSERT(batch > 0 && batch <= max_batch_, "batch larger than the network was planned for");
  ROOFLINE_ASSERT(!training || opt_.training, "a training forward on an inference network");
  const fast::OpenMpJobs one_team(!ctx_.is_cuda());  // beside oneDNN's convolutions (thread_pool.hpp)
  for (size_t i = 0; i < graph_.nodes().size(); ++i) {
    NvtxRange range(range_name(i, Pass::Forward));
    forward_node(i, batch, training);
  }
  const int out = graph_.output();
  const std::int64_t n = batch * graph_.classes();
  if (dtype_ == DType::F32)
    ctx_.copy_async(logits32_.raw(), logits32_.device(), act(out), logits32_.device(), static_cast<size_t>(n) * 4);
  else
    ops::cast(ctx_, {n, dtype_, DType::F32}, logits32_.raw(), act(out));
}

void GraphNetwork::forward_node(size_t i, std::int64_t batch, bool training) {
  if (folded(i)) return forward_folded(i, batch);
  const GraphNode& n = graph_.nodes()[i];
  const Shape& in = graph_.values()[static_cast<size_t>(n.inputs[0])].shape;
  void* x = act(n.inputs[0]);
  void* y = act(n.output);
  const std::int64_t count = batch * numel(in);
  switch (n.op) {
    case NodeOp::Conv2d: {
      const auto s = conv_shape(n, in, batch, format_, dtype_, allows_tf32(opt_.precision));
      ops::conv2d_forward(ctx_, s, y, x, weight(n.params[0]), n.bias ? param(n.params[1]) : nullptr);
      break;
    }
    case NodeOp::Linear: {
      const auto s = linear_shape(n, in, batch, dtype_, allows_tf32(opt_.precision));
      ops::linear_forward(ctx_, s, y, x, weight(n.params[0]), n.bias ? param(n.params[1]) : nullptr);
      break;
    }
    case NodeOp::BatchNorm2d: {
      const auto s = batchnorm_shape(n, in, batch, format_, dtype_);
      const void* res = s.residual ? act(n.inputs[1]) : nullptr;
      if (training) {
        float* saved = stats_.f32() + stats_off_[i];
        ops::batchnorm_forward_train(ctx_, s, y, x, res, param(n.params[0]), param(n.params[1]), state_of(n.params[2]),
                                     state_of(n.params[3]), saved, saved + s.c);
      } else {
        ops::batchnorm_forward_eval(ctx_, s, y, x, res, param(n.params[0]), param(n.params[1]), state_of(n.params[2]),
                                    state_of(n.params[3]));
      }
      break;
    }
    case NodeOp::MaxPool2d: {
      const auto s = maxpool_shape(n, in, batch, format_, dtype_);
      // Only a training forward's backward reads the argmax.
      auto* argmax = training ? static_cast<std::int32_t*>(arena_at(plan_->argmax[i])) : nullptr;
      ops::maxpool2d_forward(ctx_, s, y, argmax, x);
      break;
    }
    case NodeOp::AdaptiveAvgPool2d: {
      const auto s = avgpool_shape(n, in, batch, format_, dtype_);
      ops::adaptive_avgpool2d_forward(ctx_, s, y, x);
      break;
    }
    case NodeOp::Add:
      ops::add_forward(ctx_, {count, n.act, dtype_}, y, x, act(n.inputs[1]));
      break;
    case NodeOp::ReLU:
      ops::activation_forward(ctx_, {count, ops::Activation::ReLU, dtype_}, y, x);
      break;
    case NodeOp::Flatten:
      ROOFLINE_ASSERT(x == y, "flatten is a view");
      break;
    case NodeOp::Dropout:
      if (x == y) break;  // an inference network's dropout is a view
      if (training)
        ops::dropout_forward(ctx_, {count, n.p, dtype_}, y, x, opt_.dropout_seed + i, step_.i32());
      else
        ctx_.copy_async(y, ctx_.device(), x, ctx_.device(), static_cast<size_t>(count) * dtype_size(dtype_));
      break;
  }
}

void GraphNetwork::loss_forward(std::int64_t batch) {
  const std::int64_t classes = graph_.classes();
  ops::LossStats stats;
  stats.step_loss = loss_.f32();
  ops::cross_entropy(ctx_, {batch, classes}, dlogits32_.f32(), logits32_.f32(), labels_.i32(),
                     1.0f / static_cast<float>(batch), stats);
  scale_loss_grad(batch * classes);
  const int out = graph_.output();
  const std::int64_t n = batch * classes;
  if (dtype_ == DType::F32)
    ctx_.copy_async(grad(out), ctx_.device(), dlogits32_.raw(), ctx_.device(), static_cast<size_t>(n) * 4);
  else
    ops::cast(ctx_, {n, DType::F32, dtype_}, grad(out), dlogits32_.raw());
}

void GraphNetwork::backward(std::int64_t batch) {
  ROOFLINE_ASSERT(opt_.training, "backward on an inference network");
  const fast::OpenMpJobs one_team(!ctx_.is_cuda());
  // Data-parallel: a bucket goes to the sync once its last gradient is
  // written, in bucket order (every rank issues the same collectives in the same order).
  std::vector<size_t> left(buckets_.size());
  for (size_t b = 0; b < buckets_.size(); ++b) left[b] = buckets_[b].params.size();
  size_t next = 0;
  for (size_t i = graph_.nodes().size(); i-- > 0;) {
    backward_node(i, batch);
    if (!sync_) continue;
    for (int p : graph_.nodes()[i].params)
      if (bucket_of_[size_t(p)] >= 0) --left[size_t(bucket_of_[size_t(p)])];
    for (; next < buckets_.size() && left[next] == 0; ++next)
      sync_->reduce(ctx_, static_cast<int>(next), grads_.f32() + bucket_range_[next].first, bucket_range_[next].second);
  }
  ROOFLINE_ASSERT(!sync_ || next == buckets_.size(), "a gradient bucket was never complete");
}

void GraphNetwork::set_grad_sync(dist::GradSync* sync, const dist::BucketPlanConfig& cfg) {
  if (!opt_.training)
    throw Error(ErrorKind::Usage, "data-parallel sync on an inference network", "build the network with training on");
  sync_ = sync;
  buckets_.clear();
  bucket_range_.clear();
  bucket_of_.assign(graph_.params().size(), -1);
  if (!sync) return;
  buckets_ = dist::plan_buckets(graph_, cfg);
  for (size_t b = 0; b < buckets_.size(); ++b) {
    const auto [lo, hi] = std::minmax_element(buckets_[b].params.begin(), buckets_[b].params.end());
    const std::int64_t first = param_off_[size_t(*lo)];
    const std::int64_t end = param_off_[size_t(*hi)] + numel(graph_.params()[size_t(*hi)].shape);
    bucket_range_.emplace_back(first, end - first);
    for (int p : buckets_[b].params) bucket_of_[size_t(p)] = static_cast<int>(b);
  }
  sync->broadcast(ctx_, params_.f32(), learnable_floats_);
  if (dtype_ != DType::F32) refresh_copy();
}

void GraphNetwork::backward_node(size_t i, std::int64_t batch) {
  const GraphNode& n = graph_.nodes()[i];
  const Shape& in = graph_.values()[static_cast<size_t>(n.inputs[0])].shape;
  const auto& edges = plan_->edge[i];
  const std::int64_t count = batch * numel(in);
  const size_t bytes = static_cast<size_t>(count) * dtype_size(dtype_);
  void* dy = grad(n.output);
  // Where input k's gradient goes (null: none), and what to do after.
  auto target = [&](size_t k) -> void* {
    switch (edges[k]) {
      case GradEdge::Write:
        return grad(n.inputs[k]);
      case GradEdge::Accumulate:
        return temp(i, k);
      default:
        return nullptr;
    }
  };
  auto finish = [&](size_t k) {
    const int v = n.inputs[k];
    const std::int64_t c = batch * numel(graph_.values()[static_cast<size_t>(v)].shape);
    switch (edges[k]) {
      case GradEdge::Accumulate:
        ops::add_forward(ctx_, {c, ops::Activation::None, dtype_}, grad(v), grad(v), temp(i, k));
        break;
      case GradEdge::Copy:
        ctx_.copy_async(grad(v), ctx_.device(), dy, ctx_.device(), static_cast<size_t>(c) * dtype_size(dtype_));
        break;
      case GradEdge::AddOutput:
        ops::add_forward(ctx_, {c, ops::Activation::None, dtype_}, grad(v), grad(v), dy);
        break;
      default:
        break;
    }
  };
  const bool masked = n.act != ops::Activation::None && n.op != NodeOp::BatchNorm2d;
  if (masked) {
    NvtxRange range(range_name(i, Pass::InputGrad));
    const std::int64_t out_count = batch * numel(graph_.values()[static_cast<size_t>(n.output)].shape);
    ops::activation_backward(ctx_, {out_count, n.act, dtype_}, dy, dy, act(n.output));
  }
  switch (n.op) {
    case NodeOp::Conv2d: {
      const auto s = conv_shape(n, in, batch, format_, dtype_, allows_tf32(opt_.precision));
      if (void* dx = target(0)) {
        NvtxRange range(range_name(i, Pass::InputGrad));
        ops::conv2d_backward_input(ctx_, s, dx, dy, weight(n.params[0]));
      }
      NvtxRange range(range_name(i, Pass::WeightGrad));
      ops::conv2d_backward_weight(ctx_, s, param_grad(n.params[0]), n.bias ? param_grad(n.params[1]) : nullptr, dy,
                                  act(n.inputs[0]));
      break;
    }
    case NodeOp::Linear: {
      const auto s = linear_shape(n, in, batch, dtype_, allows_tf32(opt_.precision));
      if (void* dx = target(0)) {
        NvtxRange range(range_name(i, Pass::InputGrad));
        ops::linear_backward_input(ctx_, s, dx, dy, weight(n.params[0]));
      }
      NvtxRange range(range_name(i, Pass::WeightGrad));
      ops::linear_backward_weight(ctx_, s, param_grad(n.params[0]), n.bias ? param_grad(n.params[1]) : nullptr, dy,
                                  act(n.inputs[0]));
      break;
    }
    case NodeOp::BatchNorm2d: {
      NvtxRange range(range_name(i, Pass::InputGrad));
      const auto s = batchnorm_shape(n, in, batch, format_, dtype_);
      const float* saved = stats_.f32() + stats_off_[i];
      void* dx = target(0);
      ROOFLINE_ASSERT(dx != nullptr, "a batch norm of the network's input");
      ops::batchnorm_backward(ctx_, s, dx, param_grad(n.params[0]), param_grad(n.params[1]), dy, act(n.output),
                              act(n.inputs[0]), param(n.params[0]), saved, saved + s.c);
      break;
    }
    case NodeOp::MaxPool2d: {
      NvtxRange range(range_name(i, Pass::InputGrad));
      const auto s = maxpool_shape(n, in, batch, format_, dtype_);
      const auto* argmax = static_cast<const std::int32_t*>(arena_at(plan_->argmax[i]));
      if (void* dx = target(0)) ops::maxpool2d_backward(ctx_, s, dx, dy, argmax);
      break;
    }
    case NodeOp::AdaptiveAvgPool2d: {
      NvtxRange range(range_name(i, Pass::InputGrad));
      const auto s = avgpool_shape(n, in, batch, format_, dtype_);
      if (void* dx = target(0)) ops::adaptive_avgpool2d_backward(ctx_, s, dx, dy);
      break;
    }
    case NodeOp::ReLU:
      if (void* dx = target(0)) {
        if (dx != dy) ctx_.copy_async(dx, ctx_.device(), dy, ctx_.device(), bytes);
      }
      break;
    case NodeOp::Dropout:
      if (void* dx = target(0)) {
        NvtxRange range(range_name(i, Pass::InputGrad));
        ops::dropout_backward(ctx_, {count, n.p, dtype_}, dx, dy, opt_.dropout_seed + i, step_.i32());
      }
      break;
    case NodeOp::Add:
    case NodeOp::Flatten:
      break;
  }
  for (size_t k = 0; k < n.inputs.size(); ++k) finish(k);
}

void GraphNetwork::optimizer_step() {
  ROOFLINE_ASSERT(opt_.training, "optimizer step on an inference network");
  NvtxRange range(graph_.name() + "/optimizer/optimizer");
  const fast::OpenMpJobs one_team(!ctx_.is_cuda());
  if (sync_) sync_->finish(ctx_);
  ops::ParamCopy copy;
  if (dtype_ != DType::F32) copy = {copy_.raw(), dtype_};
  const ops::GradScale scale = check_grads();  // {} without loss scaling
  if (opt_.optimizer == OptimizerKind::Sgd) {
    ops::SgdShape s{learnable_floats_, opt_.sgd.momentum != 0.0f};
    ops::sgd_update(ctx_, s, params_.f32(), grads_.f32(), opt_a_.f32(), opt_.sgd, step_.i32(), copy, scale);
  } else {
    ops::adamw_update(ctx_, {learnable_floats_}, params_.f32(), grads_.f32(), opt_a_.f32(), opt_b_.f32(), opt_.adamw,
                      step_.i32(), step_.i32(), copy, scale);
  }
  update_loss_scale();
}

void GraphNetwork::train_step(std::int64_t batch) {
  const fast::OpenMpJobs one_team(!ctx_.is_cuda());
  forward(batch, true);
  loss_forward(batch);
  backward(batch);
  optimizer_step();
}

void GraphNetwork::capture_train_step(std::int64_t batch) {
  train_step(batch);  // plans and workspaces are made on the first call, outside the capture
  ctx_.synchronize();
  step_graph_.capture(ctx_, [&] { train_step(batch); });
}

void GraphNetwork::capture_inference(std::int64_t batch) {
  forward(batch, false);
  ctx_.synchronize();
  step_graph_.capture(ctx_, [&] { forward(batch, false); });
}

void GraphNetwork::replay() const { step_graph_.launch(ctx_); }

}  // namespace roofline::engine

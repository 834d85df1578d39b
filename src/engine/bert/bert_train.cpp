// BertForQuestionAnswering's fine-tuning step (roofline/engine/bert.hpp):
// the forward with every layer's activations kept, the span loss, the
// backward layer by layer in reverse, and one AdamW update over the flat
// parameters (which also writes their 16-bit copy for the next forward).
// The Impl and the forward are bert_model.cpp's; this file is the backward.
#include <fmt/format.h>

#include <algorithm>

#include "roofline/core/error.hpp"
#include "roofline/engine/bert.hpp"
#include "roofline/engine/ops.hpp"
#include "roofline/engine/ops_cnn.hpp"
#include "roofline/engine/ops_optim.hpp"
#include "roofline/engine/ops_transformer.hpp"
#include "src/engine/bert/bert_impl.hpp"
#include "src/engine/cpu/thread_pool.hpp"

namespace roofline::engine::bert {

using std::int64_t;

bool BertQA::training() const { return impl_->training; }

void BertQA::enable_training(const BertTrainConfig& tc) {
  Impl& d = *impl_;
  d.train = tc;
  if (d.training) return;
  d.training = true;
  upload_params();  // every parameter in fp32 now: the master copy AdamW updates
  const int64_t n = d.n_params;
  d.grad = ctx_.empty({n}, DType::F32, "BERT gradients");
  d.m = ctx_.empty({n}, DType::F32, "AdamW state");
  d.v = ctx_.empty({n}, DType::F32, "AdamW state");
  ctx_.memset_async(d.m.raw(), 0, d.m.nbytes());
  ctx_.memset_async(d.v.raw(), 0, d.v.nbytes());
  d.step = ctx_.empty({1}, DType::I32, "step counter");
  ctx_.memset_async(d.step.raw(), 0, 4);
  d.loss = ctx_.empty({1}, DType::F32, "loss");
  ctx_.memset_async(d.loss.raw(), 0, 4);
  d.capacity = 0;  // stage() allocates one activation set per layer from here on
  d.staged = BertBatch{};
  ctx_.synchronize();
}

void BertQA::stage_targets(const std::vector<std::int32_t>& start, const std::vector<std::int32_t>& end) {
  Impl& d = *impl_;
  if (!d.training) throw Error(ErrorKind::Internal, "BertQA::stage_targets before enable_training()");
  const BertBatch& b = d.staged;
  if (b.tokens == 0) throw Error(ErrorKind::Internal, "BertQA::stage_targets before stage()");
  if (static_cast<int64_t>(start.size()) != b.batch || static_cast<int64_t>(end.size()) != b.batch)
    throw Error(ErrorKind::Input,
                fmt::format("{} start and {} end positions for a batch of {} sequences", start.size(), end.size(),
                            b.batch),
                "give one answer span per sequence");
  for (int64_t i = 0; i < b.batch; ++i)
    for (const auto p : {start[size_t(i)], end[size_t(i)]})
      if (p < 0 || p >= b.padded)
        throw Error(ErrorKind::Input,
                    fmt::format("answer position {} of sequence {} is outside its {} positions", p, i, b.padded),
                    "answer positions index the tokenized sequence, from 0");
  d.start_pos = ctx_.empty({b.batch}, DType::I32, "answer starts");
  d.end_pos = ctx_.empty({b.batch}, DType::I32, "answer ends");
  copy_bytes(d.start_pos.raw(), d.start_pos.device(), start.data(), Device::cpu(), start.size() * 4);
  copy_bytes(d.end_pos.raw(), d.end_pos.device(), end.data(), Device::cpu(), end.size() * 4);
  d.targets_staged = true;
  d.train_graph.reset();
}

void BertQA::set_grad_sync(dist::GradSync* sync) {
  Impl& d = *impl_;
  if (!d.training)
    throw Error(ErrorKind::Usage, "data-parallel BERT before enable_training()", "call enable_training() first");
  d.sync = sync;
  d.sync_ranges.clear();
  d.train_graph.reset();
  if (!sync) return;
  const auto span = [](const DevLinear& l) {
    return std::pair{std::min(l.w, l.b), std::max(l.w + l.shape.in * l.shape.out, l.b + l.shape.out)};
  };
  d.sync_ranges.push_back(span(d.qa));
  for (size_t l = d.layers.size(); l-- > 0;) {
    const DevLayer& L = d.layers[l];
    std::pair<std::int64_t, std::int64_t> r = span(L.qkv);
    for (const DevLinear* x : {&L.attn_out, &L.inter, &L.out}) {
      const auto s = span(*x);
      r = {std::min(r.first, s.first), std::max(r.second, s.second)};
    }
    d.sync_ranges.push_back(r);
  }
  d.sync_ranges.push_back({0, d.n_fp32});
  // The buckets must tile the parameters exactly: no gradient averaged twice or left out.
  auto sorted = d.sync_ranges;
  std::sort(sorted.begin(), sorted.end());
  std::int64_t at = 0;
  for (const auto& [lo, hi] : sorted) {
    ROOFLINE_ASSERT(lo == at && hi > lo, "BERT's gradient buckets do not tile its parameters");
    at = hi;
  }
  ROOFLINE_ASSERT(at == d.n_params, "BERT's gradient buckets do not cover its parameters");
  sync->broadcast(ctx_, d.p32.f32(), d.n_params);
  if (dtype_ != DType::F32) ops::cast(ctx_, {d.n_params, DType::F32, dtype_}, d.plow.raw(), d.p32.raw());
}

void BertQA::backward() {
  Impl& d = *impl_;
  size_t bucket = 0;  // data-parallel: the next bucket to hand over
  const auto done = [&] {
    if (!d.sync) return;
    const auto [lo, hi] = d.sync_ranges[bucket];
    d.sync->reduce(ctx_, static_cast<int>(bucket), d.g32(lo), hi - lo);
    ++bucket;
  };
  const BertBatch& b = d.staged;
  const int64_t T = b.tokens, h = cfg_.hidden, f = cfg_.intermediate;
  const fast::OpenMpJobs one_team(ctx_.backend() == Backend::Cpu);
  ops::SpanLossShape ls{b.batch, b.padded, dtype_};
  ops::span_loss(ctx_, ls, d.loss.f32(), d.dlogits, d.logits, d.start_pos.i32(), d.end_pos.i32());
  // dpre: the gradient at the layer's output; din (may be null): the gradient at its input, overwritten.
  auto linear_back = [&](const DevLinear& l, void* din, const void* dpre, const void* in) {
    ops::LinearShape s = l.shape;
    s.n = T;
    ops::linear_backward_weight(ctx_, s, d.g32(l.w), d.g32(l.b), dpre, in);
    if (din) ops::linear_backward_input(ctx_, s, din, dpre, d.low(l.w, dtype_));
  };
  const bool drop = d.train.dropout && cfg_.hidden_dropout > 0;
  // The forward's sites in order: the embeddings' (0), then each layer's attention output (1 + 2l) and output (2 + 2l).
  auto undrop = [&](void* out, const void* g, std::uint64_t site) -> const void* {
    if (!drop) return g;
    ops::dropout_backward(ctx_, {T * h, cfg_.hidden_dropout, dtype_}, out, g, d.train.seed * 1000003ull + site,
                          d.step.i32());
    return out;
  };
  const ops::EltwiseShape add{T * h, ops::Activation::None, dtype_};
  ops::LayerNormShape ln{T, h, cfg_.layer_norm_eps, true, dtype_};
  const ops::AttentionShape as = attention_shape(cfg_, b, dtype_, tf32_);

  linear_back(d.qa, d.dx, d.dlogits, d.acts.back().xout);  // dx: ∂loss/∂(the last layer's output)
  done();
  for (size_t l = d.layers.size(); l-- > 0;) {
    const DevLayer& L = d.layers[l];
    const Acts& A = d.acts[l];
    // x_out = LN2(o + x1): dsum = ∂/∂(o + x1)
    ops::layernorm_backward(ctx_, ln, d.dsum, d.g32(L.ln2_g), d.g32(L.ln2_b), d.dx, A.o, A.x1, d.f32(L.ln2_g),
                            A.mean2, A.rstd2);
    const void* d_o = undrop(d.dtmp, d.dsum, 2 + 2 * l);
    linear_back(L.out, d.dact, d_o, A.act);
    ops::gelu_backward(ctx_, {T * f, dtype_}, d.dact, d.dact, A.pre);
    linear_back(L.inter, d.dtmp, d.dact, A.x1);
    ops::add_forward(ctx_, add, d.dx, d.dsum, d.dtmp);  // ∂/∂x1: through the residual and the MLP
    // x1 = LN1(a + x_in)
    ops::layernorm_backward(ctx_, ln, d.dsum, d.g32(L.ln1_g), d.g32(L.ln1_b), d.dx, A.a, A.xin, d.f32(L.ln1_g),
                            A.mean1, A.rstd1);
    const void* d_a = undrop(d.dtmp, d.dsum, 1 + 2 * l);
    linear_back(L.attn_out, d.dctx, d_a, A.ctx);
    ops::attention_backward(ctx_, as, d.dqkv, d.dctx, A.qkv, A.ctx, A.lse, d.start.i32(), d.len.i32());
    linear_back(L.qkv, d.dtmp, d.dqkv, A.xin);
    ops::add_forward(ctx_, add, d.dx, d.dsum, d.dtmp);  // ∂/∂x_in
    done();  // this layer's Linear weights and biases
  }
  const void* d_emb = undrop(d.dtmp, d.dx, 0);
  ln.residual = false;
  ops::layernorm_backward(ctx_, ln, d.dsum, d.g32(d.emb_g), d.g32(d.emb_b), d_emb, d.emb, nullptr, d.f32(d.emb_g),
                          d.mean0, d.rstd0);
  ops::EmbeddingShape es{T, h, cfg_.vocab_size, cfg_.max_positions, cfg_.type_vocab, dtype_, cfg_.pad_token_id};
  ops::embeddings_backward(ctx_, es, d.g32(d.word), d.g32(d.pos), d.g32(d.type), d.dsum, d.ids.i32(),
                           d.positions.i32(), d.type_ids.i32());
  done();  // the fp32 tensors: embeddings and every LayerNorm
}

void BertQA::train_step() {
  Impl& d = *impl_;
  if (!d.training) throw Error(ErrorKind::Internal, "BertQA::train_step before enable_training()");
  if (!d.targets_staged) throw Error(ErrorKind::Internal, "BertQA::train_step before stage_targets()");
  forward_pass(true);
  backward();
  if (d.sync) d.sync->finish(ctx_);
  const ops::ParamCopy copy{dtype_ == DType::F32 ? nullptr : d.plow.raw(), dtype_};
  ops::adamw_update(ctx_, {d.n_params}, d.p32.f32(), d.grad.f32(), d.m.f32(), d.v.f32(), d.train.adamw,
                    d.step.i32(), d.step.i32(), copy);
}

void BertQA::train_step_graph() {
  if (!ctx_.is_cuda()) return train_step();
  if (!impl_->train_graph.ready()) impl_->train_graph.capture(ctx_, [&] { train_step(); });
  impl_->train_graph.launch(ctx_);
}

float BertQA::last_loss() const {
  ctx_.synchronize();
  float v = 0;
  copy_bytes(&v, Device::cpu(), impl_->loss.raw(), impl_->loss.device(), 4);
  return v;
}

namespace {

std::vector<std::vector<float>> by_tensor(const Tensor& flat, const std::vector<int64_t>& offset,
                                          const std::vector<std::vector<float>>& shapes) {
  std::vector<float> all(static_cast<size_t>(flat.numel()));
  copy_bytes(all.data(), Device::cpu(), flat.raw(), flat.device(), all.size() * 4);
  std::vector<std::vector<float>> out;
  for (size_t i = 0; i < shapes.size(); ++i)
    out.emplace_back(all.begin() + offset[i], all.begin() + offset[i] + static_cast<int64_t>(shapes[i].size()));
  return out;
}

}  // namespace

std::vector<std::vector<float>> BertQA::gradients() const {
  if (!impl_->training) throw Error(ErrorKind::Internal, "BertQA::gradients before enable_training()");
  ctx_.synchronize();
  return by_tensor(impl_->grad, impl_->offset, host_);
}

std::vector<std::vector<float>> BertQA::parameters() const {
  ctx_.synchronize();
  if (impl_->p32.numel() != impl_->n_params) return host_;  // a 16-bit inference model: the host copy is current
  return by_tensor(impl_->p32, impl_->offset, host_);
}

}  // namespace roofline::engine::bert

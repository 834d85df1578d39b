// BertForQuestionAnswering on the engine's ops: see roofline/engine/bert.hpp.
#include "roofline/engine/bert.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "roofline/core/error.hpp"
#include "roofline/engine/half.hpp"
#include "roofline/engine/ops.hpp"
#include "roofline/engine/ops_cnn.hpp"
#include "roofline/engine/ops_transformer.hpp"
#include "roofline/engine/rng.hpp"
#include "src/engine/bert/bert_impl.hpp"
#include "src/engine/cpu/thread_pool.hpp"

namespace roofline::engine::bert {

using std::int64_t;

// ---- Batches ------------------------------------------------------------------
BertBatch BertBatch::make(const std::vector<std::vector<std::int32_t>>& ids,
                          const std::vector<std::vector<std::int32_t>>& type_ids, bool packed, std::int32_t pad_id) {
  if (ids.empty()) throw_usage("an empty batch", "give at least one sequence");
  if (!type_ids.empty() && type_ids.size() != ids.size())
    throw Error(ErrorKind::Internal, "token type ids for a different number of sequences than the ids");
  BertBatch b;
  b.batch = static_cast<int64_t>(ids.size());
  int64_t longest = 0;
  for (const auto& s : ids) {
    if (s.empty()) throw Error(ErrorKind::Input, "an empty sequence in the batch", "every sequence needs a token");
    longest = std::max<int64_t>(longest, static_cast<int64_t>(s.size()));
  }
  b.padded = packed ? 0 : longest;
  for (size_t i = 0; i < ids.size(); ++i) {
    const int64_t n = static_cast<int64_t>(ids[i].size()), rows = packed ? n : longest;
    if (!type_ids.empty() && type_ids[i].size() != ids[i].size())
      throw Error(ErrorKind::Internal, "token type ids of another length than the ids");
    b.start.push_back(static_cast<std::int32_t>(b.tokens));
    b.len.push_back(static_cast<std::int32_t>(n));
    for (int64_t t = 0; t < rows; ++t) {
      b.ids.push_back(t < n ? ids[i][size_t(t)] : pad_id);
      b.type_ids.push_back(t < n && !type_ids.empty() ? type_ids[i][size_t(t)] : 0);
      b.positions.push_back(static_cast<std::int32_t>(t));
    }
    b.tokens += rows;
  }
  return b;
}

int64_t BertBatch::longest() const {
  int64_t m = 0;
  for (auto l : len) m = std::max<int64_t>(m, l);
  return m;
}

double BertBatch::attention_pairs() const {
  double p = 0;
  for (auto l : len) p += double(padded > 0 ? padded : l) * double(l);
  return p;
}

// ---- The state_dict ------------------------------------------------------------
std::vector<ExpectedTensor> bert_qa_tensors(const BertConfig& c) {
  const int64_t h = c.hidden, f = c.intermediate;
  std::vector<ExpectedTensor> t = {{"bert.embeddings.word_embeddings.weight", {c.vocab_size, h}},
                                   {"bert.embeddings.position_embeddings.weight", {c.max_positions, h}},
                                   {"bert.embeddings.token_type_embeddings.weight", {c.type_vocab, h}},
                                   {"bert.embeddings.LayerNorm.weight", {h}},
                                   {"bert.embeddings.LayerNorm.bias", {h}}};
  for (int64_t l = 0; l < c.layers; ++l) {
    const std::string p = fmt::format("bert.encoder.layer.{}.", l);
    for (const char* m : {"attention.self.query", "attention.self.key", "attention.self.value",
                          "attention.output.dense"}) {
      t.push_back({p + m + ".weight", {h, h}});
      t.push_back({p + m + ".bias", {h}});
    }
    t.push_back({p + "attention.output.LayerNorm.weight", {h}});
    t.push_back({p + "attention.output.LayerNorm.bias", {h}});
    t.push_back({p + "intermediate.dense.weight", {f, h}});
    t.push_back({p + "intermediate.dense.bias", {f}});
    t.push_back({p + "output.dense.weight", {h, f}});
    t.push_back({p + "output.dense.bias", {h}});
    t.push_back({p + "output.LayerNorm.weight", {h}});
    t.push_back({p + "output.LayerNorm.bias", {h}});
  }
  t.push_back({"qa_outputs.weight", {2, h}});
  t.push_back({"qa_outputs.bias", {2}});
  return t;
}

namespace {
// Tensors older checkpoints carry that the model does not use (position ids are a buffer).
bool ignorable(const std::string& name) { return name == "bert.embeddings.position_ids"; }
}  // namespace

// ---- Device state ----------------------------------------------------------------
BertQA::BertQA(const BertConfig& cfg, Context& ctx, DType dtype, bool tf32)
    : cfg_(cfg), ctx_(ctx), dtype_(dtype), tf32_(tf32), impl_(std::make_unique<Impl>()) {
  cfg_.validate();
  if (!ctx.is_cuda() && dtype != DType::F32)
    throw_unsupported(fmt::format("{} activations run on the GPU only", to_string(dtype)),
                      "use --precision fp32 on the CPU, or --device gpu");
  for (const auto& t : bert_qa_tensors(cfg_)) host_.emplace_back(static_cast<size_t>(numel(t.shape)), 0.0f);
  init_random(0);
}

BertQA::~BertQA() = default;

int64_t BertQA::parameter_count() const {
  int64_t n = 0;
  for (const auto& t : host_) n += static_cast<int64_t>(t.size());
  return n;
}

std::int64_t BertQA::device_bytes() const {
  const Impl& d = *impl_;
  size_t n = 0;
  auto add = [&](const Tensor& t) { n += t.defined() ? t.nbytes() : 0; };
  for (const Tensor* t : {&d.p32, &d.plow, &d.ids, &d.type_ids, &d.positions, &d.start, &d.len, &d.grad, &d.m, &d.v,
                          &d.step, &d.loss, &d.start_pos, &d.end_pos})
    add(*t);
  for (const Tensor& t : d.buffers) add(t);
  return static_cast<std::int64_t>(n);
}

void BertQA::init_random(std::uint64_t seed) {
  const auto names = bert_qa_tensors(cfg_);
  for (size_t i = 0; i < names.size(); ++i) {
    Rng r(seed * 1000003ull + i);
    const std::string& n = names[i].name;
    auto& v = host_[i];
    const bool ln = n.find("LayerNorm") != std::string::npos;
    const bool bias = n.size() > 5 && n.compare(n.size() - 5, 5, ".bias") == 0;
    if (ln && !bias) std::fill(v.begin(), v.end(), 1.0f);
    else if (bias) std::fill(v.begin(), v.end(), 0.0f);
    else
      for (auto& x : v) x = 0.02f * r.normal();
    if (n == "bert.embeddings.word_embeddings.weight" && cfg_.pad_token_id >= 0 &&
        cfg_.pad_token_id < cfg_.vocab_size)
      std::fill_n(v.begin() + cfg_.pad_token_id * cfg_.hidden, cfg_.hidden, 0.0f);
  }
  upload_params();
}

void BertQA::load(const SafetensorsFile& file) {
  const auto expected = bert_qa_tensors(cfg_);
  CheckpointMismatch m = match_checkpoint(file, expected);
  m.unexpected.erase(std::remove_if(m.unexpected.begin(), m.unexpected.end(), ignorable), m.unexpected.end());
  if (!m.ok())
    throw Error(ErrorKind::Input,
                fmt::format("{} is not a BertForQuestionAnswering checkpoint of this configuration (hidden {}, {} "
                            "layers, vocabulary {}): {}",
                            file.source(), cfg_.hidden, cfg_.layers, cfg_.vocab_size, m.summary()),
                "give the checkpoint folder whose config.json describes these weights (a BertForQuestionAnswering "
                "export: model.safetensors beside config.json)");
  for (size_t i = 0; i < expected.size(); ++i)
    file.read_f32(expected[i].name, host_[i].data(), static_cast<int64_t>(host_[i].size()));
  upload_params();
}

void BertQA::set_parameters(const std::vector<std::vector<float>>& state) {
  const auto expected = bert_qa_tensors(cfg_);
  if (state.size() != expected.size())
    throw Error(ErrorKind::Input, fmt::format("{} tensors for a model of {}", state.size(), expected.size()),
                "give every tensor of bert_qa_tensors(), in its order");
  for (size_t i = 0; i < state.size(); ++i)
    if (static_cast<int64_t>(state[i].size()) != numel(expected[i].shape))
      throw Error(ErrorKind::Input,
                  fmt::format("{} has {} values, not {}", expected[i].name, state[i].size(), numel(expected[i].shape)),
                  "give every tensor of bert_qa_tensors(), in its order");
  host_ = state;
  upload_params();
}

namespace {

Tensor upload(Context& ctx, const float* v, int64_t n, DType dtype, const char* what) {
  Tensor t = ctx.empty({n}, dtype, what);
  if (dtype == DType::F32) {
    copy_bytes(t.raw(), t.device(), v, Device::cpu(), static_cast<size_t>(n) * 4);
    return t;
  }
  std::vector<std::uint16_t> h(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) h[size_t(i)] = dtype == DType::BF16 ? bf16_from_float(v[i]) : f16_from_float(v[i]);
  copy_bytes(t.raw(), t.device(), h.data(), Device::cpu(), static_cast<size_t>(n) * 2);
  return t;
}

bool read_in_fp32(const std::string& name) {
  return name.find("LayerNorm") != std::string::npos || name.find("embeddings.") != std::string::npos;
}

}  // namespace

void BertQA::upload_params() {
  Impl& d = *impl_;
  const auto names = bert_qa_tensors(cfg_);
  // The flat layout: fp32-read tensors in state_dict order, then the rest, query/key/value biases moved after
  // the value weight so that the stacked weight and the stacked bias are each contiguous.
  d.offset.assign(names.size(), -1);
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < names.size(); ++i) index[names[i].name] = i;
  int64_t at = 0;
  auto place = [&](size_t i) {
    d.offset[i] = at;
    at += numel(names[i].shape);
  };
  for (size_t i = 0; i < names.size(); ++i)
    if (read_in_fp32(names[i].name)) place(i);
  d.n_fp32 = at;
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string& n = names[i].name;
    if (read_in_fp32(n) || d.offset[i] >= 0) continue;
    const auto self = n.find("attention.self.");
    if (self != std::string::npos) {  // the three weights, then the three biases
      const std::string p = n.substr(0, self + 15);
      for (const char* part : {"query.weight", "key.weight", "value.weight", "query.bias", "key.bias", "value.bias"})
        place(index.at(p + part));
      continue;
    }
    place(i);
  }
  d.n_params = at;
  std::vector<float> flat(static_cast<size_t>(at));
  for (size_t i = 0; i < names.size(); ++i) std::copy(host_[i].begin(), host_[i].end(), flat.begin() + d.offset[i]);
  const bool full32 = dtype_ == DType::F32 || d.training;
  d.p32 = upload(ctx_, flat.data(), full32 ? d.n_params : d.n_fp32, DType::F32, "BERT parameters (fp32)");
  d.plow = dtype_ == DType::F32 ? Tensor() : upload(ctx_, flat.data(), d.n_params, dtype_, "BERT parameters");

  auto off = [&](const std::string& n) { return d.offset[index.at(n)]; };
  const int64_t h = cfg_.hidden;
  // On the GPU the biases are read in the activations' dtype (the GEMM's epilogue takes them as they are: an
  // fp32 bias cost a conversion kernel before each of the 49 GEMMs of a forward).
  const DType bias_dtype = ctx_.is_cuda() ? dtype_ : DType::F32;
  auto linear = [&](const std::string& first, int64_t in, int64_t out) {
    DevLinear l;
    l.w = off(first + ".weight");
    l.b = off(first + ".bias");
    l.shape.bias_dtype = bias_dtype;
    l.shape.in = in;
    l.shape.out = out;
    l.shape.bias = true;
    l.shape.dtype = dtype_;
    l.shape.tf32 = tf32_;
    return l;
  };
  d.word = off("bert.embeddings.word_embeddings.weight");
  d.pos = off("bert.embeddings.position_embeddings.weight");
  d.type = off("bert.embeddings.token_type_embeddings.weight");
  d.emb_g = off("bert.embeddings.LayerNorm.weight");
  d.emb_b = off("bert.embeddings.LayerNorm.bias");
  d.layers.clear();
  for (int64_t l = 0; l < cfg_.layers; ++l) {
    const std::string p = fmt::format("bert.encoder.layer.{}.", l);
    DevLayer L;
    L.qkv = linear(p + "attention.self.query", h, 3 * h);
    L.attn_out = linear(p + "attention.output.dense", h, h);
    L.inter = linear(p + "intermediate.dense", h, cfg_.intermediate);
    L.out = linear(p + "output.dense", cfg_.intermediate, h);
    L.ln1_g = off(p + "attention.output.LayerNorm.weight");
    L.ln1_b = off(p + "attention.output.LayerNorm.bias");
    L.ln2_g = off(p + "output.LayerNorm.weight");
    L.ln2_b = off(p + "output.LayerNorm.bias");
    d.layers.push_back(L);
  }
  d.qa = linear("qa_outputs", h, 2);
  d.graph.reset();
  d.train_graph.reset();
  ctx_.synchronize();
}

void BertQA::stage(const BertBatch& b) {
  if (b.longest() > cfg_.max_positions)
    throw Error(ErrorKind::Input,
                fmt::format("a sequence of {} tokens is longer than the model's {} positions", b.longest(),
                            cfg_.max_positions),
                fmt::format("use --seq {} or less (the question and context are truncated to it)",
                            cfg_.max_positions));
  for (size_t t = 0; t < b.ids.size(); ++t) {
    if (b.ids[t] < 0 || b.ids[t] >= cfg_.vocab_size)
      throw Error(ErrorKind::Input,
                  fmt::format("token id {} at position {} is outside the vocabulary of {}", b.ids[t], t,
                              cfg_.vocab_size),
                  "tokenize with the checkpoint's own vocab.txt");
    if (b.type_ids[t] < 0 || b.type_ids[t] >= cfg_.type_vocab)
      throw Error(ErrorKind::Input,
                  fmt::format("token type {} at position {} is outside the model's {} types", b.type_ids[t], t,
                              cfg_.type_vocab),
                  "token types are 0 (question) and 1 (context)");
  }
  if (impl_->training && b.padded == 0)
    throw_unsupported("the fine-tuning step takes padded batches", "stage a padded batch (BertBatch::make packed=false)");
  Impl& d = *impl_;
  const int64_t T = b.tokens, h = cfg_.hidden, f = cfg_.intermediate;
  if (T > d.capacity) {
    d.buffers.clear();
    auto alloc = [&](int64_t cols, DType t) {
      d.buffers.push_back(ctx_.empty({T, cols}, t, "BERT activations"));
      return d.buffers.back().raw();
    };
    auto act = [&](int64_t cols) { return alloc(cols, dtype_); };
    auto stat = [&](int64_t n) { return static_cast<float*>(alloc(n, DType::F32)); };
    d.acts.assign(static_cast<size_t>(cfg_.layers), Acts{});
    d.emb = act(h);
    if (!d.training) {  // one set for every layer, updated in place
      Acts a;
      a.xin = a.x1 = a.xout = act(h);
      a.a = a.o = d.emb;
      a.ctx = act(h);
      a.qkv = act(3 * h);
      a.pre = a.act = act(f);
      std::fill(d.acts.begin(), d.acts.end(), a);
      d.mean0 = d.rstd0 = nullptr;
    } else {
      d.mean0 = stat(1), d.rstd0 = stat(1);
      void* x = act(h);
      for (Acts& a : d.acts) {
        a.xin = x;
        a.qkv = act(3 * h), a.ctx = act(h), a.a = act(h), a.x1 = act(h), a.pre = act(f), a.act = act(f);
        a.o = act(h), a.xout = x = act(h);
        a.lse = stat(cfg_.heads), a.mean1 = stat(1), a.rstd1 = stat(1), a.mean2 = stat(1), a.rstd2 = stat(1);
      }
      d.dx = act(h), d.dsum = act(h), d.dtmp = act(h), d.dctx = act(h), d.dqkv = act(3 * h), d.dact = act(f);
      d.dlogits = act(2);
    }
    d.logits = act(2);
    d.ids = ctx_.empty({T}, DType::I32, "token ids");
    d.type_ids = ctx_.empty({T}, DType::I32, "token ids");
    d.positions = ctx_.empty({T}, DType::I32, "token ids");
    d.capacity = T;
  }
  d.graph.reset();  // its pointers and shapes are the last batch's
  d.train_graph.reset();
  d.targets_staged = false;
  d.start = ctx_.empty({b.batch}, DType::I32, "sequence starts");
  d.len = ctx_.empty({b.batch}, DType::I32, "sequence lengths");
  auto put = [&](Tensor& t, const std::vector<std::int32_t>& v) {
    copy_bytes(t.raw(), t.device(), v.data(), Device::cpu(), v.size() * 4);
  };
  put(d.ids, b.ids);
  put(d.type_ids, b.type_ids);
  put(d.positions, b.positions);
  put(d.start, b.start);
  put(d.len, b.len);
  d.staged = b;
}

ops::AttentionShape attention_shape(const BertConfig& c, const BertBatch& b, DType dtype, bool tf32) {
  ops::AttentionShape as;
  as.batch = b.batch;
  as.heads = c.heads;
  as.head_dim = c.head_dim();
  as.tokens = b.tokens;
  as.max_len = b.longest();
  as.padded = b.padded;
  as.dtype = dtype;
  as.tf32 = tf32;
  as.pairs = b.attention_pairs();
  return as;
}

void BertQA::forward() { forward_pass(false); }

// The forward of the staged batch; `train`: with dropout (training mode), else as model.eval().
void BertQA::forward_pass(bool train) {
  Impl& d = *impl_;
  const BertBatch& b = d.staged;
  if (b.tokens == 0) throw Error(ErrorKind::Internal, "BertQA::forward before stage()");
  const int64_t T = b.tokens, h = cfg_.hidden;
  // On the CPU, one thread team for oneDNN's GEMMs and our ops: two teams, one spinning while the other
  // works, took bert-base s128 from 430 to 988 ms on 2 cores (OMP_WAIT_POLICY passive against active).
  const fast::OpenMpJobs one_team(ctx_.backend() == Backend::Cpu);
  auto linear = [&](const DevLinear& l, void* out, const void* in) {
    ops::LinearShape s = l.shape;
    s.n = T;
    ops::linear_forward(ctx_, s, out, in, d.low(l.w, dtype_), d.low(l.b, l.shape.bias_dtype));
  };
  const bool drop = train && d.train.dropout && cfg_.hidden_dropout > 0;
  std::uint64_t site = 0;  // each dropout site its own mask
  auto dropout = [&](void* x) {
    const std::uint64_t seed = d.train.seed * 1000003ull + site++;
    if (drop) ops::dropout_forward(ctx_, {T * h, cfg_.hidden_dropout, dtype_}, x, x, seed, d.step.i32());
  };
  ops::EmbeddingShape es{T, h, cfg_.vocab_size, cfg_.max_positions, cfg_.type_vocab, dtype_};
  ops::embeddings_forward(ctx_, es, d.emb, d.ids.i32(), d.positions.i32(), d.type_ids.i32(), d.f32(d.word),
                          d.f32(d.pos), d.f32(d.type));
  ops::LayerNormShape ln{T, h, cfg_.layer_norm_eps, false, dtype_};
  ops::layernorm_forward(ctx_, ln, d.acts[0].xin, d.mean0, d.rstd0, d.emb, nullptr, d.f32(d.emb_g), d.f32(d.emb_b));
  dropout(d.acts[0].xin);
  ln.residual = true;
  const ops::AttentionShape as = attention_shape(cfg_, b, dtype_, tf32_);
  for (size_t l = 0; l < d.layers.size(); ++l) {
    const DevLayer& L = d.layers[l];
    const Acts& A = d.acts[l];
    linear(L.qkv, A.qkv, A.xin);
    ops::attention_forward(ctx_, as, A.ctx, A.lse, A.qkv, d.start.i32(), d.len.i32());
    linear(L.attn_out, A.a, A.ctx);
    dropout(A.a);
    ops::layernorm_forward(ctx_, ln, A.x1, A.mean1, A.rstd1, A.a, A.xin, d.f32(L.ln1_g), d.f32(L.ln1_b));
    linear(L.inter, A.pre, A.x1);
    ops::gelu_forward(ctx_, {T * cfg_.intermediate, dtype_}, A.act, A.pre);
    linear(L.out, A.o, A.act);
    dropout(A.o);
    ops::layernorm_forward(ctx_, ln, A.xout, A.mean2, A.rstd2, A.o, A.x1, d.f32(L.ln2_g), d.f32(L.ln2_b));
  }
  linear(d.qa, d.logits, d.acts.back().xout);
}


void BertQA::attention_only(bool backward) {
  Impl& d = *impl_;
  if (d.staged.tokens == 0) throw Error(ErrorKind::Internal, "BertQA::attention_only before stage()");
  if (backward && !d.training) throw Error(ErrorKind::Internal, "attention's backward needs enable_training()");
  const ops::AttentionShape as = attention_shape(cfg_, d.staged, dtype_, tf32_);
  const fast::OpenMpJobs one_team(ctx_.backend() == Backend::Cpu);
  for (const Acts& A : d.acts) {
    ops::attention_forward(ctx_, as, A.ctx, A.lse, A.qkv, d.start.i32(), d.len.i32());
    if (backward)
      ops::attention_backward(ctx_, as, d.dqkv, d.dctx, A.qkv, A.ctx, A.lse, d.start.i32(), d.len.i32());
  }
}

double BertQA::attention_flops(bool backward) const {
  const PassCosts c = attention_shape(cfg_, impl_->staged, dtype_, tf32_).cost();
  return double(cfg_.layers) * (c.forward.flops + (backward ? c.input_grad.flops : 0.0));
}

void BertQA::forward_graph() {
  if (!ctx_.is_cuda()) return forward();
  if (!impl_->graph.ready()) impl_->graph.capture(ctx_, [&] { forward(); });
  impl_->graph.launch(ctx_);
}

std::vector<float> BertQA::predict(const BertBatch& b) {
  stage(b);
  forward();
  ctx_.synchronize();
  const int64_t n = b.tokens * 2;
  std::vector<float> out(static_cast<size_t>(n));
  if (dtype_ == DType::F32) {
    copy_bytes(out.data(), Device::cpu(), impl_->logits, ctx_.device(), static_cast<size_t>(n) * 4);
  } else {
    std::vector<std::uint16_t> h(static_cast<size_t>(n));
    copy_bytes(h.data(), Device::cpu(), impl_->logits, ctx_.device(), static_cast<size_t>(n) * 2);
    for (int64_t i = 0; i < n; ++i)
      out[size_t(i)] = dtype_ == DType::BF16 ? float_from_bf16(h[size_t(i)]) : float_from_f16(h[size_t(i)]);
  }
  return out;
}

// ---- Costs ---------------------------------------------------------------------------
std::vector<NodeInfo> describe_bert(const BertConfig& c, int64_t batch, int64_t seq, DType dtype) {
  const int64_t T = batch * seq, h = c.hidden, f = c.intermediate;
  std::vector<NodeInfo> v;
  auto add = [&](std::string name, std::string op, Shape in, Shape out, int64_t params, PassCosts cost) {
    v.push_back({std::move(name), std::move(op), std::move(in), std::move(out), params, cost});
  };
  auto lin = [&](int64_t in, int64_t out) {
    ops::LinearShape s;
    s.n = T, s.in = in, s.out = out, s.dtype = dtype;
    return s.cost();
  };
  const ops::LayerNormShape ln{T, h, c.layer_norm_eps, true, dtype};
  add("bert.embeddings", "embeddings", {seq}, {seq, h}, (c.vocab_size + c.max_positions + c.type_vocab) * h,
      ops::EmbeddingShape{T, h, c.vocab_size, c.max_positions, c.type_vocab, dtype}.cost());
  add("bert.embeddings.LayerNorm", "layernorm", {seq, h}, {seq, h}, 2 * h,
      ops::LayerNormShape{T, h, c.layer_norm_eps, false, dtype}.cost());
  ops::AttentionShape as;
  as.batch = batch, as.heads = c.heads, as.head_dim = c.head_dim(), as.tokens = T, as.max_len = seq,
  as.padded = seq, as.dtype = dtype;
  for (int64_t l = 0; l < c.layers; ++l) {
    const std::string p = fmt::format("bert.encoder.layer.{}.", l);
    add(p + "attention.self.qkv", "linear", {seq, h}, {seq, 3 * h}, 3 * (h * h + h), lin(h, 3 * h));
    add(p + "attention.self.sdpa", "attention", {seq, 3 * h}, {seq, h}, 0, as.cost());
    add(p + "attention.output.dense", "linear", {seq, h}, {seq, h}, h * h + h, lin(h, h));
    add(p + "attention.output.LayerNorm", "layernorm+add", {seq, h}, {seq, h}, 2 * h, ln.cost());
    PassCosts inter = lin(h, f);
    inter += ops::GeluShape{T * f, dtype}.cost();
    add(p + "intermediate.dense", "linear+gelu", {seq, h}, {seq, f}, f * h + f, inter);
    add(p + "output.dense", "linear", {seq, f}, {seq, h}, h * f + h, lin(f, h));
    add(p + "output.LayerNorm", "layernorm+add", {seq, h}, {seq, h}, 2 * h, ln.cost());
  }
  add("qa_outputs", "linear", {seq, h}, {seq, 2}, 2 * h + 2, lin(h, 2));
  return v;
}

}  // namespace roofline::engine::bert

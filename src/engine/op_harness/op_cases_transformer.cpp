// The harness's transformer op cases (ops_transformer.hpp): embeddings,
// LayerNorm with and without the residual add, GELU, and attention over
// padded and packed batches, at random shapes in every dtype (the CPU
// backends refuse bf16 and fp16: skipped), and BERT-base's shapes for perf mode.
#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "roofline/core/error.hpp"
#include "roofline/engine/ops_transformer.hpp"
#include "src/engine/cpu/ref_transformer.hpp"
#include "src/engine/op_harness/case_util.hpp"
#include "src/engine/op_harness/op_case.hpp"

namespace roofline::engine::harness {

using std::int64_t;
using namespace case_util;

namespace {


OpCase embeddings_case(const ops::EmbeddingShape& s) {
  enum { IDS, POSI, TYPES, WORD, POS, TYPE, OUT, DOUT, DWORD, DPOS, DTYPE };
  OpCase c;
  c.op = "embeddings";
  c.shape = fmt::format("tokens={} hidden={} vocab={}{} {}", s.tokens, s.hidden, s.vocab,
                        s.padding_idx >= 0 ? fmt::format(" padding_idx={}", s.padding_idx) : "", to_string(s.dtype));
  c.bufs = {{"ids", DType::I32, s.tokens},
            {"positions", DType::I32, s.tokens},
            {"type_ids", DType::I32, s.tokens},
            {"word", DType::F32, s.vocab * s.hidden},
            {"pos", DType::F32, s.positions * s.hidden},
            {"type", DType::F32, s.types * s.hidden},
            {"out", s.dtype, s.tokens * s.hidden, Role::Output},
            {"dout", s.dtype, s.tokens * s.hidden},
            {"dword", DType::F32, s.vocab * s.hidden, Role::Output},
            {"dpos", DType::F32, s.positions * s.hidden, Role::Output},
            {"dtype", DType::F32, s.types * s.hidden, Role::Output}};
  c.fill = [s](Rng& r, HostBufs& h) {
    for (auto [b, n] : {std::pair<int, int64_t>{IDS, s.vocab}, {POSI, s.positions}, {TYPES, s.types}}) {
      h[size_t(b)].i.resize(static_cast<size_t>(s.tokens));
      for (auto& v : h[size_t(b)].i) v = static_cast<std::int32_t>(r.below(static_cast<std::uint64_t>(n)));
    }
    normal(r, h[WORD], s.vocab * s.hidden);
    normal(r, h[POS], s.positions * s.hidden);
    normal(r, h[TYPE], s.types * s.hidden);
    for (int b : {WORD, POS, TYPE}) round_all(h[size_t(b)]);
    normal(r, h[DOUT], s.tokens * s.hidden);
    round_to(s.dtype, h[DOUT]);
  };
  c.passes.push_back({"forward", s.cost().forward, {IDS, POSI, TYPES, WORD, POS, TYPE}, {OUT},
                      [s](Context& ctx, const DevPtrs& p) {
                        ops::embeddings_forward(ctx, s, P(p, OUT), I(p, IDS), I(p, POSI), I(p, TYPES), F(p, WORD),
                                                F(p, POS), F(p, TYPE));
                      },
                      [s](HostBufs& h) {
                        ref::embeddings_forward<double>(s, h[OUT].f.data(), h[IDS].i.data(), h[POSI].i.data(),
                                                        h[TYPES].i.data(), h[WORD].f.data(), h[POS].f.data(),
                                                        h[TYPE].f.data());
                      }});
  c.passes.push_back({"weight-grad", s.cost().weight_grad, {DOUT, IDS, POSI, TYPES}, {DWORD, DPOS, DTYPE},
                      [s](Context& ctx, const DevPtrs& p) {
                        ops::embeddings_backward(ctx, s, F(p, DWORD), F(p, DPOS), F(p, DTYPE), P(p, DOUT),
                                                 I(p, IDS), I(p, POSI), I(p, TYPES));
                      },
                      [s](HostBufs& h) {
                        ref::embeddings_backward<double>(s, h[DWORD].f.data(), h[DPOS].f.data(), h[DTYPE].f.data(),
                                                         h[DOUT].f.data(), h[IDS].i.data(), h[POSI].i.data(),
                                                         h[TYPES].i.data());
                      }});
  return c;
}

OpCase layernorm_case(const ops::LayerNormShape& s) {
  enum { IN, RES, GAMMA, BETA, OUT, MEAN, RSTD, DOUT, SM, SR, DIN, DG, DB };
  const int64_t n = s.rows * s.cols;
  OpCase c;
  c.op = s.residual ? "layernorm+add" : "layernorm";
  c.shape = fmt::format("rows={} cols={} eps={:g} {}", s.rows, s.cols, s.eps, to_string(s.dtype));
  c.bufs = {{"in", s.dtype, n},         {"residual", s.dtype, s.residual ? n : 1},
            {"gamma", DType::F32, s.cols}, {"beta", DType::F32, s.cols},
            {"out", s.dtype, n, Role::Output}, {"mean", DType::F32, s.rows, Role::Output},
            {"rstd", DType::F32, s.rows, Role::Output},
            {"dout", s.dtype, n},
            {"mean_ref", DType::F32, s.rows},  // the forward's statistics the backward reads
            {"rstd_ref", DType::F32, s.rows},
            {"din", s.dtype, n, Role::Output}, {"dgamma", DType::F32, s.cols, Role::Output},
            {"dbeta", DType::F32, s.cols, Role::Output}};
  // The forward in float64: output and statistics.
  auto fwd = [s, n](const HostBufs& h, std::vector<double>& y, std::vector<double>& m, std::vector<double>& r) {
    y.resize(static_cast<size_t>(n));
    m.resize(static_cast<size_t>(s.rows));
    r.resize(static_cast<size_t>(s.rows));
    ref::layernorm_forward<double>(s, y.data(), m.data(), r.data(), h[IN].f.data(),
                                   s.residual ? h[RES].f.data() : nullptr, h[GAMMA].f.data(), h[BETA].f.data());
  };
  c.fill = [s, n, fwd](Rng& r, HostBufs& h) {
    // Rows with their own offset and spread, far from 0 and 1: a variance that cancels shows.
    h[IN].f.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < s.rows; ++i) {
      const double mu = r.uniform(-3.f, 3.f), sd = r.uniform(0.3f, 3.f);
      for (int64_t j = 0; j < s.cols; ++j) h[IN].f[size_t(i * s.cols + j)] = mu + sd * r.normal();
    }
    round_to(s.dtype, h[IN]);
    normal(r, h[RES], s.residual ? n : 1);
    round_to(s.dtype, h[RES]);
    h[GAMMA].f.resize(static_cast<size_t>(s.cols));
    for (auto& v : h[GAMMA].f) v = r.uniform(0.5f, 1.5f) * (r.below(4) == 0 ? -1 : 1);
    normal(r, h[BETA], s.cols);
    round_all(h[GAMMA]);
    round_all(h[BETA]);
    normal(r, h[DOUT], n);
    round_to(s.dtype, h[DOUT]);
    std::vector<double> y;
    fwd(h, y, h[SM].f, h[SR].f);  // rounded to fp32 by the harness
  };
  std::vector<int> in = {IN, GAMMA, BETA};
  if (s.residual) in.push_back(RES);
  c.passes.push_back({"forward", s.cost().forward, in, {OUT, MEAN, RSTD},
                      [s](Context& ctx, const DevPtrs& p) {
                        ops::layernorm_forward(ctx, s, P(p, OUT), F(p, MEAN), F(p, RSTD), P(p, IN),
                                               s.residual ? P(p, RES) : nullptr, F(p, GAMMA), F(p, BETA));
                      },
                      [s](HostBufs& h) {
                        ref::layernorm_forward<double>(s, h[OUT].f.data(), h[MEAN].f.data(), h[RSTD].f.data(),
                                                       h[IN].f.data(), s.residual ? h[RES].f.data() : nullptr,
                                                       h[GAMMA].f.data(), h[BETA].f.data());
                      }});
  std::vector<int> bin = {DOUT, IN, GAMMA, SM, SR};
  if (s.residual) bin.push_back(RES);
  const PassCosts pc = s.cost();
  c.passes.push_back({"backward", pc.input_grad + pc.weight_grad, bin, {DIN, DG, DB},
                      [s](Context& ctx, const DevPtrs& p) {
                        ops::layernorm_backward(ctx, s, P(p, DIN), F(p, DG), F(p, DB), P(p, DOUT), P(p, IN),
                                                s.residual ? P(p, RES) : nullptr, F(p, GAMMA), F(p, SM), F(p, SR));
                      },
                      [s](HostBufs& h) {
                        ref::layernorm_backward<double>(s, h[DIN].f.data(), h[DG].f.data(), h[DB].f.data(),
                                                        h[DOUT].f.data(), h[IN].f.data(),
                                                        s.residual ? h[RES].f.data() : nullptr, h[GAMMA].f.data(),
                                                        h[SM].f.data(), h[SR].f.data());
                      }});
  // Finite differences of L = Σ out · dout against the reference backward.
  auto loss = [=](const HostBufs& h) {
    std::vector<double> y, m, r;
    fwd(h, y, m, r);
    return dot(y, h[DOUT].f);
  };
  auto grad = [=](const HostBufs& h, int which) {
    std::vector<double> y, m, r;
    fwd(h, y, m, r);
    std::vector<double> din(static_cast<size_t>(n)), dg(static_cast<size_t>(s.cols)), db(static_cast<size_t>(s.cols));
    ref::layernorm_backward<double>(s, din.data(), dg.data(), db.data(), h[DOUT].f.data(), h[IN].f.data(),
                                    s.residual ? h[RES].f.data() : nullptr, h[GAMMA].f.data(), m.data(), r.data());
    return which == GAMMA ? dg : which == BETA ? db : din;  // the residual's gradient is the input's
  };
  c.grads.push_back({"in", IN, loss, [=](const HostBufs& h) { return grad(h, IN); }, 1e-5});
  c.grads.push_back({"gamma", GAMMA, loss, [=](const HostBufs& h) { return grad(h, GAMMA); }, 1e-5});
  c.grads.push_back({"beta", BETA, loss, [=](const HostBufs& h) { return grad(h, BETA); }, 1e-5});
  if (s.residual) c.grads.push_back({"residual", RES, loss, [=](const HostBufs& h) { return grad(h, RES); }, 1e-5});
  return c;
}

OpCase gelu_case(const ops::GeluShape& s) {
  enum { IN, OUT, DOUT, DIN };
  OpCase c;
  c.op = "gelu";
  c.shape = fmt::format("n={} {}", s.n, to_string(s.dtype));
  c.bufs = {{"in", s.dtype, s.n}, {"out", s.dtype, s.n, Role::Output}, {"dout", s.dtype, s.n},
            {"din", s.dtype, s.n, Role::Output}};
  c.fill = [s](Rng& r, HostBufs& h) {
    normal(r, h[IN], s.n);
    for (auto& v : h[IN].f) v *= 3;  // the tails too, where erf saturates
    round_to(s.dtype, h[IN]);
    normal(r, h[DOUT], s.n);
    round_to(s.dtype, h[DOUT]);
  };
  c.passes.push_back({"forward", s.cost().forward, {IN}, {OUT},
                      [s](Context& ctx, const DevPtrs& p) { ops::gelu_forward(ctx, s, P(p, OUT), P(p, IN)); },
                      [s](HostBufs& h) { ref::gelu_forward<double>(s, h[OUT].f.data(), h[IN].f.data()); }});
  c.passes.push_back({"input-grad", s.cost().input_grad, {DOUT, IN}, {DIN},
                      [s](Context& ctx, const DevPtrs& p) { ops::gelu_backward(ctx, s, P(p, DIN), P(p, DOUT), P(p, IN)); },
                      [s](HostBufs& h) {
                        ref::gelu_backward<double>(s, h[DIN].f.data(), h[DOUT].f.data(), h[IN].f.data());
                      }});
  c.grads.push_back({"in", IN,
                     [s](const HostBufs& h) {
                       std::vector<double> y(static_cast<size_t>(s.n));
                       ref::gelu_forward<double>(s, y.data(), h[IN].f.data());
                       return dot(y, h[DOUT].f);
                     },
                     [s](const HostBufs& h) {
                       std::vector<double> g(static_cast<size_t>(s.n));
                       ref::gelu_backward<double>(s, g.data(), h[DOUT].f.data(), h[IN].f.data());
                       return g;
                     },
                     1e-5});
  return c;
}

// The QA head's span loss: one pass writes the loss and the logits' gradient.
OpCase span_loss_case(const ops::SpanLossShape& s, Rng& pos_rng) {
  enum { LOGITS, START, END, LOSS, DLOGITS };
  const int64_t n = s.batch * s.seq * 2;
  std::vector<std::int32_t> start, end;
  for (int64_t b = 0; b < s.batch; ++b) {
    start.push_back(static_cast<std::int32_t>(pos_rng.below(static_cast<std::uint64_t>(s.seq))));
    end.push_back(static_cast<std::int32_t>(pos_rng.below(static_cast<std::uint64_t>(s.seq))));
  }
  OpCase c;
  c.op = "span_loss";
  c.shape = fmt::format("batch={} seq={} {}", s.batch, s.seq, to_string(s.dtype));
  c.bufs = {{"logits", s.dtype, n},
            {"start", DType::I32, s.batch},
            {"end", DType::I32, s.batch},
            {"loss", DType::F32, 1, Role::Output},
            {"dlogits", s.dtype, n, Role::Output}};
  c.fill = [=](Rng& r, HostBufs& h) {
    normal(r, h[LOGITS], n);
    for (auto& v : h[LOGITS].f) v *= 4;
    round_to(s.dtype, h[LOGITS]);
    h[START].i = start;
    h[END].i = end;
  };
  c.passes.push_back({"forward", s.cost().forward, {LOGITS, START, END}, {LOSS, DLOGITS},
                      [s](Context& ctx, const DevPtrs& p) {
                        ops::span_loss(ctx, s, F(p, LOSS), P(p, DLOGITS), P(p, LOGITS), I(p, START), I(p, END));
                      },
                      [s](HostBufs& h) {
                        ref::span_loss<double>(s, h[LOSS].f.data(), h[DLOGITS].f.data(), h[LOGITS].f.data(),
                                               h[START].i.data(), h[END].i.data());
                      }});
  c.grads.push_back({"logits", LOGITS,
                     [s](const HostBufs& h) {
                       double loss = 0;
                       std::vector<double> g(static_cast<size_t>(s.batch * s.seq * 2));
                       ref::span_loss<double>(s, &loss, g.data(), h[LOGITS].f.data(), h[START].i.data(),
                                              h[END].i.data());
                       return loss;
                     },
                     [s](const HostBufs& h) {
                       std::vector<double> g(static_cast<size_t>(s.batch * s.seq * 2));
                       ref::span_loss<double>(s, nullptr, g.data(), h[LOGITS].f.data(), h[START].i.data(),
                                              h[END].i.data());
                       return g;
                     },
                     1e-5});
  return c;
}

// Sequences of the given lengths, padded to `padded` rows each (packed when 0):
// the attention shape and each sequence's first row and length.
struct AttentionBatch {
  ops::AttentionShape s;
  std::vector<std::int32_t> start, len;
  std::string shape;  // for the harness's tables
};
AttentionBatch attention_batch(const std::vector<int64_t>& lens, int64_t heads, int64_t head_dim, int64_t padded,
                               DType t) {
  AttentionBatch a;
  ops::AttentionShape& s = a.s;
  s.batch = static_cast<int64_t>(lens.size());
  s.heads = heads;
  s.head_dim = head_dim;
  s.padded = padded;
  s.dtype = t;
  s.max_len = *std::max_element(lens.begin(), lens.end());
  for (int64_t l : lens) {
    a.start.push_back(static_cast<std::int32_t>(s.tokens));
    a.len.push_back(static_cast<std::int32_t>(l));
    s.tokens += padded > 0 ? padded : l;
    s.pairs += double(padded > 0 ? padded : l) * double(l);
  }
  a.shape = fmt::format("batch={} heads={} d={} tokens={} max_len={} {}", s.batch, heads, head_dim, s.tokens,
                        s.max_len, to_string(t));
  return a;
}

OpCase attention_case(std::vector<int64_t> lens, int64_t heads, int64_t head_dim, int64_t padded, DType t) {
  enum { QKV, START, LEN, OUT, LSE };
  const AttentionBatch a = attention_batch(lens, heads, head_dim, padded, t);
  const ops::AttentionShape s = a.s;
  const std::vector<std::int32_t> start = a.start, len = a.len;
  const int64_t tokens = s.tokens;
  OpCase c;
  c.op = padded > 0 ? "attention" : "attention_packed";
  c.shape = a.shape;
  const int64_t hd = heads * head_dim;
  c.bufs = {{"qkv", t, tokens * 3 * hd},
            {"start", DType::I32, s.batch},
            {"len", DType::I32, s.batch},
            {"out", t, tokens * hd, Role::Output},
            {"lse", DType::F32, heads * tokens, Role::Output}};
  c.fill = [=](Rng& r, HostBufs& h) {
    normal(r, h[QKV], tokens * 3 * hd);
    for (auto& v : h[QKV].f) v *= 1.5;  // peaked softmaxes as well as flat ones
    round_to(t, h[QKV]);
    h[START].i = start;
    h[LEN].i = len;
  };
  c.passes.push_back({"forward", s.cost().forward, {QKV, START, LEN}, {OUT, LSE},
                      [s](Context& ctx, const DevPtrs& p) {
                        ops::attention_forward(ctx, s, P(p, OUT), F(p, LSE), P(p, QKV), I(p, START), I(p, LEN));
                      },
                      [s](HostBufs& h) {
                        ref::attention_forward<double>(s, h[OUT].f.data(), h[LSE].f.data(), h[QKV].f.data(),
                                                       h[START].i.data(), h[LEN].i.data());
                      }});
  return c;
}

// The backward of attention_case's shape: out and lse from the float64 forward.
OpCase attention_grad_case(std::vector<int64_t> lens, int64_t heads, int64_t head_dim, int64_t padded, DType t) {
  enum { QKV, START, LEN, DOUT, OUT, LSE, DQKV };
  const AttentionBatch a = attention_batch(lens, heads, head_dim, padded, t);
  const ops::AttentionShape s = a.s;
  const std::vector<std::int32_t> start = a.start, len = a.len;
  const int64_t tokens = s.tokens;
  const int64_t hd = heads * head_dim;
  OpCase c;
  c.op = "attention_grad";
  c.shape = a.shape + (padded > 0 ? " padded" : " packed");
  c.bufs = {{"qkv", t, tokens * 3 * hd},     {"start", DType::I32, s.batch}, {"len", DType::I32, s.batch},
            {"dout", t, tokens * hd},        {"out", t, tokens * hd},        {"lse", DType::F32, heads * tokens},
            {"dqkv", t, tokens * 3 * hd, Role::Output}};
  auto forward = [s](const HostBufs& h, std::vector<double>& o, std::vector<double>& l) {
    o.resize(static_cast<size_t>(s.tokens * s.heads * s.head_dim));
    l.resize(static_cast<size_t>(s.heads * s.tokens));
    ref::attention_forward<double>(s, o.data(), l.data(), h[QKV].f.data(), h[START].i.data(), h[LEN].i.data());
  };
  c.fill = [=](Rng& r, HostBufs& h) {
    normal(r, h[QKV], tokens * 3 * hd);
    round_to(t, h[QKV]);
    h[START].i = start;
    h[LEN].i = len;
    normal(r, h[DOUT], tokens * hd);
    round_to(t, h[DOUT]);
    forward(h, h[OUT].f, h[LSE].f);  // rounded to their dtypes by the harness
  };
  c.passes.push_back({"input-grad", s.cost().input_grad, {QKV, START, LEN, DOUT, OUT, LSE}, {DQKV},
                      [s](Context& ctx, const DevPtrs& p) {
                        ops::attention_backward(ctx, s, P(p, DQKV), P(p, DOUT), P(p, QKV), P(p, OUT), F(p, LSE),
                                                I(p, START), I(p, LEN));
                      },
                      [s](HostBufs& h) {
                        ref::attention_backward<double>(s, h[DQKV].f.data(), h[DOUT].f.data(), h[QKV].f.data(),
                                                        h[OUT].f.data(), h[LSE].f.data(), h[START].i.data(),
                                                        h[LEN].i.data());
                      }});
  // Finite differences of L = Σ out · dout against the reference backward (from the exact out and lse).
  c.grads.push_back({"qkv", QKV,
                     [=](const HostBufs& h) {
                       std::vector<double> o, l;
                       forward(h, o, l);
                       return dot(o, h[DOUT].f);
                     },
                     [=](const HostBufs& h) {
                       std::vector<double> o, l, g(static_cast<size_t>(s.tokens * 3 * hd));
                       forward(h, o, l);
                       ref::attention_backward<double>(s, g.data(), h[DOUT].f.data(), h[QKV].f.data(), o.data(),
                                                       l.data(), h[START].i.data(), h[LEN].i.data());
                       return g;
                     },
                     1e-5});
  return c;
}

OpCase random_attention(Rng& r, bool packed) {
  const int64_t batch = pick(r, 1, 4), heads = pick(r, 1, 3);
  const int64_t dims[] = {16, 32, 64};
  const int64_t d = dims[r.below(3)];
  // Lengths across the GPU kernel's tiles (64 queries, 64 keys, 16 a sub-tile), 1 included.
  std::vector<int64_t> lens;
  for (int64_t b = 0; b < batch; ++b) lens.push_back(r.below(5) == 0 ? 1 : pick(r, 1, 150));
  const int64_t longest = *std::max_element(lens.begin(), lens.end());
  return attention_case(lens, heads, d, packed ? 0 : longest + static_cast<int64_t>(r.below(3)), random_dtype(r));
}

}  // namespace

const std::vector<std::string>& transformer_op_names() {
  static const std::vector<std::string> names = {"embeddings", "layernorm", "layernorm+add", "gelu", "attention",
                                                 "attention_packed", "attention_grad", "span_loss"};
  return names;
}

bool is_transformer_op(const std::string& op) {
  const auto& n = transformer_op_names();
  return std::find(n.begin(), n.end(), op) != n.end();
}

OpCase transformer_case(const std::string& op, Rng& r) {
  if (op == "embeddings") {
    ops::EmbeddingShape s;
    s.tokens = pick(r, 1, 300);
    s.hidden = pick(r, 1, 200);
    s.vocab = pick(r, 1, 500);
    s.positions = pick(r, 1, 64);
    s.types = pick(r, 1, 3);
    s.dtype = random_dtype(r);
    s.padding_idx = r.below(2) == 0 ? -1 : static_cast<int64_t>(r.below(static_cast<std::uint64_t>(s.vocab)));
    return embeddings_case(s);
  }
  if (op == "layernorm" || op == "layernorm+add") {
    ops::LayerNormShape s;
    s.rows = pick(r, 1, 300);
    s.cols = r.below(3) == 0 ? 768 : pick(r, 1, 400);
    s.eps = r.below(2) == 0 ? 1e-12f : 1e-5f;
    s.residual = op == "layernorm+add";
    s.dtype = random_dtype(r);
    return layernorm_case(s);
  }
  if (op == "gelu") {
    // fp32 three times in four: with half, the CPU suite's 6 seeded cases once drew no fp32 case at all.
    const DType t = r.below(4) != 0 ? DType::F32 : r.below(2) == 0 ? DType::BF16 : DType::F16;
    return gelu_case({pick(r, 1, 5000), t});
  }
  if (op == "attention" || op == "attention_packed") return random_attention(r, op == "attention_packed");
  if (op == "attention_grad") {
    // Small: the finite-difference check perturbs every element of qkv.
    std::vector<int64_t> lens;
    for (int64_t b = 0, n = pick(r, 1, 3); b < n; ++b) lens.push_back(pick(r, 1, 12));
    const int64_t longest = *std::max_element(lens.begin(), lens.end());
    const bool packed = r.below(2) == 0;
    return attention_grad_case(lens, pick(r, 1, 2), r.below(2) == 0 ? 8 : 16, packed ? 0 : longest + pick(r, 0, 2),
                               random_dtype(r));
  }
  if (op == "span_loss") return span_loss_case({pick(r, 1, 8), pick(r, 1, 200), random_dtype(r)}, r);
  throw_usage(fmt::format("unknown op '{}'", op), "see roofline ops --list");
}

// BERT-base at batch B, sequence 128 (fp32 and bf16).
std::vector<OpCase> transformer_perf_cases(const std::string& op, std::int64_t B) {
  std::vector<OpCase> v;
  const int64_t seq = 128, tokens = B * seq;
  for (DType t : {DType::F32, DType::BF16}) {
    if (op == "embeddings") {
      v.push_back(embeddings_case({tokens, 768, 28996, 512, 2, t, 0}));
    } else if (op == "layernorm" || op == "layernorm+add") {
      v.push_back(layernorm_case({tokens, 768, 1e-12f, op == "layernorm+add", t}));
    } else if (op == "gelu") {
      v.push_back(gelu_case({tokens * 3072, t}));
    } else if (op == "span_loss") {
      Rng pos(B);
      v.push_back(span_loss_case({B, seq, t}, pos));
    } else if (op == "attention_grad") {
      v.push_back(attention_grad_case(std::vector<int64_t>(size_t(B), seq), 12, 64, seq, t));
    } else if (op == "attention" || op == "attention_packed") {
      // Packed: the lengths of a batch of SQuAD-like questions, 64 to 128 tokens.
      std::vector<int64_t> lens;
      for (int64_t b = 0; b < B; ++b) lens.push_back(op == "attention" ? seq : 64 + (b * 37) % 65);
      v.push_back(attention_case(lens, 12, 64, op == "attention" ? seq : 0, t));
    }
  }
  return v;
}

}  // namespace roofline::engine::harness

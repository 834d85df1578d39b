// `roofline summary`: a model's layers on paper, and the other conventions.
//
// What each third-party tool counts was read in its own source (not run here:
// PyTorch is not on the build machine; tests/cpu/test_summary_cli.cpp keeps the
// hand-computed figures to check against the tools on the GPU machine):
// - fvcore, FlopCountAnalysis (fvcore/nn/flop_count.py, _DEFAULT_SUPPORTED_OPS;
//   fvcore/nn/jit_handles.py): a multiply-add is one; convolution =
//   batch · prod(weight shape) · prod(output spatial), "addition and bias is
//   ignored"; linear/addmm = batch · in · out (no bias); batch_norm = 2 per input
//   element in eval mode (5 in training mode); adaptive_avg_pool2d = 1 per input
//   element; max_pool2d, relu and add have no handle (0).
// - torchinfo, "Total mult-adds" (torchinfo/layer_info.py, calculate_macs): for
//   each parameter named weight or bias, a Conv adds numel · batch · prod(output
//   spatial) (so the bias adds one per output element), any other layer adds
//   batch · numel (Linear's bias: out; BatchNorm2d: 2·C per sample); no
//   activations or pools.
// - ptflops, get_model_complexity_info with backend='pytorch'
//   (ptflops/pytorch_ops.py, MODULES_MAPPING): conv = kernel · Cin · Cout/groups ·
//   output positions + Cout · output positions for the bias; linear = in · out +
//   out; ReLU = output elements; max and adaptive average pools = input elements;
//   BatchNorm2d = 2 per input element (affine); the residual `out += identity`
//   goes through no hook. Its 'aten' backend (ptflops/aten_ops.py) counts
//   convolutions and matmuls only, without bias: the MACs row.
// - DeepSpeed's flops profiler (deepspeed.ai/tutorials/flops-profiler): forward
//   flops = 2 × forward MACs, "bwd FLOPS = 2 * fwd flops / bwd latency",
//   "fwd+bwd = 3 * fwd flops".
// - Seed 001 (its section 4): conv 2·Cin·OH·OW·Cout·K², linear 2·in·out + out,
//   backward = the first layer's forward once, every other layer's twice.
#include "roofline/engine/model_summary.hpp"

#include <fmt/format.h>

#include <cmath>

#include "roofline/core/error.hpp"
#include "roofline/core/strings.hpp"
#include "roofline/engine/bert.hpp"
#include "roofline/engine/layer_graph.hpp"
#include "roofline/engine/model.hpp"

namespace roofline::engine {

namespace {

using Kind = SummaryLayer::Kind;

// The per-sample counts of a Conv or Linear layer, from its shapes.
void conv_counts(SummaryLayer& l, std::int64_t kernel, std::int64_t groups) {
  const std::int64_t cin = l.in[0], cout = l.out[0], positions = l.out[1] * l.out[2];
  l.macs = cout * (cin / groups) * kernel * kernel * positions;
  l.bias_adds = l.bias ? cout * positions : 0;
  l.seed001 = 2 * cin * positions * cout * kernel * kernel;  // the seed's formula ignores groups
}
void linear_counts(SummaryLayer& l) {
  const std::int64_t in = l.in[0], out = l.out[0];
  l.macs = in * out;
  l.bias_adds = l.bias ? out : 0;
  l.seed001 = 2 * in * out + out;
}

std::string with_relu(std::string op, bool relu) { return relu ? op + "+relu" : op; }

// The op's name in the table, short enough for 120 columns.
std::string short_op(NodeOp op) {
  switch (op) {
    case NodeOp::BatchNorm2d:
      return "bn2d";
    case NodeOp::AdaptiveAvgPool2d:
      return "avgpool2d";
    default:
      return to_string(op);
  }
}

void from_graph(ModelSummary& s, const LayerGraph& g) {
  s.description = g.description;
  s.params = g.learnable_count();
  const auto info = g.describe(s.batch, activation_dtype(s.precision));
  for (size_t i = 0; i < info.size(); ++i) {
    const GraphNode& n = g.nodes()[i];
    SummaryLayer l;
    l.name = info[i].name;
    l.in = info[i].in;
    l.out = info[i].out;
    l.params = info[i].params;
    l.cost = info[i].cost;
    l.bias = n.bias;
    l.relu = n.act == ops::Activation::ReLU || n.op == NodeOp::ReLU;
    switch (n.op) {
      case NodeOp::Conv2d:
        l.kind = Kind::Conv;
        conv_counts(l, n.kernel, n.groups);
        break;
      case NodeOp::Linear:
        l.kind = Kind::Linear;
        linear_counts(l);
        break;
      case NodeOp::BatchNorm2d:
        l.kind = Kind::BatchNorm;
        break;
      case NodeOp::MaxPool2d:
        l.kind = Kind::MaxPool;
        break;
      case NodeOp::AdaptiveAvgPool2d:
        l.kind = Kind::AvgPool;
        break;
      case NodeOp::Add:
        l.kind = Kind::Add;
        break;
      case NodeOp::ReLU:
        l.kind = Kind::ReLU;
        break;
      case NodeOp::Flatten:
        l.kind = Kind::Flatten;
        break;
      case NodeOp::Dropout:
        l.kind = Kind::Dropout;
        break;
    }
    const bool residual = n.op == NodeOp::BatchNorm2d && n.inputs.size() > 1;
    l.op = with_relu(short_op(n.op) + (residual ? "+add" : ""), l.relu && n.op != NodeOp::ReLU);
    s.layers.push_back(std::move(l));
  }
}

// bert-base as BertQA runs it (describe_bert): per sample, a sample being one sequence of s.seq tokens.
void from_bert(ModelSummary& s, const bert::BertConfig& c) {
  s.description = fmt::format("bert-base: Hugging Face's BertForQuestionAnswering (bert-base-cased), {} tokens a "
                              "sequence; a sample is a sequence",
                              s.seq);
  const DType dtype = activation_dtype(s.precision);
  for (const NodeInfo& n : bert::describe_bert(c, s.batch, s.seq, dtype)) {
    SummaryLayer l;
    l.name = n.name;
    l.op = n.op;
    l.in = n.in;
    l.out = n.out;
    l.params = n.params;
    l.cost = n.cost;
    s.params += n.params;
    if (n.op == "linear" || n.op == "linear+gelu") {
      l.kind = Kind::Linear;
      l.bias = true;
      l.macs = n.in[0] * n.in[1] * n.out[1];  // tokens × in × out
      l.bias_adds = numel(n.out);
      l.seed001 = n.in[0] * (2 * n.in[1] * n.out[1] + n.out[1]);
    } else if (n.op == "attention") {
      l.kind = Kind::Attention;
      l.matmul_macs = 2 * s.seq * s.seq * c.hidden;  // Q·Kᵀ and P·V over every head
    } else if (n.op == "embeddings") {
      l.kind = Kind::Embedding;
    } else {
      l.kind = Kind::LayerNorm;
    }
    s.layers.push_back(std::move(l));
  }
}

void from_model(ModelSummary& s, const Model& m) {
  s.description = m.description;
  s.params = m.learnable_count();
  const auto info = m.describe(s.batch);
  for (size_t i = 0; i < info.size(); ++i) {
    const LayerSpec spec = m.layers()[i]->spec();
    SummaryLayer l;
    l.name = info[i].name;
    l.op = info[i].op;
    l.in = info[i].in;
    l.out = info[i].out;
    l.params = info[i].params;
    l.cost = info[i].cost;
    l.bias = spec.bias;
    l.relu = spec.act == ops::Activation::ReLU;
    switch (spec.kind) {
      case LayerSpec::Kind::Conv2d:
        l.kind = Kind::Conv;
        conv_counts(l, spec.kernel, 1);
        break;
      case LayerSpec::Kind::Linear:
        l.kind = Kind::Linear;
        linear_counts(l);
        break;
      case LayerSpec::Kind::MaxPool2d:
        l.kind = Kind::MaxPool;
        break;
      case LayerSpec::Kind::Activation:
        l.kind = Kind::ReLU;
        break;
      case LayerSpec::Kind::Flatten:
        l.kind = Kind::Flatten;
        break;
    }
    s.layers.push_back(std::move(l));
  }
}

std::int64_t whole(double v) { return static_cast<std::int64_t>(std::llround(v)); }

void add_conventions(ModelSummary& s) {
  // Per-sample sums of what each convention counts.
  std::int64_t macs = 0, bias = 0, relu = 0, pool_in = 0, avgpool_in = 0, bn_elems = 0, bn_channels = 0;
  std::int64_t seed_fwd = 0, seed_bwd = 0, first_macs = 0, matmul = 0;
  bool first = true;
  for (const auto& l : s.layers) {
    macs += l.macs;
    matmul += l.matmul_macs;
    bias += l.bias_adds;
    if (l.relu) relu += numel(l.out);
    if (l.kind == Kind::MaxPool || l.kind == Kind::AvgPool) pool_in += numel(l.in);
    if (l.kind == Kind::AvgPool) avgpool_in += numel(l.in);
    if (l.kind == Kind::BatchNorm) bn_elems += numel(l.in), bn_channels += l.in[0];
    if (l.kind == Kind::Conv || l.kind == Kind::Linear) {
      seed_fwd += l.seed001;
      seed_bwd += (first ? 1 : 2) * l.seed001;
      if (first) first_macs = l.macs;
      first = false;
    }
  }
  const std::int64_t n = s.batch;
  if (s.seq > 0) {
    // A transformer: the other tools' rules for attention's matmuls, LayerNorm and GELU are not derived
    // here (nor checked against their runs), so only the conventions that follow from the layers' MACs.
    s.conventions = {
        {"roofline", "engine kernels: every op and pass", whole(s.total.forward.flops),
         whole(s.total.train().flops), "the loss and the optimizer step"},
        {"macs", "linear multiply-adds", n * macs, -1, "attention's matmuls, bias, norms, GELU, bwd"},
        {"macs+attn", "linear + attention matmul MACs", n * (macs + matmul), -1, "bias, softmax, norms, GELU, bwd"},
        {"2xmacs", "FLOPs = 2 × (linear + attention MACs)", 2 * n * (macs + matmul), -1, "as macs+attn"},
        {"deepspeed", "train = 3 × fwd (bwd = 2 × fwd)", 2 * n * (macs + matmul), 6 * n * (macs + matmul),
         "as macs+attn; the true backward"},
        {"seed001", "2·in·out+out per linear", n * seed_fwd, -1, "attention, norms, GELU"},
    };
    return;
  }
  // Labels and what is left out kept short (a 120-column table); the table's
  // notes say the rest.
  s.conventions = {
      {"roofline", "engine kernels: every op and pass", whole(s.total.forward.flops), whole(s.total.train().flops),
       "the loss and the optimizer step"},
      {"macs", "conv + linear multiply-adds", n * macs, -1, "bias, norms, pools, activations, bwd"},
      {"fvcore", "MACs + BN 2/elem + avg pool (eval)", n * (macs + 2 * bn_elems + avgpool_in), -1,
       "bias, max pool, ReLU, residual add, bwd"},
      {"torchinfo", "MACs + bias + BN 2/channel", n * (macs + bias + 2 * bn_channels), -1,
       "pools, activations, BN per elem, bwd"},
      {"ptflops", "MACs + bias, ReLU, pools, BN 2/elem", n * (macs + bias + relu + pool_in + 2 * bn_elems), -1,
       "residual adds, bwd"},
      {"2xmacs", "FLOPs = 2 × MACs", 2 * n * macs, -1, "as macs"},
      {"deepspeed", "train = 3 × fwd (bwd = 2 × fwd)", 2 * n * macs, 6 * n * macs,
       "as macs; the true backward"},
      // PyTorch's own counter: 2 × MACs of convolutions and matmuls, and in
      // backward the gradients autograd computes (none for the input image).
      {"torch", "FlopCounterMode: 2×MACs, bwd run", 2 * n * macs, 2 * n * (3 * macs - first_macs),
       "bias, norms, pools, activations"},
      {"seed001", "2·Cin·OH·OW·Cout·K², 2·in·out+out", n * seed_fwd, n * (seed_fwd + seed_bwd),
       "pools, norms, activations, conv bias"},
  };
}

}  // namespace

std::vector<std::string> summary_model_names() {
  auto v = graph_model_names();
  v.push_back("bert-base");
  return v;
}

ModelSummary summarize_model(const std::string& name, std::int64_t batch, Precision precision,
                             std::int64_t seq) {
  const std::string n = to_lower(trim(name));
  if (batch < 1) throw_usage(fmt::format("--batch {} is not a batch size", batch), "give a batch of 1 or more");
  if (n == "bert-base") {
    const bert::BertConfig c = bert::bert_base_cased();
    if (seq < 1 || seq > c.max_positions)
      throw_usage(fmt::format("--seq {}: sequences run from 1 token to bert-base's {} positions", seq,
                              c.max_positions),
                  "give --seq between 1 and 512");
    ModelSummary s;
    s.model = "bert-base";
    s.batch = batch;
    s.seq = seq;
    s.precision = precision;
    from_bert(s, c);
    for (const auto& l : s.layers) s.total += l.cost;
    add_conventions(s);
    return s;
  }
  LayerGraph g = make_graph_model(n);  // unknown names fail here, naming the models
  ModelSummary s;
  s.model = g.name();
  s.batch = batch;
  s.precision = precision;
  // As the engine runs it: a small model in fp32 on the Sequential engine
  // (its layers' kernels), everything else on GraphNetwork.
  if (!is_network(g.name()) && precision == Precision::FP32)
    from_model(s, Model(std::move(g)));
  else
    from_graph(s, g);
  for (const auto& l : s.layers) s.total += l.cost;
  add_conventions(s);
  return s;
}

namespace {

// 1428386152 -> "1,428,386,152".
std::string grouped(std::int64_t v) {
  std::string digits = std::to_string(v < 0 ? -v : v), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return v < 0 ? "-" + out : out;
}

std::int64_t seed_of(const ModelSummary& s, const std::string& name_part) {
  std::int64_t sum = 0;
  for (const auto& l : s.layers)
    if (l.name.find(name_part) != std::string::npos) sum += l.seed001;
  return sum * s.batch;
}

const Convention& convention(const ModelSummary& s, const std::string& id) {
  for (const auto& c : s.conventions)
    if (c.id == id) return c;
  throw Error(ErrorKind::Internal, "no convention " + id);
}

// What seed 001 printed for the two networks (its section 4), against its own
// formulas as this summary computes them.
void seed_notes(Table& t, const ModelSummary& s) {
  if (s.batch != 1) return;
  const Convention& seed = convention(s, "seed001");
  if (s.model == "alexnet") {
    // The second layer (features.3): counted once in the backward the seed
    // printed, twice by its own rule.
    std::int64_t second = 0;
    int convs = 0;
    for (const auto& l : s.layers)
      if (l.seed001 > 0 && ++convs == 2) second = l.seed001;
    const std::int64_t bwd = seed.train - seed.forward;
    t.note(fmt::format("seed 001 printed AlexNet forward 1,428,386,152, total 4,144,604,856 (seed001 row: {}, {})",
                       grouped(seed.forward), grouped(seed.train)));
    t.note("but also backward 2,268,321,104, and its intensity used 3,696,707,256 = forward + that backward;");
    t.note(fmt::format("its rule gives backward {}; minus features.3's {} (counted once, not twice): {}",
                       grouped(bwd), grouped(second), grouped(bwd - second)));
  } else if (s.model == "resnet18") {
    const std::int64_t ds = seed_of(s, "downsample"), fc = seed_of(s, "fc");
    t.note(fmt::format("seed 001 printed 3,620,020,224 for ResNet-18's forward; its formulas give {} (seed001 row:",
                       grouped(seed.forward)));
    t.note(fmt::format("all 20 convolutions and fc), {} without the downsample convolutions, {} without fc.",
                       grouped(seed.forward - ds), grouped(seed.forward - fc)));
    t.note(fmt::format("the printed figure is {} lower and matches no choice of whole layers, nor a stage's size",
                       grouped(seed.forward - 3620020224LL)));
    t.note("off by one: a slip in its spreadsheet. Its backward, 4,918,296,576 (1.36 × forward), follows no rule.");
  }
}

}  // namespace

void add_summary_tables(Report& report, const ModelSummary& s) {
  const bool giga = s.total.train().flops >= 1e9;
  const double scale = giga ? 1e-9 : 1e-6;
  const std::string unit = giga ? "GF" : "MF";
  Table& t = report.add(Table("summary.layers", fmt::format("{}: per layer, batch {}, {}", s.model, s.batch,
                                                            to_string(s.precision))));
  t.col("layer", "Layer", "", -1, 22)
      .col("op", "Op", "", -1, 14)
      .col("out", "Output", "", -1, 14)
      .col("params", "Params")
      .col("fwd_flop", "Fwd", unit)
      .col("dgrad_flop", "Dgrad", unit)
      .col("wgrad_flop", "Wgrad", unit)
      .col("fwd_mb", "Fwd", "MB")
      .col("train_ai", "Train AI");
  for (const auto& l : s.layers)
    t.row({l.name, l.op, to_string(l.out), l.params, l.cost.forward.flops * scale, l.cost.input_grad.flops * scale,
           l.cost.weight_grad.flops * scale, l.cost.forward.bytes * 1e-6, l.cost.train().intensity()});
  t.row({std::string("total"), std::string(), std::string(), s.params, s.total.forward.flops * scale,
         s.total.input_grad.flops * scale, s.total.weight_grad.flops * scale, s.total.forward.bytes * 1e-6,
         s.total.train().intensity()});
  t.note(s.description);
  t.note(fmt::format("the engine's exact costs (GF/MF: GFLOP/MFLOP; an FMA is 2 FLOPs); bytes: inputs read once, "
                     "outputs written once"));
  t.note(fmt::format("activations in {}, parameters in fp32; Output: per sample; Dgrad, Wgrad: input and weight "
                     "gradients", to_string(activation_dtype(s.precision))));
  t.note("Train AI: FLOPs / bytes of the forward and both gradients; bn2d: batchnorm2d, avgpool2d: adaptive");
  t.note("the first layer's input gradient is counted, though training needs none");

  Table& c = report.add(Table("summary.conventions",
                              fmt::format("{}: FLOPs by convention, batch {} (parameters: {})", s.model, s.batch,
                                          grouped(s.params))));
  c.col("convention", "Convention")
      .col("counts", "Counts", "", -1, 36)
      .col("forward", "Forward")
      .col("train", "Train step")
      .col("leaves_out", "Leaves out", "", -1, 40);
  for (const auto& v : s.conventions)
    c.row({v.id, v.label, v.forward, v.train >= 0 ? Cell(v.train) : Cell(), v.leaves_out});
  if (s.seq > 0) {
    for (const char* line : {
             "a sample is one sequence: the tools' rows are per-sequence counts times the batch",
             "macs+attn: the linears' and attention's two matmuls (Q·Kᵀ, P·V) per head; softmax, LayerNorm, GELU, "
             "the embeddings' adds and the biases are what every MAC convention leaves out",
             "fvcore, torchinfo, ptflops and PyTorch's FlopCounterMode treat attention's matmuls, LayerNorm and "
             "GELU each their own way; their rows are not derived for bert-base yet",
             "deepspeed: its flops profiler's forward (2 × MACs) and fwd+bwd = 3 × forward",
             "seed001: its linear rule (2·in·out + out per token); the seeds count no transformer by hand"})
      c.note(line);
    return;
  }
  for (const char* line : {
           "macs: what fvcore and ptflops' aten backend count for convolutions and linears (a MAC is 1)",
           "fvcore: FlopCountAnalysis(model.eval()).total(); BatchNorm is 5/elem in train mode",
           "torchinfo: its Total mult-adds; ptflops: get_model_complexity_info with the pytorch backend",
           "deepspeed: its flops profiler's forward (2 × MACs) and fwd+bwd = 3 × forward",
           "torch: torch.utils.flop_counter.FlopCounterMode's total; no input gradient for the first layer",
           "torch: equal to PyTorch 2.11's count for alexnet and resnet18, forward and train (2026-11-27)",
           "seed001: seed 001's section 4; backward: the first layer's forward once, every other's twice",
           "the tools count at batch 1: their rows are that times the batch; only roofline has a true backward"})
    c.note(line);
  seed_notes(c, s);
}

}  // namespace roofline::engine

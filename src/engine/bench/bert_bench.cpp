// `roofline bench bert-base`: see roofline/engine/bert_bench.hpp.
#include "roofline/engine/bert_bench.hpp"

#include <fmt/format.h>

#include <filesystem>

#include "roofline/core/clock.hpp"
#include "roofline/core/error.hpp"
#include "roofline/core/stats.hpp"
#include "roofline/core/strings.hpp"
#include "roofline/engine/bench.hpp"
#include "roofline/engine/bert.hpp"
#include "roofline/engine/ops_optim.hpp"
#include "roofline/engine/ops_transformer.hpp"
#include "roofline/engine/rng.hpp"

namespace roofline::engine {

// `batch` sequences of `seq` random word pieces (ids 1 .. vocab−1), the last
// two thirds typed 1 (the context after a question), as the peer makes them.
// With `lens`, sequence b has lens[b] tokens instead (padded to the longest, or packed).
bert::BertBatch bert_synthetic_batch(const bert::BertConfig& c, std::int64_t batch, std::int64_t seq,
                                     const std::vector<std::int64_t>& lens, bool packed, std::uint64_t seed) {
  Rng r(seed);
  std::vector<std::vector<std::int32_t>> ids(static_cast<size_t>(batch)), types(static_cast<size_t>(batch));
  for (std::int64_t b = 0; b < batch; ++b) {
    const std::int64_t n = lens.empty() ? seq : lens[size_t(b)];
    for (std::int64_t t = 0; t < n; ++t) {
      ids[size_t(b)].push_back(static_cast<std::int32_t>(1 + r.below(static_cast<std::uint64_t>(c.vocab_size - 1))));
      types[size_t(b)].push_back(t >= n / 3 ? 1 : 0);
    }
  }
  return bert::BertBatch::make(ids, types, packed);
}

// A step's paper FLOPs: the forward (inference), or forward, backward and AdamW (training).
double bert_step_flops(const bert::BertConfig& c, std::int64_t batch, std::int64_t seq, DType dtype, bool train) {
  double f = 0;
  for (const auto& n : bert::describe_bert(c, batch, seq, dtype))
    f += train ? n.cost.train().flops : n.cost.forward.flops;
  if (train) {
    double params = 0;
    for (const auto& t : bert::bert_qa_tensors(c)) params += double(numel(t.shape));
    f += ops::AdamWShape{static_cast<std::int64_t>(params)}.cost().flops;
  }
  return f;
}

// The answers a synthetic batch trains towards: a span in the context of each sequence.
void bert_synthetic_targets(std::int64_t batch, std::int64_t seq, std::vector<std::int32_t>& start,
                            std::vector<std::int32_t>& end) {
  start.clear(), end.clear();
  for (std::int64_t b = 0; b < batch; ++b) {
    const std::int64_t s0 = std::min(seq - 1, seq / 3 + 1 + b % 7);
    start.push_back(static_cast<std::int32_t>(s0));
    end.push_back(static_cast<std::int32_t>(std::min(seq - 1, s0 + 3)));
  }
}

namespace {

// The forward's paper FLOPs on a batch as staged: the layers' over its rows, attention over the
// query-key pairs it computes (padding queries see the real keys; packed batches have no padding).
double batch_forward_flops(const bert::BertConfig& c, const bert::BertBatch& b, DType dtype) {
  double f = 0;
  for (const auto& n : bert::describe_bert(c, 1, b.tokens, dtype)) {
    if (n.op != "attention") {
      f += n.cost.forward.flops;
      continue;
    }
    f += bert::attention_shape(c, b, dtype).cost().forward.flops;
  }
  return f;
}

}  // namespace

std::vector<std::int64_t> bert_varied_lengths(std::int64_t batch, std::int64_t seq) {
  std::vector<std::int64_t> lens;
  const std::int64_t lo = std::max<std::int64_t>(1, seq / 4), span = seq - lo + 1;
  for (std::int64_t b = 0; b < batch; ++b) lens.push_back(b == 0 ? seq : lo + (b * 37) % span);
  return lens;
}

namespace {

// One cell: the staged batch's step (a forward, or a training step) timed after warm-up, as a NetRecord.
NetRecord time_cell(const BertBenchConfig& cfg, Context& ctx, bert::BertQA& model, bool train, std::int64_t batch,
                    std::int64_t tokens) {
  const bool cuda = ctx.is_cuda();
  const auto eager = [&] { train ? model.train_step() : model.forward(); };
  const auto replay = [&] { train ? model.train_step_graph() : model.forward_graph(); };
  // CPU cells past batch 1 take long: a quarter of the steps, at least 3 (as the networks' cells).
  const bool cpu_big = !cuda && batch > 1;
  const int steps = cpu_big ? std::max(3, cfg.steps / 4) : cfg.steps;
  const int warmup = cpu_big ? std::max(1, cfg.warmup / 4) : cfg.warmup;
  const bool graph = cfg.graphs && cuda;
  eager();  // every library plan and scratch buffer made before a capture
  for (int i = 0; i < warmup; ++i) graph ? replay() : eager();
  ctx.synchronize();
  std::vector<double> times;
  for (int i = 0; i < steps; ++i) {
    const double t0 = now_seconds();
    graph ? replay() : eager();
    ctx.synchronize();
    times.push_back(now_seconds() - t0);
  }
  const Summary s = summarize(times);
  // Attention's own time: its calls of one step (every layer's forward, and backward in training) timed
  // alone, eagerly, on the staged activations.
  std::vector<double> attn;
  model.attention_only(train);
  ctx.synchronize();
  for (int i = 0; i < std::min(steps, 10); ++i) {
    const double t0 = now_seconds();
    model.attention_only(train);
    ctx.synchronize();
    attn.push_back(now_seconds() - t0);
  }
  NetRecord r;
  r.mode = train ? "train" : "infer";
  r.batch = batch;
  r.steps = steps;
  r.median_s = s.median;
  r.iqr_s = s.q3 - s.q1;
  r.min_s = s.min;
  r.max_s = s.max;
  if (cuda) r.peak_bytes = double(model.device_bytes() + std::int64_t(ctx.scratch_bytes()));
  const DType dtype = model.dtype();
  r.params = {{"tokens_per_s", s.median > 0 ? double(tokens) / s.median : 0.0},
              {"weights", cfg.checkpoint.empty() ? "seeded" : cfg.checkpoint},
              {"graph", graph},
              {"attention", !cuda ? "roofline CPU loops (fp32)"
                            : dtype == DType::BF16 || dtype == DType::F16
                                ? "roofline fused kernel (tensor cores, mma.sync)"
                                : "roofline fused kernel (fp32 arithmetic, CUDA cores)"}};
  r.params["attention_s"] = summarize(attn).median;
  r.params["attention_flops"] = model.attention_flops(train);
  if (train && cuda) r.params["attention_backward"] = "cuBLASLt batched GEMMs over the scores in scratch (not fused)";
  if (train) {
    r.params["loss"] = model.last_loss();
    r.params["dropout"] = "hidden 0.1 (attention probabilities: none)";
    r.params["optimizer"] = "AdamW lr 3e-5, weight decay 0.01 on every parameter";
  }
  return r;
}

}  // namespace

std::vector<NetRecord> run_bert_bench(const BertBenchConfig& cfg, const NetSink& sink, const NetStatus& status) {
  bert::BertConfig bc = bert::bert_base_cased();
  std::optional<SafetensorsFile> weights;
  if (!cfg.checkpoint.empty()) {
    const std::filesystem::path dir(cfg.checkpoint);
    bc = bert::read_bert_config((dir / "config.json").string());
    weights = SafetensorsFile::open((dir / "model.safetensors").string());
  }
  std::vector<NetRecord> out;
  std::vector<std::pair<std::string, Backend>> devices;
  if (cfg.cpu) devices.push_back({"cpu", Backend::Cpu});
  if (cfg.gpu) devices.push_back({"gpu", Backend::Cuda});
  for (const auto& [dev, backend] : devices) {
    Context ctx(backend, cfg.gpu_index);
    for (Precision p : cfg.precisions) {
      if (backend != Backend::Cuda && p != Precision::FP32) continue;  // the CPU computes in fp32
      for (const bool train : {false, true}) {
        if ((train && !cfg.train) || (!train && !cfg.infer)) continue;
        const DType dtype = activation_dtype(p);
        bert::BertQA model(bc, ctx, dtype, allows_tf32(p));
        if (weights) model.load(*weights);
        if (train) model.enable_training({});
        for (std::int64_t seq : cfg.seqs) {
          if (seq > bc.max_positions)
            throw_usage(fmt::format("--seq {} is longer than the model's {} positions", seq, bc.max_positions),
                        fmt::format("use --seq {} or less", bc.max_positions));
          for (std::int64_t batch : cfg.batches) {
            status(fmt::format("bert-base {} {} {} batch {} seq {}", dev, to_string(p), train ? "train" : "infer",
                               batch, seq));
            // Equal lengths; or varied ones, padded then packed (inference only).
            const bool varied = cfg.varied && !train;
            const std::vector<std::int64_t> lens = varied ? bert_varied_lengths(batch, seq) : std::vector<std::int64_t>{};
            for (const bool packed : varied ? std::vector<bool>{false, true} : std::vector<bool>{false}) {
              const bert::BertBatch b = bert_synthetic_batch(bc, batch, seq, lens, packed);
              model.stage(b);
              if (train) {
                std::vector<std::int32_t> start, end;
                bert_synthetic_targets(batch, seq, start, end);
                model.stage_targets(start, end);
              }
              std::int64_t real = 0;
              for (auto l : b.len) real += l;
              NetRecord r = time_cell(cfg, ctx, model, train, batch, real);
              r.model = fmt::format("bert-base s{}{}", seq, varied ? (packed ? " varied packed" : " varied") : "");
              r.device = dev;
              r.precision = to_string(p);
              r.flops = varied ? batch_forward_flops(bc, b, dtype) : bert_step_flops(bc, batch, seq, dtype, train);
              r.params["seq"] = seq;
              if (varied) {
                r.params["lengths"] = lens;
                r.params["tokens"] = real;
                r.params["rows"] = b.tokens;
              }
              sink(r);
              out.push_back(r);
            }
          }
        }
      }
    }
  }
  return out;
}

Table bert_attention_table(const std::vector<NetRecord>& ours) {
  Table t("bench.bert.attention", "attention's own time per step or batch (roofline)");
  t.col("model", "Model").col("device", "Device").col("precision", "Precision").col("batch", "Batch").col("mode", "Mode");
  t.col("step_ms", "step", "ms", 3).col("attention_ms", "attention", "ms", 3).col("share_pct", "of step", "%", 1);
  t.col("tflops", "attention TFLOP/s", "", 2);
  for (const auto& r : ours) {
    if (!r.params.contains("attention_s")) continue;
    const double a = r.params["attention_s"].get<double>(), f = r.params.value("attention_flops", 0.0);
    t.row({r.model, r.device, r.precision, r.batch, r.mode, Cell(r.median_s * 1e3), Cell(a * 1e3),
           r.median_s > 0 ? Cell(100.0 * a / r.median_s) : Cell(), a > 0 ? Cell(f / a / 1e12) : Cell()});
  }
  t.note("attention: every layer's attention calls of one step (forward; in training its backward too) timed "
         "alone, launched eagerly on the step's own activations; FLOPs from the op's costs (the backward's "
         "as flash attention counts them: the GPU's batched-GEMM backward moves more bytes, not more FLOPs)");
  return t;
}

std::vector<NetRecord> run_bert_peer(const BertBenchConfig& cfg) {
  if (cfg.peer != "pytorch")
    throw_usage(fmt::format("unknown peer '{}'", printable(cfg.peer)), "the only peer is pytorch (--peer pytorch)");
  const std::string script = find_peer_script(cfg.peer_script, "peers/pytorch_bert.py");
  std::vector<std::string> precisions, batches, seqs;
  for (Precision p : cfg.precisions) precisions.push_back(to_string(p));
  for (auto b : cfg.batches) batches.push_back(std::to_string(b));
  for (auto s : cfg.seqs) seqs.push_back(std::to_string(s));
  std::vector<NetRecord> out;
  for (const char* dev : {"cpu", "gpu"}) {
    if ((std::string(dev) == "cpu" && !cfg.cpu) || (std::string(dev) == "gpu" && !cfg.gpu)) continue;
    const std::string cmd = fmt::format(
        "python3 '{}' bench --device {} --modes {} --lengths {} --precisions {} --batches {} --seqs {} --steps {} "
        "--warmup {}{}",
        script, std::string(dev) == "gpu" ? "cuda" : "cpu",
        cfg.infer && cfg.train ? "infer,train" : cfg.train ? "train" : "infer", cfg.varied ? "varied" : "equal",
        join(precisions, ","), join(batches, ","), join(seqs, ","), cfg.steps, cfg.warmup,
        cfg.peer_compile ? " --compile" : "");
    const nlohmann::json j = run_peer_command(cmd);
    if (!j.contains("records") || !j["records"].is_array())
      throw Error(ErrorKind::Input, "the BERT peer's output has no \"records\" list",
                  "run peers/pytorch_bert.py bench by hand to see why");
    const bert::BertConfig bc = bert::bert_base_cased();
    for (const auto& x : j["records"]) {
      NetRecord r = parse_peer_record(x);
      const std::string suffix = " varied";  // a padded batch of bert_varied_lengths
      const bool varied = r.model.size() > suffix.size() &&
                          r.model.compare(r.model.size() - suffix.size(), suffix.size(), suffix) == 0;
      const std::string name = varied ? r.model.substr(0, r.model.size() - suffix.size()) : r.model;
      const std::string prefix = "bert-base s", digits = name.substr(std::min(prefix.size(), name.size()));
      if (name.rfind(prefix, 0) != 0 || digits.empty() || digits.size() > 6 ||
          digits.find_first_not_of("0123456789") != std::string::npos)
        throw Error(ErrorKind::Input, fmt::format("the BERT peer sent a record of model '{}'", printable(r.model)),
                    "run peers/pytorch_bert.py bench by hand to see why");
      const std::int64_t seq = std::stoll(digits);
      const DType dtype = activation_dtype(parse_precision(r.precision));
      r.params["seq"] = seq;
      if (!varied) {
        r.flops = bert_step_flops(bc, r.batch, seq, dtype, r.mode == "train");
        out.push_back(std::move(r));
        continue;
      }
      if (r.batch < 1 || r.batch > 1 << 16)
        throw Error(ErrorKind::Input, fmt::format("the BERT peer sent a varied cell of batch {}", r.batch),
                    "run peers/pytorch_bert.py bench by hand to see why");
      // Hugging Face pads: its one padded cell stands beside both of ours, the padded and the packed.
      r.flops = batch_forward_flops(bc, bert_synthetic_batch(bc, r.batch, seq, bert_varied_lengths(r.batch, seq)), dtype);
      r.params["lengths"] = bert_varied_lengths(r.batch, seq);
      NetRecord packed = r;
      packed.model += " packed";
      packed.params["peer_batch"] = "padded (Hugging Face has no packed path)";
      out.push_back(std::move(r));
      out.push_back(std::move(packed));
    }
  }
  return out;
}

}  // namespace roofline::engine

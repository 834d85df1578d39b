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
#include "roofline/engine/rng.hpp"

namespace roofline::engine {

namespace {

// `batch` sequences of `seq` random word pieces (ids 1 .. vocab−1), the last
// two thirds typed 1 (the context after a question), as the peer makes them.
bert::BertBatch synthetic_batch(const bert::BertConfig& c, std::int64_t batch, std::int64_t seq) {
  Rng r(7);
  std::vector<std::vector<std::int32_t>> ids(static_cast<size_t>(batch)), types(static_cast<size_t>(batch));
  for (std::int64_t b = 0; b < batch; ++b)
    for (std::int64_t t = 0; t < seq; ++t) {
      ids[size_t(b)].push_back(static_cast<std::int32_t>(1 + r.below(static_cast<std::uint64_t>(c.vocab_size - 1))));
      types[size_t(b)].push_back(t >= seq / 3 ? 1 : 0);
    }
  return bert::BertBatch::make(ids, types, false);
}

// A step's paper FLOPs: the forward (inference), or forward, backward and AdamW (training).
double step_flops(const bert::BertConfig& c, std::int64_t batch, std::int64_t seq, DType dtype, bool train) {
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
void synthetic_targets(std::int64_t batch, std::int64_t seq, std::vector<std::int32_t>& start,
                       std::vector<std::int32_t>& end) {
  start.clear(), end.clear();
  for (std::int64_t b = 0; b < batch; ++b) {
    const std::int64_t s0 = std::min(seq - 1, seq / 3 + 1 + b % 7);
    start.push_back(static_cast<std::int32_t>(s0));
    end.push_back(static_cast<std::int32_t>(std::min(seq - 1, s0 + 3)));
  }
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
          model.stage(synthetic_batch(bc, batch, seq));
          if (train) {
            std::vector<std::int32_t> start, end;
            synthetic_targets(batch, seq, start, end);
            model.stage_targets(start, end);
          }
          const auto eager = [&] { train ? model.train_step() : model.forward(); };
          const auto replay = [&] { train ? model.train_step_graph() : model.forward_graph(); };
          // CPU cells past batch 1 take long: a quarter of the steps, at least 3 (as the networks' cells).
          const bool cpu_big = backend != Backend::Cuda && batch > 1;
          const int steps = cpu_big ? std::max(3, cfg.steps / 4) : cfg.steps;
          const int warmup = cpu_big ? std::max(1, cfg.warmup / 4) : cfg.warmup;
          const bool graph = cfg.graphs && backend == Backend::Cuda;
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
          NetRecord r;
          r.model = fmt::format("bert-base s{}", seq);
          r.device = dev;
          r.precision = to_string(p);
          r.mode = train ? "train" : "infer";
          r.batch = batch;
          r.steps = steps;
          r.median_s = s.median;
          r.iqr_s = s.q3 - s.q1;
          r.min_s = s.min;
          r.max_s = s.max;
          r.flops = step_flops(bc, batch, seq, dtype, train);
          if (backend == Backend::Cuda) r.peak_bytes = double(model.device_bytes() + std::int64_t(ctx.scratch_bytes()));
          r.params = {{"seq", seq}, {"tokens_per_s", s.median > 0 ? double(batch * seq) / s.median : 0.0},
                      {"weights", cfg.checkpoint.empty() ? "seeded" : cfg.checkpoint},
                      {"graph", graph},
                      {"attention", backend != Backend::Cuda ? "roofline CPU loops (fp32)"
                                    : dtype == DType::BF16 || dtype == DType::F16
                                        ? "roofline fused kernel (tensor cores, mma.sync)"
                                        : "roofline fused kernel (fp32 arithmetic, CUDA cores)"}};
          if (train && backend == Backend::Cuda)
            r.params["attention_backward"] = "cuBLASLt batched GEMMs over the scores in scratch (not fused)";
          if (train) {
            r.params["loss"] = model.last_loss();
            r.params["dropout"] = "hidden 0.1 (attention probabilities: none)";
            r.params["optimizer"] = "AdamW lr 3e-5, weight decay 0.01 on every parameter";
          }
          sink(r);
          out.push_back(r);
        }
      }
      }
    }
  }
  return out;
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
        "python3 '{}' bench --device {} --modes {} --precisions {} --batches {} --seqs {} --steps {} --warmup {}{}",
        script,
        std::string(dev) == "gpu" ? "cuda" : "cpu",
        cfg.infer && cfg.train ? "infer,train" : cfg.train ? "train" : "infer", join(precisions, ","), join(batches, ","), join(seqs, ","),
        cfg.steps, cfg.warmup, cfg.peer_compile ? " --compile" : "");
    const nlohmann::json j = run_peer_command(cmd);
    if (!j.contains("records") || !j["records"].is_array())
      throw Error(ErrorKind::Input, "the BERT peer's output has no \"records\" list",
                  "run peers/pytorch_bert.py bench by hand to see why");
    const bert::BertConfig bc = bert::bert_base_cased();
    for (const auto& x : j["records"]) {
      NetRecord r = parse_peer_record(x);
      const std::string prefix = "bert-base s", digits = r.model.substr(std::min(prefix.size(), r.model.size()));
      if (r.model.rfind(prefix, 0) != 0 || digits.empty() || digits.size() > 6 ||
          digits.find_first_not_of("0123456789") != std::string::npos)
        throw Error(ErrorKind::Input, fmt::format("the BERT peer sent a record of model '{}'", printable(r.model)),
                    "run peers/pytorch_bert.py bench by hand to see why");
      const std::int64_t seq = std::stoll(digits);
      r.flops = step_flops(bc, r.batch, seq, activation_dtype(parse_precision(r.precision)), r.mode == "train");
      r.params["seq"] = seq;
      out.push_back(std::move(r));
    }
  }
  return out;
}

}  // namespace roofline::engine

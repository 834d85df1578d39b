// Data-parallel training cells and the scaling table: see roofline/engine/net_scaling.hpp.
#include "roofline/engine/net_scaling.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <memory>

#include "roofline/build_info.hpp"
#include "roofline/core/env.hpp"
#include "roofline/core/error.hpp"
#include "roofline/core/stats.hpp"
#include "roofline/core/strings.hpp"
#include "roofline/engine/bench.hpp"
#include "roofline/engine/bert.hpp"
#include "roofline/engine/bert_bench.hpp"
#include "roofline/engine/bert_text.hpp"
#include "roofline/engine/graph_network.hpp"
#include "roofline/engine/nccl_sync.hpp"
#include "roofline/engine/rendezvous.hpp"
#include "src/engine/bench/net_cell.hpp"
#include "src/engine/cuda/cuda_api.hpp"

namespace roofline::engine {

namespace {

// What every rank must agree on: the build and the cells.
std::string fingerprint(const NetBenchConfig& cfg) {
  std::vector<std::string> p, b;
  for (Precision x : cfg.precisions) p.push_back(to_string(x));
  for (auto x : cfg.batches) b.push_back(std::to_string(x));
  return fmt::format("build {} ({}); models {}; seq {}; precisions {}; batches {}; steps {}+{}; graphs {}; gradients {}; layout {}",
                     build::kGitSha, build::kVersion, join(cfg.models, ","), cfg.seq, join(p, ","), join(b, ","), cfg.warmup,
                     cfg.steps, cfg.graphs ? "on" : "off", cfg.grad_dtype == DType::BF16 ? "bf16" : "fp32",
                     cfg.layout ? to_string(*cfg.layout) : "default");
}

std::string join_doubles(const std::vector<double>& v) {
  std::string s;
  for (double x : v) s += fmt::format("{:.9g} ", x);
  return s;
}

std::vector<double> split_doubles(const std::string& s) {
  std::vector<double> v;
  for (const auto& w : split(trim(s), ' '))
    if (!w.empty()) v.push_back(std::stod(w));
  return v;
}

// A fault for the tests of a rank that dies: ROOFLINE_DP_FAULT="exit:RANK:STEP"
// makes that rank exit with status 9 before that step of its first cell.
struct Fault {
  int rank = -1, step = -1;
};
Fault read_fault() {
  Fault f;
  const auto v = env::get(env::Var::DpFault);
  if (!v || v->empty()) return f;
  const auto parts = split(*v, ':');
  if (parts.size() != 3 || parts[0] != "exit")
    throw Error(ErrorKind::Usage, fmt::format("ROOFLINE_DP_FAULT='{}'", printable(*v)),
                "it takes exit:RANK:STEP (a test hook: that rank exits before that step)");
  f.rank = std::stoi(parts[1]);
  f.step = std::stoi(parts[2]);
  return f;
}

// One rank's cell, whatever the model: the step (replayed once captured),
// its capture, and what the record says of it.
struct RankCell {
  std::string name;                        // the record's model
  std::function<void(bool graphs)> step;
  std::function<void()> capture;
  std::function<float()> loss;             // synchronous
  std::function<double()> bytes;           // the model's planned device memory
  double flops = 0;                        // per GPU and step
  size_t buckets = 0;
  std::int64_t bucket_bytes = 0;           // of gradients all-reduced per step
  nlohmann::json params = nlohmann::json::object();
  std::shared_ptr<void> keep;              // the model
};

RankCell net_cell(const NetBenchConfig& cfg, Context& ctx, dist::GradSync* sync, const std::string& model,
                  Precision p, std::int64_t batch, int rank) {
  auto g = std::make_shared<LayerGraph>(make_graph_model(model));
  auto net = std::make_shared<GraphNetwork>(*g, ctx, batch, cell_options(cfg, *g, p, true));
  dist::BucketPlanConfig bc;
  bc.grad_dtype = cfg.grad_dtype;
  if (sync) net->set_grad_sync(sync, bc);
  fill_synthetic(*net, batch, 1 + static_cast<std::uint64_t>(rank));
  RankCell c;
  c.name = model;
  c.step = [net, batch](bool) { net->captured() ? net->replay() : net->train_step(batch); };
  c.capture = [net, batch] { net->capture_train_step(batch); };
  c.loss = [net] { return net->loss(); };
  c.bytes = [net] { return static_cast<double>(net->memory().total()); };
  c.flops = g->cost(batch, activation_dtype(p)).train().flops;
  for (const auto& b : net->grad_buckets()) c.bucket_bytes += b.bytes;
  c.buckets = net->grad_buckets().size();
  const auto m = net->memory();
  c.params = {{"format", to_string(net->format())},
              {"memory", {{"params", m.params}, {"grads", m.grads}, {"optimizer", m.optimizer}, {"copies", m.copies},
                          {"arena", m.arena}}}};
  c.keep = std::make_shared<std::pair<std::shared_ptr<LayerGraph>, std::shared_ptr<GraphNetwork>>>(g, net);
  return c;
}

// BERT-base question answering's fine-tuning step (bert_bench's synthetic
// sequences of cfg.seq tokens, seeded by rank), its buckets per encoder layer.
RankCell bert_cell(const NetBenchConfig& cfg, Context& ctx, dist::GradSync* sync, Precision p, std::int64_t batch,
                   int rank) {
  const bert::BertConfig bc = bert::bert_base_cased();
  if (cfg.seq < 1 || cfg.seq > bc.max_positions)
    throw_usage(fmt::format("--seq {}", cfg.seq), fmt::format("use 1 to {}", bc.max_positions));
  const DType dtype = activation_dtype(p);
  auto model = std::make_shared<bert::BertQA>(bc, ctx, dtype, allows_tf32(p));
  model->init_random(1);
  model->enable_training({});
  if (sync) model->set_grad_sync(sync);
  model->stage(bert_synthetic_batch(bc, batch, cfg.seq, {}, false, 7 + static_cast<std::uint64_t>(rank)));
  std::vector<std::int32_t> start, end;
  bert_synthetic_targets(batch, cfg.seq, start, end);
  model->stage_targets(start, end);
  RankCell c;
  c.name = fmt::format("bert-base s{}", cfg.seq);
  c.step = [model](bool graphs) { graphs ? model->train_step_graph() : model->train_step(); };
  c.capture = [model] {
    model->train_step();  // plans and workspaces first, outside the capture
    model->train_step_graph();
  };
  c.loss = [model] { return model->last_loss(); };
  std::int64_t params = 0;
  for (const auto& t : bert::bert_qa_tensors(bc)) params += numel(t.shape);
  c.bytes = [params] { return static_cast<double>(params) * 4 * 4; };  // fp32 weights, gradients and AdamW's two moments
  c.flops = bert_step_flops(bc, batch, cfg.seq, dtype, true);
  c.buckets = sync ? bc.layers + 2 : 0;  // the QA head, each layer, the fp32 tensors
  c.bucket_bytes = sync ? params * (cfg.grad_dtype == DType::BF16 ? 2 : 4) : 0;
  c.params = {{"seq", cfg.seq}, {"memory", "parameters, gradients and AdamW's state only"}};
  c.keep = model;
  return c;
}

}  // namespace

std::vector<NetRecord> run_net_bench_rank(const NetBenchConfig& cfg, const dist::RankEnv& env,
                                          const NetStatus& status) {
  using namespace std::chrono;
  const milliseconds timeout = seconds(std::max(1, cfg.rank_timeout_s));
  const Fault fault = read_fault();
  dist::Rendezvous rv(env.rank, env.world, env.master_addr, dist::rendezvous_port(env), timeout);
  const std::vector<std::string> fps = rv.all_gather(fingerprint(cfg));
  for (int r = 1; r < env.world; ++r)
    if (fps[size_t(r)] != fps[0])
      throw Error(ErrorKind::Input,
                  fmt::format("rank {} runs a different build or benchmark from rank 0:\n  rank 0: {}\n  rank {}: {}", r,
                              fps[0], r, fps[size_t(r)]),
                  "start every rank from the same roofline build with the same arguments");
  Context ctx(Backend::Cuda, env.local_rank);
  std::unique_ptr<dist::NcclSync> sync;
  if (env.world > 1) {
    const std::vector<std::string> ids = rv.all_gather(env.rank == 0 ? dist::nccl_unique_id() : std::string());
    sync = std::make_unique<dist::NcclSync>(ctx, ids[0], env.rank, env.world, cfg.grad_dtype);
  }
  const auto wait = [&] {
    if (sync)
      sync->wait(ctx, timeout);
    else
      ctx.synchronize();
  };
  std::vector<NetRecord> out;
  int cell = 0;
  for (const auto& model : cfg.models)
    for (Precision p : cfg.precisions)
      for (std::int64_t batch : cfg.batches) {
        if (env.rank == 0)
          status(fmt::format("{} gpu {} batch {} per GPU on {} GPU{}: data-parallel training", model, to_string(p),
                             batch, env.world, env.world > 1 ? "s" : ""));
        const RankCell c = model == "bert-base" ? bert_cell(cfg, ctx, sync.get(), p, batch, env.rank)
                                                : net_cell(cfg, ctx, sync.get(), model, p, batch, env.rank);
        const bool graphs = cfg.graphs;
        int step_no = 0;
        const auto step = [&] {
          if (cell == 0 && env.rank == fault.rank && step_no == fault.step) {
            std::fprintf(stderr, "roofline: rank %d exits before step %d (ROOFLINE_DP_FAULT)\n", env.rank, step_no);
            std::_Exit(9);
          }
          ++step_no;
          c.step(graphs);
        };
        if (graphs) {
          c.capture();  // one eager step (collectives included), then the capture
          wait();
        }
        for (int i = 0; i < cfg.warmup; ++i) step();
        wait();
        std::vector<double> t;
        for (int i = 0; i < cfg.steps; ++i) t.push_back(detail::cuda_time(ctx.cuda(), step, 1, wait));
        // A data-parallel step is as slow as its slowest rank.
        const auto all_t = rv.all_gather(join_doubles(t));
        const auto losses = rv.all_gather(fmt::format("{:.9g}", c.loss()));
        const auto peaks = rv.all_gather(std::to_string(c.bytes() + ctx.scratch_bytes()));
        ++cell;
        if (env.rank != 0) continue;
        std::vector<double> slowest = t;
        for (int r = 1; r < env.world; ++r) {
          const auto v = split_doubles(all_t[size_t(r)]);
          for (size_t i = 0; i < slowest.size() && i < v.size(); ++i) slowest[i] = std::max(slowest[i], v[i]);
        }
        double loss = 0, peak = 0;
        for (int r = 0; r < env.world; ++r) {
          loss += std::stod(losses[size_t(r)]) / env.world;
          peak = std::max(peak, std::stod(peaks[size_t(r)]));
        }
        NetRecord r;
        r.model = c.name;
        r.device = "gpu";
        r.precision = to_string(p);
        r.mode = "train";
        r.batch = batch;
        r.gpus = env.world;
        r.steps = cfg.steps;
        const Summary s = summarize(slowest);
        r.median_s = s.median, r.iqr_s = s.iqr(), r.min_s = s.min, r.max_s = s.max;
        r.flops = c.flops * env.world;
        r.loss = loss;
        r.peak_bytes = peak;
        r.params = c.params;
        r.params["graphs"] = graphs;
        r.params["data"] = "synthetic, seeded by rank";
        r.params["launcher"] = env.launcher.empty() ? std::string("none (one process)") : env.launcher;
        if (sync) {
          r.params["gradients"] = cfg.grad_dtype == DType::BF16 ? "bf16" : "fp32";
          r.params["buckets"] = c.buckets;
          r.params["bucket_bytes"] = c.bucket_bytes;
          r.params["nccl"] = dist::nccl_version();
        }
        out.push_back(std::move(r));
      }
  rv.barrier();  // no rank leaves (and tears down its communicator) while another still reads
  return out;
}

nlohmann::json net_records_to_json(const std::vector<NetRecord>& records) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& r : records) {
    nlohmann::json x = {{"source", r.source}, {"model", r.model},   {"device", r.device}, {"precision", r.precision},
                        {"mode", r.mode},     {"batch", r.batch},   {"gpus", r.gpus},     {"steps", r.steps},
                        {"median_s", r.median_s}, {"iqr_s", r.iqr_s}, {"min_s", r.min_s}, {"max_s", r.max_s},
                        {"flops", r.flops},   {"params", r.params}};
    if (r.peak_bytes) x["peak_bytes"] = *r.peak_bytes;
    if (r.loss && std::isfinite(*r.loss)) x["loss"] = *r.loss;
    a.push_back(std::move(x));
  }
  return {{"records", a}};
}

std::vector<NetRecord> net_records_from_json(const nlohmann::json& j) {
  if (!j.contains("records") || !j["records"].is_array())
    throw Error(ErrorKind::Input, "a rank's results hold no records", "the rank failed before it wrote them");
  std::vector<NetRecord> out;
  for (const auto& x : j["records"]) {
    NetRecord r = parse_peer_record(x);
    r.flops = x.value("flops", 0.0);
    if (x.contains("params") && x["params"].is_object()) r.params = x["params"];
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<NetRecord> run_net_ddp_peer(const NetBenchConfig& cfg) {
  const std::string script = find_peer_script(cfg.peer_script, "peers/pytorch_ddp.py");
  std::vector<std::string> precisions, batches, gpus, layouts, lrs;
  for (Precision p : cfg.precisions) {
    precisions.push_back(to_string(p));
    layouts.push_back(
        fmt::format("gpu/{}={}", to_string(p), to_string(cfg.layout.value_or(default_format(Backend::Cuda, p)))));
  }
  for (auto b : cfg.batches) batches.push_back(std::to_string(b));
  for (int n : cfg.gpus) gpus.push_back(std::to_string(n));
  for (const auto& m : cfg.models) lrs.push_back(fmt::format("{}={}", m, recipe_learning_rate(m)));
  const std::string cmd = fmt::format(
      "python3 '{}' --models {} --precisions {} --batches {} --gpus {} --steps {} --warmup {} --layouts {} --lrs {} "
      "--seq {}",
      script, join(cfg.models, ","), join(precisions, ","), join(batches, ","), join(gpus, ","), cfg.steps, cfg.warmup,
      join(layouts, ","), join(lrs, ","), cfg.seq);
  const nlohmann::json j = run_peer_command(cmd);
  if (!j.contains("records") || !j["records"].is_array())
    throw Error(ErrorKind::Input, "the DDP peer printed no records", "run peers/pytorch_ddp.py by hand to see why");
  std::vector<NetRecord> out;
  for (const auto& x : j["records"]) {
    NetRecord r = parse_peer_record(x);
    const DType dtype = activation_dtype(parse_precision(r.precision));
    // The same paper FLOPs as roofline's cell of that model, over every GPU.
    r.flops = (r.model.rfind("bert-base", 0) == 0 ? bert_step_flops(bert::bert_base_cased(), r.batch, cfg.seq, dtype, true)
                                                  : make_graph_model(r.model).cost(r.batch, dtype).train().flops) *
              r.gpus;
    out.push_back(std::move(r));
  }
  return out;
}

Table net_scaling_table(const std::vector<NetRecord>& ours, const std::vector<NetRecord>& peer) {
  Table t("bench.nets.scaling", "Data-parallel training: scaling over GPUs (batch per GPU)");
  t.col("model", "Model").col("precision", "Precision").col("batch", "Batch/GPU").col("gpus", "GPUs");
  t.col("step_ms", "step", "ms", 2).col("images_s", "images/s", "", 0).col("efficiency", "efficiency", "%", 1);
  t.col("added_ms", "added", "ms", 2);
  t.col("ddp_step_ms", "DDP step", "ms", 2).col("ddp_images_s", "DDP images/s", "", 0);
  t.col("ddp_efficiency", "DDP eff.", "%", 1).col("vs_ddp", "× DDP", "×", 2);
  const auto find = [](const std::vector<NetRecord>& v, const NetRecord& like, int gpus) -> const NetRecord* {
    for (const auto& r : v)
      if (r.model == like.model && r.precision == like.precision && r.batch == like.batch && r.gpus == gpus &&
          r.mode == "train" && r.device == "gpu")
        return &r;
    return nullptr;
  };
  const auto ms = [](const NetRecord* r) { return r ? Cell{r->median_s * 1e3} : Cell{}; };
  for (const auto& r : ours) {
    if (r.mode != "train") continue;
    const NetRecord* one = find(ours, r, 1);
    const NetRecord* d = find(peer, r, r.gpus);
    const NetRecord* d1 = find(peer, r, 1);
    const auto eff = [](const NetRecord* base, const NetRecord* x) {
      return base && x && x->median_s > 0 ? Cell{100.0 * base->median_s / x->median_s} : Cell{};
    };
    t.row({r.model, r.precision, r.batch, static_cast<std::int64_t>(r.gpus), ms(&r), r.images_per_s(), eff(one, &r),
           one ? Cell{(r.median_s - one->median_s) * 1e3} : Cell{}, ms(d), d ? Cell{d->images_per_s()} : Cell{},
           eff(d1, d), d && r.median_s > 0 ? Cell{d->median_s / r.median_s} : Cell{}});
  }
  t.note("efficiency: the one-GPU step time over this one (each GPU does the same work: weak scaling); added: the "
         "step's growth over one GPU, which is the communication not hidden behind backward plus what the "
         "collectives slow the kernels they overlap; a step is the slowest rank's");
  if (!peer.empty())
    t.note("DDP: PyTorch DistributedDataParallel (25 MiB buckets, fp32 gradients) on the same GPUs in the same call; "
           "× DDP above 1: roofline is faster");
  return t;
}

}  // namespace roofline::engine

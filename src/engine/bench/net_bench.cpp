// The graph networks' benchmark: synthetic ImageNet-shaped batches (as
// PyTorch's --dummy), a warm-up, then each step timed on its own (CUDA events
// around one graph replay on the GPU, the wall clock on the CPU); the median
// and spread are kept.
#include "roofline/engine/net_bench.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "roofline/core/error.hpp"
#include "roofline/core/stats.hpp"
#include "roofline/core/strings.hpp"
#include "roofline/engine/bench.hpp"
#include "roofline/engine/graph_network.hpp"
#include "roofline/engine/graph_weights.hpp"
#include "roofline/core/json_text.hpp"
#include "roofline/engine/rng.hpp"
#include "roofline/engine/trainer.hpp"
#include "roofline/store/db.hpp"
#include "src/engine/bench/net_cell.hpp"
#include "src/engine/bench/net_data.hpp"
#include "src/engine/cuda/cuda_api.hpp"

namespace roofline::engine {

namespace {
CounterSourceFactory& counter_slot() {
  static CounterSourceFactory f;
  return f;
}
}  // namespace

void register_counter_source_factory(CounterSourceFactory f) { counter_slot() = std::move(f); }

void fill_synthetic(GraphNetwork& net, std::int64_t batch, std::uint64_t seed) {
  const Shape& s = net.graph().input_shape();
  Rng rng(seed);
  std::vector<float> x(static_cast<size_t>(batch * numel(s)));
  for (auto& v : x) v = rng.normal();
  std::vector<std::int32_t> y(static_cast<size_t>(batch));
  for (auto& v : y) v = static_cast<std::int32_t>(rng.below(static_cast<std::uint64_t>(net.graph().classes())));
  net.set_batch(x, y, batch);
}

GraphOptions cell_options(const NetBenchConfig& cfg, const LayerGraph& g, Precision p, bool train) {
  GraphOptions o;
  o.precision = p;
  o.sgd.lr = recipe_learning_rate(g.name());
  o.training = train;
  o.fold_batchnorm = cfg.fold_batchnorm;
  o.format = cfg.layout;
  return o;
}


const CounterSourceFactory& counter_source_factory() { return counter_slot(); }

namespace {

// A loss-scaled training cell (fp16): the final scale and the skipped steps
// in its params, and a warning when any of the `ran` steps was skipped.
void note_loss_scaling(NetRecord& r, const GraphNetwork& net, int ran) {
  const float scale = net.loss_scale();
  const std::int64_t skipped = net.skipped_steps();
  r.params["loss_scale"] = scale;
  r.params["skipped_steps"] = skipped;
  if (skipped > 0)
    r.warnings.push_back(fmt::format("{} {} {} b{} train: {} of {} steps skipped (gradient overflow; loss scale now "
                                     "{}), as torch.amp.GradScaler does",
                                     r.model, r.device, r.precision, r.batch, skipped, ran, scale));
}

NetRecord measure_cell_at(const LayerGraph& g, Context& ctx, const NetBenchConfig& cfg, Precision p,
                          std::int64_t batch, bool train, const NetData* data) {
  NetRecord r;
  r.model = g.name();
  r.device = ctx.is_cuda() ? "gpu" : "cpu";
  r.precision = to_string(p);
  r.mode = train ? "train" : "infer";
  r.batch = batch;
  const GraphOptions o = cell_options(cfg, g, p, train);
  GraphNetwork net(g, ctx, batch, o);
  if (!cfg.weights.empty()) net.load_state(read_state(g, cfg.weights));
  std::unique_ptr<InputStager> feed;  // --data: a loader batch before each step
  if (data) {
    feed = std::make_unique<InputStager>(net, data->folder(train), train, cfg.data_threads);
    feed->prefetch();
    feed->load();
  } else {
    fill_synthetic(net, batch, 1);
  }
  const bool graphs = cfg.graphs && ctx.is_cuda();
  int ran = 0;  // training steps run, for the loss-scaling note
  const auto step = [&] {
    ++ran;
    if (net.captured())
      net.replay();
    else if (train)
      net.train_step(batch);
    else
      net.forward(batch, false);
  };
  if (graphs) {
    if (train)
      net.capture_train_step(batch);
    else
      net.capture_inference(batch);
  }
  r.steps = ctx.is_cuda() || batch == 1 ? cfg.steps : std::max(3, cfg.steps / 4);
  // The GPU busy fraction: kernel time (CUPTI) over the wall time of steps run
  // back to back: the data-fed steps themselves, or as many synthetic steps
  // again after the timed ones (which sync around each event pair).
  std::unique_ptr<KernelTimeSource> busy_source;
  std::chrono::steady_clock::time_point busy_t0;
  const auto busy_start = [&] {
    if (!ctx.is_cuda()) return;
    if (!kernel_time_factory()) {
      r.busy_note = "needs the profiler's in-process CUPTI tracer, which this build does not register";
      return;
    }
    busy_source = kernel_time_factory()(cfg.gpu_index);
    ctx.synchronize();
    busy_source->start();
    busy_t0 = std::chrono::steady_clock::now();
  };
  const auto busy_stop = [&] {
    if (!busy_source) return;
    ctx.synchronize();
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - busy_t0).count();
    const double busy = busy_source->stop();
    busy_source.reset();
    if (std::isfinite(busy) && wall > 0)
      r.busy_fraction = busy / wall;
    else
      r.busy_note = "the CUPTI tracer was not available (another profiler holds it?)";
  };
  std::vector<double> t;
  DataTiming dt;
  if (feed) {
    busy_start();
    dt = run_data_steps(*feed, step, cfg.warmup, r.steps);
    busy_stop();
    t = dt.intervals;
  }
  for (int i = 0; i < cfg.warmup && !feed; ++i) step();
  ctx.synchronize();
  for (int i = 0; i < r.steps && !feed; ++i) {
    if (ctx.is_cuda()) {
      t.push_back(detail::cuda_time(ctx.cuda(), step, 1));
    } else {
      const auto a = std::chrono::steady_clock::now();
      step();
      t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count());
    }
  }
  const Summary s = summarize(t);
  r.median_s = s.median, r.iqr_s = s.iqr(), r.min_s = s.min, r.max_s = s.max;
  if (ctx.is_cuda()) {
    if (!feed) {
      busy_start();
      for (int i = 0; i < r.steps; ++i) step();
      busy_stop();
    }
    if (cfg.profile && kernel_time_factory()) {
      // Eager steps, so that each kernel runs inside its layer's NVTX range.
      auto source = kernel_time_factory()(cfg.gpu_index);
      ctx.synchronize();
      source->start();
      for (int i = 0; i < cfg.profile_steps; ++i, ++ran) {
        if (train)
          net.train_step(batch);
        else
          net.forward(batch, false);
      }
      ctx.synchronize();
      (void)source->stop();
      if (cfg.counters) {
        if (!counter_source_factory())
          throw Error(ErrorKind::Unsupported, "bench --counters: this build has no hardware-counter source",
                      "build roofline with CUDA (CUPTI's range profiler) to count a layer's FLOPs and bytes");
        for (int run = 0; run < kCounterRuns; ++run, ++ran) {
          auto counters = counter_source_factory()(cfg.gpu_index, run);
          ctx.synchronize();
          counters->start();
          if (train)
            net.train_step(batch);
          else
            net.forward(batch, false);
          ctx.synchronize();
          counters->stop();
        }
      }
    }
  } else {
    r.busy_note = "GPU only";
  }
  // Inference counts what runs: BatchNorm with running statistics, or folded away.
  r.flops = train ? g.cost(batch, activation_dtype(p)).train().flops
                  : inference_cost(g, batch, activation_dtype(p), net.folded_batchnorms() > 0).flops;
  if (train) r.loss = net.loss();
  if (ctx.is_cuda()) r.peak_bytes = static_cast<double>(net.memory().total() + ctx.scratch_bytes());
  const auto m = net.memory();
  r.params = {{"graphs", graphs},
              {"format", to_string(net.format())},
              {"memory", {{"params", m.params}, {"grads", m.grads}, {"optimizer", m.optimizer}, {"copies", m.copies},
                          {"state", m.state}, {"arena", m.arena}, {"io", m.io}, {"arena_unshared", net.arena_unshared()}}},
              {"data", "synthetic"},
              {"weights", cfg.weights.empty() ? std::string("seeded torchvision init") : cfg.weights}};
  if (train) r.params["sgd"] = {{"lr", o.sgd.lr}, {"momentum", o.sgd.momentum}, {"weight_decay", o.sgd.weight_decay}};
  if (train && net.loss_scaling()) note_loss_scaling(r, net, (graphs ? 1 : 0) + ran);
  bool has_batchnorm = false;
  for (const auto& n : g.nodes()) has_batchnorm |= n.op == NodeOp::BatchNorm2d;
  r.batchnorm_folded = net.folded_batchnorms() > 0;
  if (has_batchnorm) r.params["batchnorm"] = r.batchnorm_folded ? "folded into the convolutions" : "separate";
  if (feed) describe_data(r, *data, data->folder(train), *feed, dt);
  return r;
}

bool out_of_memory(const Error& e) {
  return e.kind() == ErrorKind::Device && std::string(e.what()).find("out of memory") != std::string::npos;
}

// A GPU cell that ran out of memory: the planned bytes of the same network at
// batch 1 and 2 (every buffer but the libraries' workspaces grows with the
// batch: params and state fixed, the arena and the input per image) give the
// largest batch that fits in what is free now.
[[noreturn]] void throw_batch_too_large(const LayerGraph& g, Context& ctx, const NetBenchConfig& cfg, Precision p,
                                        std::int64_t batch, bool train, const Error& e) {
  const std::string cell = fmt::format("{} gpu {} {} at batch {}", g.name(), to_string(p), train ? "training" : "inference", batch);
  const GraphOptions o = cell_options(cfg, g, p, train);
  std::optional<std::int64_t> fits;
  std::string plan;
  try {
    std::int64_t m1 = 0, m2 = 0;
    {
      GraphNetwork one(g, ctx, 1, o);
      m1 = static_cast<std::int64_t>(one.memory().total());
    }
    {
      GraphNetwork two(g, ctx, 2, o);
      m2 = static_cast<std::int64_t>(two.memory().total());
    }
    ctx.synchronize();
    const std::int64_t free_b = static_cast<std::int64_t>(detail::cuda_free_memory(ctx.cuda()));
    fits = largest_batch_that_fits(m1, m2, free_b, kLibraryMargin);
    plan = fmt::format("planned buffers {} + {} per image; {} free now, {} kept for the libraries' workspaces",
                       format_bytes(double(2 * m1 - m2)), format_bytes(double(m2 - m1)), format_bytes(double(free_b)),
                       format_bytes(double(kLibraryMargin)));
  } catch (const Error& probe) {
    if (!out_of_memory(probe)) throw;
    fits = 0;  // not even batch 1 or 2
  }
  if (!fits || *fits <= 0)
    throw Error(ErrorKind::Device, fmt::format("{} does not fit: {}; not even batch 1 or 2 fits now", cell, e.what()),
                "free GPU memory held by other programs, or use a smaller precision (bf16)");
  throw Error(ErrorKind::Device,
              fmt::format("{} does not fit: {}. The largest batch that fits is about {} ({})", cell, e.what(), *fits,
                          plan),
              fmt::format("use --batch {} or less", *fits));
}

NetRecord measure_cell(const LayerGraph& g, Context& ctx, const NetBenchConfig& cfg, Precision p, std::int64_t batch,
                       bool train, const NetData* data) {
  try {
    return measure_cell_at(g, ctx, cfg, p, batch, train, data);
  } catch (const Error& e) {
    if (!ctx.is_cuda() || !out_of_memory(e)) throw;
    throw_batch_too_large(g, ctx, cfg, p, batch, train, e);
  }
}

}  // namespace

std::vector<NetRecord> run_net_bench(const NetBenchConfig& cfg, const NetSink& sink, const NetStatus& status) {
  std::vector<NetRecord> out;
  std::vector<LayerGraph> graphs;
  for (const auto& m : cfg.models) graphs.push_back(make_graph_model(m));
  std::optional<NetData> data;  // scanned once, before any cell
  if (!cfg.data.empty() && !graphs.empty()) {
    std::int64_t classes = graphs.front().classes();
    for (const auto& g : graphs) classes = std::min(classes, g.classes());
    data = open_net_data(cfg, classes);
  }
  std::vector<Backend> devices;
  if (cfg.cpu) devices.push_back(Backend::Cpu);
  if (cfg.gpu) devices.push_back(Backend::Cuda);
  for (const LayerGraph& g : graphs)
    for (Backend b : devices) {
      Context ctx(b, cfg.gpu_index);
      for (Precision p : cfg.precisions) {
        if (b != Backend::Cuda && p != Precision::FP32) continue;  // the CPU computes in fp32 only
        for (std::int64_t batch : cfg.batches)
          for (bool train : {true, false}) {
            if ((train && !cfg.train) || (!train && !cfg.infer)) continue;
            if (status)
              status(fmt::format("roofline {} {} {} batch {} {}", g.name(), ctx.is_cuda() ? "gpu" : "cpu",
                                 to_string(p), batch, train ? "train" : "infer"));
            out.push_back(measure_cell(g, ctx, cfg, p, batch, train, data ? &*data : nullptr));
            if (sink) sink(out.back());
          }
      }
    }
  return out;
}

std::int64_t largest_batch_that_fits(std::int64_t bytes_at_1, std::int64_t bytes_at_2, std::int64_t free_bytes,
                                     std::int64_t margin) {
  const std::int64_t per_image = bytes_at_2 - bytes_at_1, fixed = bytes_at_1 - per_image;
  if (per_image <= 0 || free_bytes - margin - fixed < per_image) return 0;
  return (free_bytes - margin - fixed) / per_image;
}

void store_net_record(store::Db& db, std::int64_t run_id, std::optional<std::int64_t> device_id, const NetRecord& r) {
  store::Transaction tx(db);
  auto st = db.prepare(
      "INSERT INTO bench_results (run_id, device_id, device, model, mode, batch, steps, peer, params, measured_at, "
      "precision, step_median_s, step_iqr_s, peak_bytes, flops, train_seconds, infer_median_s, infer_iqr_s, "
      "test_loss) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  const bool train = r.mode == "train";
  st.bind(1, run_id).bind(2, device_id).bind(3, r.device).bind(4, r.model).bind(5, r.mode).bind(6, r.batch);
  st.bind(7, static_cast<std::int64_t>(r.steps));
  if (r.source == "roofline")
    st.bind(8, std::nullopt);
  else
    st.bind(8, r.source);
  nlohmann::json params = r.params;
  if (r.gpus > 1) params["gpus"] = r.gpus;  // data-parallel: batch is per GPU, flops count every GPU
  st.bind(9, json_text(params)).bind(10, store::utc_now()).bind(11, r.precision);
  st.bind(12, r.median_s).bind(13, r.iqr_s).bind(14, r.peak_bytes).bind(15, r.flops);
  if (train) {
    st.bind(16, r.median_s * r.steps).bind(17, std::nullopt).bind(18, std::nullopt).bind(19, r.loss);
  } else {
    st.bind(16, std::nullopt).bind(17, r.median_s).bind(18, r.iqr_s).bind(19, std::nullopt);
  }
  st.run();
  tx.commit();
}

NetRecord parse_peer_record(const nlohmann::json& x) {
  NetRecord r;
  r.source = x.at("source").get<std::string>();
  r.model = x.at("model").get<std::string>();
  r.device = x.at("device").get<std::string>();
  r.precision = x.at("precision").get<std::string>();
  r.mode = x.at("mode").get<std::string>();
  r.batch = x.at("batch").get<std::int64_t>();
  r.gpus = x.value("gpus", 1);
  if (r.gpus < 1) throw Error(ErrorKind::Input, fmt::format("a record of {} GPUs", r.gpus), "the peer script is broken");
  r.steps = x.value("steps", 0);
  r.median_s = x.at("median_s").get<double>();
  r.iqr_s = x.value("iqr_s", 0.0);
  r.min_s = x.value("min_s", 0.0);
  r.max_s = x.value("max_s", 0.0);
  if (x.contains("peak_bytes") && x["peak_bytes"].is_number()) r.peak_bytes = x["peak_bytes"].get<double>();
  if (x.contains("loss") && x["loss"].is_number()) r.loss = x["loss"].get<double>();
  r.params = {{"torch", x.value("torch", "")}, {"threads", x.value("threads", 0)}};
  if (x.contains("layout") && x["layout"].is_string()) r.params["format"] = x["layout"];
  if (x.contains("loss_scale") && x["loss_scale"].is_number()) r.params["loss_scale"] = x["loss_scale"];
  return r;
}

std::vector<NetRecord> parse_net_peer_json(const nlohmann::json& j) {
  if (!j.contains("records") || !j["records"].is_array())
    throw Error(ErrorKind::Input, "the peer's output has no \"records\" list", "run the peer script by hand to see why");
  std::vector<NetRecord> out;
  for (const auto& x : j["records"]) {
    NetRecord r = parse_peer_record(x);
    const LayerGraph g = make_graph_model(r.model);
    const DType dtype = activation_dtype(parse_precision(r.precision));
    r.flops = (r.mode == "train" ? g.cost(r.batch, dtype).train().flops
                                 : inference_cost(g, r.batch, dtype, false).flops) *  // eager PyTorch folds nothing
              r.gpus;
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<NetRecord> run_net_peer(const NetBenchConfig& cfg) {
  if (cfg.peer != "pytorch")
    throw_usage(fmt::format("unknown peer '{}'", printable(cfg.peer)), "the only peer is pytorch (--peer pytorch)");
  const std::string script = find_peer_script(cfg.peer_script, "peers/pytorch_nets.py");
  std::vector<std::string> devices, modes, precisions, batches;
  if (cfg.cpu) devices.push_back("cpu");
  if (cfg.gpu) devices.push_back("gpu");
  if (cfg.train) modes.push_back("train");
  if (cfg.infer) modes.push_back("infer");
  for (Precision p : cfg.precisions) precisions.push_back(to_string(p));
  for (auto b : cfg.batches) batches.push_back(std::to_string(b));
  std::string cmd =
      fmt::format("python3 '{}' --models {} --devices {} --precisions {} --batches {} --modes {} --steps {} --warmup {}{}",
                  script, join(cfg.models, ","), join(devices, ","), join(precisions, ","), join(batches, ","),
                  join(modes, ","), cfg.steps, cfg.warmup, cfg.peer_compile ? " --compile" : "");
  // Each cell's layout, as roofline's network of that cell takes it (GraphOptions::format).
  std::vector<std::string> layouts;
  for (const auto& [dev, backend] : {std::pair{"cpu", Backend::Cpu}, std::pair{"gpu", Backend::Cuda}})
    for (Precision p : cfg.precisions)
      layouts.push_back(fmt::format("{}/{}={}", dev, to_string(p), to_string(cfg.layout.value_or(default_format(backend, p)))));
  cmd += " --layouts " + join(layouts, ",");
  std::vector<std::string> lrs;
  for (const auto& m : cfg.models) lrs.push_back(fmt::format("{}={}", m, recipe_learning_rate(m)));
  cmd += " --lrs " + join(lrs, ",");
  return parse_net_peer_json(run_peer_command(cmd));
}

namespace {

Cell ms(double s) { return s > 0 ? Cell{s * 1e3} : Cell{}; }
Cell ratio(double a, double b) { return a > 0 && b > 0 ? Cell{a / b} : Cell{}; }
Cell mib(const std::optional<double>& b) { return b ? Cell{*b / 1048576.0} : Cell{}; }

const NetRecord* find(const std::vector<NetRecord>& v, const NetRecord& like, const std::string& source,
                      const std::string& device, const std::string& mode) {
  for (const auto& r : v)
    if (r.source == source && r.model == like.model && r.device == device && r.precision == like.precision &&
        r.batch == like.batch && r.mode == mode)
      return &r;
  return nullptr;
}

}  // namespace

Table net_table(const std::vector<NetRecord>& records, const std::string& source) {
  Table t("bench.nets." + source, fmt::format("CPU vs GPU training step and inference per batch ({})", source));
  t.col("model", "Model").col("precision", "Precision").col("batch", "Batch");
  t.col("cpu_train_ms", "CPU train", "ms", 2).col("gpu_train_ms", "GPU train", "ms", 2);
  t.col("train_speedup", "speedup", "×", 1);
  t.col("cpu_infer_ms", "CPU infer", "ms", 2).col("gpu_infer_ms", "GPU infer", "ms", 3);
  t.col("infer_speedup", "speedup", "×", 1);
  std::vector<std::string> seen;
  for (const auto& r : records) {
    if (r.source != source) continue;
    const std::string key = fmt::format("{}|{}|{}", r.model, r.precision, r.batch);
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) continue;
    seen.push_back(key);
    auto time_of = [&](const std::string& device, const std::string& mode) {
      const NetRecord* x = find(records, r, source, device, mode);
      return x ? x->median_s : 0.0;
    };
    const double ct = time_of("cpu", "train"), gt = time_of("gpu", "train"), ci = time_of("cpu", "infer"),
                 gi = time_of("gpu", "infer");
    t.row({r.model, r.precision, r.batch, ms(ct), ms(gt), ratio(ct, gt), ms(ci), ms(gi), ratio(ci, gi)});
  }
  return t;
}

Table net_detail_table(const std::vector<NetRecord>& ours) {
  Table t("bench.nets.detail", "roofline per cell: time, rate against the device's ceiling, GPU busy, memory");
  t.col("model", "Model").col("device", "Device").col("precision", "Precision").col("batch", "Batch").col("mode", "Mode");
  t.col("ms", "median", "ms", 3).col("iqr_ms", "IQR", "ms", 3).col("images_per_s", "images/s", "", 0);
  t.col("tflops", "TFLOP/s", "", 2).col("ceiling_pct", "of ceiling", "%", 1).col("ceiling", "ceiling");
  t.col("busy_pct", "GPU busy", "%", 1).col("memory_mib", "memory", "MiB", 0);
  std::vector<std::string> sources;
  bool any_busy_note = false;
  for (const auto& r : ours) {
    const auto share = r.ceiling_share();
    t.row({r.model, r.device, r.precision, r.batch, r.mode, ms(r.median_s), ms(r.iqr_s), r.images_per_s(), r.tflops(),
           share ? Cell(100.0 * *share) : Cell(), r.ceiling_name.empty() ? Cell() : Cell(r.ceiling_name),
           r.busy_fraction ? Cell(100.0 * *r.busy_fraction) : Cell(), mib(r.peak_bytes)});
    if (!r.ceiling_name.empty()) {
      const std::string src = fmt::format("{} {}", r.ceiling_name, r.ceiling_source);
      if (std::find(sources.begin(), sources.end(), src) == sources.end()) sources.push_back(src);
    }
    any_busy_note |= r.device == "gpu" && !r.busy_fraction && !r.busy_note.empty();
  }
  t.note("TFLOP/s: the engine's FLOPs of the step (forward, input and weight gradients) or batch over the median "
         "time. of ceiling: that rate over the device's compute ceiling for the precision (fp32: CUDA cores, TF32 "
         "off; tf32/bf16/fp16: tensor cores, which the element-wise layers do not use)");
  if (!sources.empty()) t.note("ceilings: " + join(sources, "; "));
  t.note("GPU busy: kernel time over wall time of as many steps again, back to back (CUPTI); with --data, of the "
         "data-fed steps themselves (waits for images included)");
  if (any_busy_note)
    for (const auto& r : ours)
      if (r.device == "gpu" && !r.busy_fraction && !r.busy_note.empty()) {
        t.note("GPU busy unknown: " + r.busy_note);
        break;
      }
  t.note("memory: roofline's buffers (parameters, gradients, optimizer state, weight copies, statistics, the "
         "activation arena, input and logits) and its scratch (GEMM/convolution workspace, im2col and attention "
         "matrices) after the cell; CUDA's own allocations not included");
  return t;
}

Table net_peer_table(const std::vector<NetRecord>& ours, const std::vector<NetRecord>& peer) {
  Table t("bench.nets.peer", "roofline beside PyTorch (same machine, same call): median per step or batch");
  t.col("model", "Model").col("device", "Device").col("precision", "Precision").col("batch", "Batch").col("mode", "Mode");
  t.col("ms", "roofline", "ms", 3).col("eager_ms", "eager", "ms", 3).col("compile_ms", "compile", "ms", 3);
  t.col("vs_eager", "× eager", "", 2).col("vs_compile", "× compile", "", 2);
  t.col("memory_mib", "memory", "MiB", 0).col("eager_memory_mib", "eager mem", "MiB", 0);
  for (const auto& r : ours) {
    const NetRecord* e = find(peer, r, "pytorch", r.device, r.mode);
    const NetRecord* c = find(peer, r, "pytorch-compile", r.device, r.mode);
    t.row({r.model, r.device, r.precision, r.batch, r.mode, ms(r.median_s), e ? ms(e->median_s) : Cell{},
           c ? ms(c->median_s) : Cell{}, e ? ratio(e->median_s, r.median_s) : Cell{},
           c ? ratio(c->median_s, r.median_s) : Cell{}, mib(r.peak_bytes), e ? mib(e->peak_bytes) : Cell{}});
  }
  t.note("× eager, × compile: the peer's time over roofline's (above 1: roofline is faster). memory: roofline's "
         "buffers and scratch after the cell; eager mem: torch.cuda.max_memory_allocated.");
  std::vector<std::string> layouts;  // both sides run each cell in roofline's layout for it
  for (const auto& r : ours) {
    if (!r.params.contains("format")) continue;  // no layout to choose (bert-base's (tokens, features) rows)
    const std::string l = fmt::format("{} {} {}", r.device, r.precision, r.params["format"].get<std::string>());
    if (std::find(layouts.begin(), layouts.end(), l) == layouts.end()) layouts.push_back(l);
  }
  if (!peer.empty() && !layouts.empty())
    t.note("layouts, the same on both sides (--layout sets them): " + join(layouts, ", "));
  return t;
}

}  // namespace roofline::engine

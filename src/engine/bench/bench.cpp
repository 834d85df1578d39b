#include "roofline/engine/bench.hpp"

#include <fmt/format.h>

#include <cstdlib>

#include "roofline/core/env.hpp"
#include "roofline/core/error.hpp"
#include "roofline/cuda/runtime.hpp"
#include "roofline/engine/context.hpp"
#include "roofline/engine/graph_weights.hpp"
#include "roofline/hardware/cpu_isa.hpp"

namespace roofline::engine {

std::string resolve_data_dir(const std::string& cli) {
  if (!cli.empty()) return cli;
  if (auto dir = env::get(env::Var::Data)) return *dir;
  return default_data_dir();
}

BenchConfig quick_bench_config() {
  BenchConfig c;
  c.models = {"simple-mlp", "simple-cnn"};
  c.gpu = cuda::gpu_count() > 0;
  c.batches = {64, 128};
  c.train_options.epochs = 1;
  c.train_options.max_steps = 200;
  c.train_options.infer_reps = 50;
  return c;
}

namespace {

// roofline's record of one run: the training result's figures, each in the
// record's field of its name.
BenchRecord record_of(const TrainResult& tr, const TrainOptions& o, const std::string& device, bool trained) {
  BenchRecord r;
  r.device = device;
  r.source = "roofline";
  r.model = tr.model;
  r.batch = tr.batch;
  r.trained = trained;
  r.epochs = o.epochs;
  r.steps = tr.steps;
  r.train_seconds = tr.train_seconds;
  for (const auto& e : tr.epochs) r.epoch_seconds.push_back(e.seconds);
  r.test_loss = tr.test_loss;
  r.test_accuracy = tr.test_accuracy;
  r.infer_median_s = tr.infer_seconds.median;
  r.infer_iqr_s = tr.infer_seconds.iqr();
  r.busy_fraction = tr.busy_fraction;
  r.busy_note = tr.busy_note;
  r.first_losses = tr.first_losses;
  r.test_predictions = tr.test_predictions;
  r.gpu_path = tr.gpu_path;
  return r;
}

// What the record has no field for: how the run was set up and the paths it
// took (stored in params; the record's own figures are added when stored).
nlohmann::json run_params(const TrainResult& tr, const TrainOptions& o, const Context& ctx, const Model& model,
                          const DataSplit& data) {
  nlohmann::json p = {{"lr", o.sgd.lr},
                      {"momentum", o.sgd.momentum},
                      {"weight_decay", o.sgd.weight_decay},
                      {"seed", o.seed},
                      {"max_steps", o.max_steps},
                      {"graphs", ctx.is_cuda() && o.use_graphs},
                      {"steps_per_graph", o.steps_per_graph},
                      {"gpu_path_note", tr.gpu_path_note},
                      {"infer_path", tr.infer_path},
                      {"infer_path_note", tr.infer_path_note},
                      {"infer_prepare_us",
                       tr.infer_prepare_seconds ? nlohmann::json(*tr.infer_prepare_seconds * 1e6) : nlohmann::json()},
                      {"cpu_threads", ctx.cpu_threads()},
                      {"normalization", {{"mean", tr.norm.mean}, {"std", tr.norm.std}, {"from", tr.norm.source}}},
                      {"data", data.dir},
                      {"model_params", model.learnable_count()},
                      {"train_losses", nlohmann::json::array()}};
  for (const auto& e : tr.epochs) p["train_losses"].push_back(e.train_loss);
  return p;
}

// The CPU check as stored (cpu_scaling_of reads it back).
nlohmann::json scaling_json(const CpuScaling& s) {
  return {{"threads", s.threads}, {"one_gflops", s.one_gflops}, {"all_gflops", s.all_gflops}, {"ratio", s.ratio()}};
}

}  // namespace

std::vector<BenchRecord> run_bench(const BenchConfig& cfg, const BenchSink& sink, const BenchProgress& progress) {
  // Check everything the user typed before the first (long) run.
  std::vector<std::unique_ptr<Model>> models;
  for (const auto& name : cfg.models) models.push_back(make_model(name));
  std::vector<std::vector<float>> start;  // per model: --weights packed (every problem of the file named now)
  if (!cfg.weights.empty())
    for (const auto& m : models) start.push_back(m->pack(read_state(m->graph(), cfg.weights)));
  if (cfg.batches.empty()) throw_usage("no batch size given", "use --batch 1,64,128");
  for (auto b : cfg.batches)
    if (b <= 0) throw_usage(fmt::format("batch size {} is not positive", b), "use --batch 1 or more (e.g. 1,64,128)");
  if (cfg.train_options.epochs < 0)
    throw_usage(fmt::format("{} epochs: the count cannot be negative", cfg.train_options.epochs),
                "use --epochs 0 or more");
  if (cfg.train_options.max_steps < 0)
    throw_usage("--max-steps cannot be negative", "use --max-steps 0 (no limit) or more");
  if (!cfg.cpu && !cfg.gpu) throw_usage("no device to run on", "use --device cpu, gpu or cpu,gpu");
  if (!cfg.train && !cfg.infer) throw_usage("no mode to run", "use --mode train, infer or train,infer");
  if (cfg.gpu) cuda::require_gpu(cfg.gpu_index);

  const DataSplit data = load_mnist_dir(resolve_data_dir(cfg.data_dir));
  for (auto b : cfg.batches)
    if (b > data.train.n)
      throw_usage(fmt::format("batch size {} is larger than the training set ({} images)", b, data.train.n),
                  fmt::format("use --batch {} or less", data.train.n));

  std::vector<BenchRecord> out;
  std::vector<std::pair<std::string, std::unique_ptr<Context>>> devices;
  if (cfg.cpu) devices.emplace_back("cpu", std::make_unique<Context>(Backend::Cpu));
  if (cfg.gpu) devices.emplace_back("gpu", std::make_unique<Context>(Backend::Cuda, cfg.gpu_index));
  // How the host's cores answer right now, stored with every CPU run (~30 ms).
  CpuScaling scaling;
  if (cfg.cpu) scaling = measure_cpu_scaling(devices.front().second->cpu_threads());

  for (size_t mi = 0; mi < models.size(); ++mi)
    for (auto batch : cfg.batches)
      for (auto& [dev, ctx] : devices) {
        const auto& model = models[mi];
        TrainOptions o = cfg.train_options;
        o.batch = batch;
        if (!start.empty()) o.initial_params = start[mi];
        if (!cfg.train) o.epochs = 0;
        const std::string what = fmt::format("{} {} batch {}", model->name(), dev, batch);
        if (progress)
          o.progress = [&, what, epochs = o.epochs](int e, std::int64_t s, std::int64_t n) {
            progress(what, e, epochs, s, n);
          };
        TrainResult tr;
        std::string diverged;
        try {
          tr = train_and_evaluate(*ctx, *model, data, o);
        } catch (const NonFiniteLoss& e) {
          if (!cfg.keep_going) throw;
          diverged = e.step_in_epoch > 0 ? fmt::format("step {} of epoch {}", e.step_in_epoch, e.epoch)
                                         : fmt::format("epoch {}", e.epoch);
          tr.model = model->name();
          tr.batch = batch;
          tr.params = model->param_count();
          tr.step_cost = model->cost(batch);
        }
        BenchRecord r = record_of(tr, o, dev, cfg.train);
        r.diverged = diverged;
        r.params = run_params(tr, o, *ctx, *model, data);
        if (!ctx->is_cuda()) {
          r.params["cpu_isa"] = hw::isa_name(hw::active_isa());
          r.params["cpu_scaling"] = scaling_json(scaling);
        }
        out.push_back(r);
        if (sink) sink(r);
      }
  return out;
}

BenchResults run_benchmark(const BenchConfig& cfg, const BenchSink& sink, const BenchProgress& progress,
                           const BenchStatus& status) {
  auto say = [&](const std::string& line) {
    if (status) status(line);
  };
  int round = 1;
  // Each record as it comes, with its round when there are several.
  auto give = [&](const BenchRecord& r) {
    if (!sink) return;
    if (cfg.repeat <= 1) return sink(r);
    BenchRecord numbered = r;
    numbered.params["round"] = round;
    sink(numbered);
  };
  std::vector<BenchConfig> phases;  // the CPU's cells, then the GPU's
  for (bool gpu : {false, true})
    if (gpu ? cfg.gpu : cfg.cpu) {
      BenchConfig c = cfg;
      c.cpu = !gpu;
      c.gpu = gpu;
      phases.push_back(c);
    }
  BenchResults res;
  for (const BenchConfig& phase : phases)
    for (round = 1; round <= cfg.repeat; ++round) {
      if (cfg.repeat > 1) say(fmt::format("{} round {} of {}", phase.gpu ? "gpu" : "cpu", round, cfg.repeat));
      std::vector<BenchRecord> o = run_bench(phase, give, progress);
      res.ours.insert(res.ours.end(), o.begin(), o.end());
      if (phase.peer.empty() || res.peer_error) continue;
      try {
        say("running the PyTorch peer (peers/pytorch_bench.py)...");
        std::vector<BenchRecord> p = run_peer(phase, resolve_data_dir(phase.data_dir));
        for (const auto& r : p) give(r);
        res.peer.insert(res.peer.end(), p.begin(), p.end());
      } catch (const Error& e) {
        res.peer_error = e;
      }
    }
  return res;
}

std::optional<Error> bench_failure(const BenchResults& results) {
  if (results.peer_error) return results.peer_error;
  std::vector<BenchRecord> all = results.ours;
  all.insert(all.end(), results.peer.begin(), results.peer.end());
  if (const std::string d = describe_diverged(all); !d.empty())
    return Error(ErrorKind::Numeric, "the training loss became NaN or Inf (diverged) in: " + d,
                 "lower --lr or --momentum for these runs; the other runs' results are above and stored");
  return std::nullopt;
}

std::vector<std::string> dead_class_warnings(const std::vector<BenchRecord>& records) {
  std::vector<std::string> out;
  for (const auto& r : records) {
    if (!r.trained || !r.diverged.empty() || r.test_predictions.empty()) continue;
    // A run capped by --max-steps is a timing run: an undertrained model that
    // has not separated every class yet is expected, not an anomaly.
    if (r.params.is_object() && r.params.value("max_steps", std::int64_t{0}) > 0) continue;
    std::vector<std::string> dead;
    for (size_t c = 0; c < r.test_predictions.size(); ++c)
      if (r.test_predictions[c] == 0) dead.push_back(std::to_string(c));
    if (dead.empty()) continue;
    std::string list;
    for (size_t i = 0; i < dead.size(); ++i) list += (i ? ", " : "") + dead[i];
    const bool mlp = r.model == "simple-mlp";
    out.push_back(fmt::format(
        "{} {} {} batch {}: no test image is predicted as class {} — a dead output (its logit {}), which costs ~10 "
        "points of accuracy per class; whether training revives it depends on rounding, so runs that differ only in "
        "summation order (CPU vs GPU, another thread count on the peer) can land on either side{}",
        r.source, r.model, r.device, r.batch, list,
        mlp ? "is held at 0 by the ReLU after fc3 (kept from the course lab's model) while the others win" : "never wins the argmax",
        mlp ? "; see docs/engine.md, \"simple-mlp at 78%\"" : ""));
  }
  return out;
}

CpuScaling cpu_scaling_of(const BenchRecord& r) {
  CpuScaling s;
  if (!r.params.is_object() || !r.params.contains("cpu_scaling") || !r.params["cpu_scaling"].is_object()) return s;
  const auto& j = r.params["cpu_scaling"];
  s.threads = j.value("threads", 0);
  s.one_gflops = j.value("one_gflops", 0.0);
  s.all_gflops = j.value("all_gflops", 0.0);
  return s;
}

std::string describe_diverged(const std::vector<BenchRecord>& records) {
  std::vector<std::string> parts;
  for (const auto& r : records)
    if (!r.diverged.empty())
      parts.push_back(fmt::format("{} {} {} batch {} at {}", r.source, r.model, r.device, r.batch, r.diverged));
  std::string s;
  for (size_t i = 0; i < parts.size(); ++i) s += (i ? "; " : "") + parts[i];
  return s;
}

}  // namespace roofline::engine

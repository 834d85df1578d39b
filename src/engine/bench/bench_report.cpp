// Tables of `roofline bench` and what it stores.
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "roofline/core/json_text.hpp"
#include "roofline/core/strings.hpp"
#include "roofline/engine/bench.hpp"
#include "roofline/store/results.hpp"

namespace roofline::engine {

namespace {
const BenchRecord* find(const std::vector<BenchRecord>& rs, const std::string& source, const std::string& device,
                        const std::string& model, std::int64_t batch) {
  for (const auto& r : rs)
    if (r.source == source && r.device == device && r.model == model && r.batch == batch) return &r;
  return nullptr;
}
Cell opt(bool ok, double v) { return ok ? Cell(v) : Cell(); }
Cell ratio(const BenchRecord* a, const BenchRecord* b, double (*f)(const BenchRecord&)) {
  if (!a || !b || f(*b) <= 0 || f(*a) <= 0) return {};
  return f(*a) / f(*b);
}
double train_s(const BenchRecord& r) { return r.trained && r.diverged.empty() ? r.train_seconds : 0; }
double infer_s(const BenchRecord& r) { return r.diverged.empty() ? r.infer_median_s : 0; }
// A diverged run measured nothing: its cells say so instead of showing zeros.
Cell measured(const BenchRecord* r, bool ok, double v) {
  if (r && !r->diverged.empty()) return std::string("diverged");
  return ok ? Cell(v) : Cell();
}
}  // namespace

Table table4(const std::vector<BenchRecord>& records, const std::string& source) {
  Table t("table4." + source, fmt::format("CPU vs GPU training and inference time ({})", source));
  t.col("batch", "Batch")
      .col("cpu_train_s", "CPU Train", "s")
      .col("cpu_infer_us", "CPU Infer", "µs")
      .col("gpu_train_s", "GPU Train", "s")
      .col("gpu_infer_us", "GPU Infer", "µs")
      .col("model", "Model")
      .col("train_speedup", "GPU train speedup", "x")
      .col("infer_speedup", "GPU infer speedup", "x")
      .col("cpu_acc", "CPU acc.", "%", 1)
      .col("gpu_acc", "GPU acc.", "%", 1);
  std::vector<std::pair<std::string, std::int64_t>> keys;
  for (const auto& r : records) {
    if (r.source != source) continue;
    bool seen = false;
    for (const auto& k : keys) seen |= k.first == r.model && k.second == r.batch;
    if (!seen) keys.emplace_back(r.model, r.batch);
  }
  for (const auto& [model, batch] : keys) {
    const BenchRecord* c = find(records, source, "cpu", model, batch);
    const BenchRecord* g = find(records, source, "gpu", model, batch);
    t.row({batch, measured(c, c && c->trained, c ? c->train_seconds : 0),
           measured(c, c != nullptr, c ? c->infer_median_s * 1e6 : 0),
           measured(g, g && g->trained, g ? g->train_seconds : 0),
           measured(g, g != nullptr, g ? g->infer_median_s * 1e6 : 0), model, ratio(c, g, train_s),
           ratio(c, g, infer_s), opt(c && c->trained && c->diverged.empty(), c ? c->test_accuracy * 100 : 0),
           opt(g && g->trained && g->diverged.empty(), g ? g->test_accuracy * 100 : 0)});
  }
  t.note(
      "Train: wall time of all epochs (data on the device, shuffled every epoch); Infer: median of synchronised "
      "single-batch forward passes to probabilities. The course lab's 'Infer' column timed an unsynchronised call.");
  return t;
}

Table details_table(const std::vector<BenchRecord>& records) {
  Table t("bench.details", "Every run");
  t.col("source", "Source")
      .col("device", "Device")
      .col("model", "Model")
      .col("batch", "Batch")
      .col("epochs", "Epochs")
      .col("steps", "Steps")
      .col("train_s", "Train", "s")
      .col("epoch_s", "Per epoch", "s", -1, 40)
      .col("step_us", "Per step", "µs")
      .col("test_loss", "Test loss", "", 4)
      .col("test_acc", "Test acc.", "%", 2)
      .col("infer_us", "Infer median", "µs")
      .col("infer_iqr_us", "Infer IQR", "µs")
      .col("busy", "GPU busy", "%", 1)
      .col("status", "Status")
      .col("path", "GPU path");
  for (const auto& r : records) {
    std::vector<std::string> es;
    for (double s : r.epoch_seconds) es.push_back(format_sig(s, 3));
    const bool ok = r.diverged.empty();
    t.row({r.source, r.device, r.model, r.batch, static_cast<std::int64_t>(r.epochs), r.steps,
           r.trained && ok ? Cell(r.train_seconds) : Cell(), join(es, " "),
           r.steps > 0 && ok ? Cell(r.seconds_per_step() * 1e6) : Cell(), r.trained && ok ? Cell(r.test_loss) : Cell(),
           r.trained && ok ? Cell(r.test_accuracy * 100) : Cell(), ok ? Cell(r.infer_median_s * 1e6) : Cell(),
           ok ? Cell(r.infer_iqr_s * 1e6) : Cell(), r.busy_fraction ? Cell(*r.busy_fraction * 100) : Cell(),
           ok ? std::string("ok") : "diverged at " + r.diverged, r.gpu_path.empty() ? Cell() : Cell(r.gpu_path)});
  }
  std::vector<std::string> noted;  // one note per model and reason
  for (const auto& r : records)
    if (r.gpu_path == "layers" && r.params.contains("gpu_path_note")) {
      const std::string n =
          fmt::format("GPU path of {}: layers ({})", r.model, r.params["gpu_path_note"].get<std::string>());
      if (std::find(noted.begin(), noted.end(), n) == noted.end()) noted.push_back(n);
    }
  for (const auto& r : records)
    if (r.params.contains("infer_path_note") && !r.params["infer_path_note"].get<std::string>().empty())
      noted.push_back(fmt::format("GPU inference of {} at batch {}: {} ({})", r.model, r.batch,
                                  r.params.value("infer_path", std::string()),
                                  r.params["infer_path_note"].get<std::string>()));
  std::set<std::string> prepared;  // models whose CPU inference copies are noted (once each)
  for (const auto& r : records)
    if (r.params.contains("infer_prepare_us") && r.params["infer_prepare_us"].is_number() &&
        prepared.insert(r.model).second)
      noted.push_back(fmt::format(
          "CPU inference of {}: every Linear layer reads its weights transposed, a copy made once before the "
          "timed calls ({:.0f} µs at batch {}; not in the inference time)",
          r.model, r.params["infer_prepare_us"].get<double>(), r.batch));
  std::set<std::string> checks;  // each distinct CPU check once (a --repeat run has one per round)
  for (const auto& r : records)
    if (const std::string n = cpu_scaling_note(cpu_scaling_of(r)); !n.empty() && checks.insert(n).second)
      noted.push_back(n);
  for (const auto& n : noted) t.note(n);
  if (std::any_of(records.begin(), records.end(), [](const BenchRecord& r) { return !r.gpu_path.empty(); }))
    t.note(
        "GPU path: fused-mlp / fused-cnn = one cooperative kernel per chunk of training steps (docs/engine.md, "
        "\"Fused GPU paths\"); layers = one kernel per op, replayed as CUDA graphs.");
  for (const auto& r : records)
    if (r.device == "gpu" && r.source == "roofline" && !r.busy_fraction) {
      t.note("GPU busy fraction (kernel time / wall time): " + r.busy_note);
      break;
    }
  t.note(
      "Test loss: mean log-softmax + NLL over the 10,000 test images (the course lab's negative 'losses' came from "
      "applying NLL to softmax probabilities).");
  return t;
}

Table peer_table(const std::vector<BenchRecord>& ours, const std::vector<BenchRecord>& peer) {
  Table t("bench.peer", "roofline vs the PyTorch peer (same models, data, batches, optimiser)");
  t.col("device", "Device")
      .col("model", "Model")
      .col("batch", "Batch")
      .col("ours_step_us", "roofline step", "µs")
      .col("peer_step_us", "PyTorch step", "µs")
      .col("train_speedup", "Train speedup", "x")
      .col("ours_infer_us", "roofline infer", "µs")
      .col("peer_infer_us", "PyTorch infer", "µs")
      .col("infer_speedup", "Infer speedup", "x")
      .col("ours_acc", "roofline acc.", "%", 2)
      .col("peer_acc", "PyTorch acc.", "%", 2);
  for (const auto& r : ours) {
    const BenchRecord* p = nullptr;
    for (const auto& q : peer)
      if (q.device == r.device && q.model == r.model && q.batch == r.batch) p = &q;
    if (!p) continue;
    auto step = [](const BenchRecord& x) { return x.diverged.empty() ? x.seconds_per_step() : 0.0; };
    Cell ts = step(r) > 0 && step(*p) > 0 ? Cell(step(*p) / step(r)) : Cell();
    Cell is = infer_s(r) > 0 && infer_s(*p) > 0 ? Cell(p->infer_median_s / r.infer_median_s) : Cell();
    auto acc = [](const BenchRecord& x) {
      return x.trained && x.diverged.empty() ? Cell(x.test_accuracy * 100) : Cell();
    };
    t.row({r.device, r.model, r.batch, measured(&r, step(r) > 0, step(r) * 1e6),
           measured(p, step(*p) > 0, step(*p) * 1e6), ts, measured(&r, true, r.infer_median_s * 1e6),
           measured(p, true, p->infer_median_s * 1e6), is, acc(r), acc(*p)});
  }
  t.note(
      "Speedup = PyTorch time / roofline time, per training step (the same number of steps on both sides) and per "
      "synchronised single-batch inference.");
  return t;
}

Table cost_table(const std::string& model_name, std::int64_t batch) {
  auto model = make_model(model_name);
  Table t("bench.cost." + model->name(),
          fmt::format("{}: analytical cost per layer at batch {}", model->name(), batch));
  t.col("layer", "Layer")
      .col("op", "Op")
      .col("in", "Input")
      .col("out", "Output")
      .col("params", "Params")
      .col("fwd_mflop", "Fwd", "MFLOP")
      .col("fwd_mb", "Fwd", "MB")
      .col("dgrad_mflop", "Input-grad", "MFLOP")
      .col("wgrad_mflop", "Weight-grad", "MFLOP")
      .col("bwd_mb", "Bwd", "MB")
      .col("fwd_ai", "Fwd AI", "FLOP/B");
  for (const auto& l : model->describe(batch))
    t.row({l.name, l.op, to_string(l.in), to_string(l.out), l.params, l.cost.forward.flops * 1e-6,
           l.cost.forward.bytes * 1e-6, l.cost.input_grad.flops * 1e-6, l.cost.weight_grad.flops * 1e-6,
           l.cost.backward().bytes * 1e-6, l.cost.forward.intensity()});
  PassCosts c = model->cost(batch);
  t.row({std::string("total"), std::string(), std::string(), std::string(), model->learnable_count(),
         c.forward.flops * 1e-6, c.forward.bytes * 1e-6, c.input_grad.flops * 1e-6, c.weight_grad.flops * 1e-6,
         c.backward().bytes * 1e-6, c.forward.intensity()});
  t.note(
      "FLOPs: an FMA is 2; bytes: each input read once and each output written once (fp32). The first layer's "
      "input-grad is listed but not computed in training (nothing before it needs it).");
  return t;
}

void add_bench_tables(Report& report, const BenchConfig& cfg, const BenchResults& results, bool costs) {
  const std::vector<BenchRecord>& ours = results.ours;
  const std::vector<BenchRecord>& peer = results.peer;
  if (results.peer_error) report.warn(std::string("the PyTorch peer did not run: ") + results.peer_error->what());
  // Table 4 from each cell's median round (with one round, the run itself).
  report.add(table4(median_records(ours), "roofline"));
  if (!peer.empty()) report.add(table4(median_records(peer), "pytorch"));
  if (cfg.repeat == 1 && !peer.empty()) report.add(peer_table(ours, peer));
  if (cfg.repeat > 1 && cfg.train) report.add(repeat_table(ours, peer, true));
  if (cfg.repeat > 1 && cfg.infer) report.add(repeat_table(ours, peer, false));
  std::vector<BenchRecord> all = ours;
  all.insert(all.end(), peer.begin(), peer.end());
  report.add(details_table(all));
  for (const auto& w : dead_class_warnings(all)) report.warn(w);
  for (const auto& r : all)
    if (const CpuScaling c = cpu_scaling_of(r); r.source == "roofline" && c.contended()) {
      report.warn(cpu_scaling_note(c));
      break;
    }
  if (costs)
    for (const auto& m : cfg.models) report.add(cost_table(m, cfg.batches.back()));
}

namespace {
// A record's params as stored: its own, then the figures of the record that
// bench_results has no column for. The peer's records keep what the peer
// printed (their first losses and predictions are not stored).
nlohmann::json stored_params(const BenchRecord& r) {
  nlohmann::json params = r.params;
  params["source"] = r.source;
  if (!r.diverged.empty()) params["diverged"] = r.diverged;
  if (r.source == "roofline") {
    params["gpu_path"] = r.gpu_path;
    params["first_losses"] = r.first_losses;
    if (r.trained && r.diverged.empty()) params["test_predictions"] = r.test_predictions;
  }
  return params;
}
}  // namespace

void store_bench_record(store::Db& db, std::int64_t run_id, std::optional<std::int64_t> device_id, const BenchRecord& r,
                        const BenchConfig& cfg) {
  nlohmann::json epochs = r.epoch_seconds;
  const nlohmann::json params = stored_params(r);
  auto insert = [&](const char* mode) {
    auto st = db.prepare(
        "INSERT INTO bench_results (run_id, device_id, device, model, mode, batch, epochs, steps, train_seconds, "
        "epoch_seconds, test_loss, test_accuracy, infer_median_s, infer_iqr_s, busy_fraction, peer, params, "
        "measured_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
    const bool train = std::string(mode) == "train";
    st.bind(1, run_id)
        .bind(2, device_id)
        .bind(3, r.device)
        .bind(4, r.model)
        .bind(5, mode)
        .bind(6, r.batch)
        .bind(7, r.epochs)
        .bind(8, r.steps);
    if (!r.diverged.empty()) {  // nothing was measured: every figure NULL, params.diverged says where
      for (int i = 9; i <= 14; ++i) st.bind(i, std::nullopt);
    } else if (train) {
      st.bind(9, r.train_seconds).bind(10, json_text(epochs)).bind(11, r.test_loss).bind(12, r.test_accuracy);
      st.bind(13, std::nullopt).bind(14, std::nullopt);
    } else {
      st.bind(9, std::nullopt).bind(10, std::nullopt).bind(11, std::nullopt).bind(12, std::nullopt);
      st.bind(13, r.infer_median_s).bind(14, r.infer_iqr_s);
    }
    st.bind(15, train ? r.busy_fraction : std::nullopt);
    if (r.source == "roofline")
      st.bind(16, std::nullopt);
    else
      st.bind(16, r.source);
    st.bind(17, json_text(params)).bind(18, store::utc_now());
    st.run();
  };
  store::Transaction tx(db);
  if (r.trained && cfg.train) insert("train");
  if (cfg.infer) insert("infer");
  tx.commit();
}

void store_layer_costs(store::Db& db, std::int64_t run_id, const std::string& model_name, std::int64_t batch) {
  auto model = make_model(model_name);
  store::Transaction tx(db);
  auto st = db.prepare(
      "INSERT INTO layers (run_id, model, layer_index, layer_name, op, pass, batch, flops, bytes, seconds, params) "
      "VALUES (?,?,?,?,?,?,?,?,?,NULL,?)");
  auto row = [&](std::int64_t index, const std::string& name, const std::string& op, Pass p, const OpCost& c,
                 const nlohmann::json& params) {
    st.reset();
    st.bind(1, run_id)
        .bind(2, model->name())
        .bind(3, index)
        .bind(4, name)
        .bind(5, op)
        .bind(6, to_string(p))
        .bind(7, batch)
        .bind(8, c.flops)
        .bind(9, c.bytes)
        .bind(10, json_text(params));
    st.run();
  };
  auto layers = model->describe(batch);
  for (size_t i = 0; i < layers.size(); ++i) {
    const auto& l = layers[i];
    for (Pass p : {Pass::Forward, Pass::InputGrad, Pass::WeightGrad}) {
      const OpCost& c = l.cost.of(p);
      if (c.flops == 0 && c.bytes == 0) continue;
      row(static_cast<std::int64_t>(i), l.name, l.op, p, c, {{"in", l.in}, {"out", l.out}, {"params", l.params}});
    }
  }
  ops::SgdShape sgd{model->param_count(), true};
  row(static_cast<std::int64_t>(layers.size()), "sgd", "sgd", Pass::Optimizer, sgd.cost(),
      {{"params", model->param_count()}});
  tx.commit();
}

void store_layer_costs(store::Db& db, std::int64_t run_id, const BenchConfig& cfg) {
  for (const auto& m : cfg.models)
    for (auto b : cfg.batches)
      if (b > 0) store_layer_costs(db, run_id, m, b);
}

}  // namespace roofline::engine

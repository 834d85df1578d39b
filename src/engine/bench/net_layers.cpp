// The networks' benchmark, per layer: where a profiled step's GPU time goes,
// layer by layer and pass by pass, beside the engine's paper costs.
#include <fmt/format.h>

#include <algorithm>

#include "roofline/engine/layer_graph.hpp"
#include "roofline/core/json_text.hpp"
#include "roofline/engine/net_bench.hpp"

namespace roofline::engine {

NetLayerRows net_layer_rows(const NetRecord& r, const std::map<std::string, double>& kernel_ns, int steps,
                            const std::map<std::string, CountedWork>& counted) {
  const LayerGraph g = make_graph_model(r.model);
  const Precision p = parse_precision(r.precision);
  const std::vector<NodeInfo> nodes = g.describe(r.batch, activation_dtype(p));
  const bool train = r.mode == "train";
  // Inference: the forward as it ran (BatchNorm with running statistics, or folded into its convolution).
  const std::vector<OpCost> infer =
      train ? std::vector<OpCost>{} : inference_node_costs(g, r.batch, activation_dtype(p), r.batchnorm_folded);
  const double per = steps > 0 ? 1e-9 / steps : 1e-9;
  NetLayerRows out;
  const auto counted_at = [&](const std::string& path) -> std::optional<CountedWork> {
    if (counted.empty()) return std::nullopt;
    const auto it = counted.find(path);
    return it == counted.end() ? CountedWork{} : it->second;  // counted, and no kernel ran there
  };
  if (!counted.empty()) {
    CountedWork all;
    for (const auto& [path, c] : counted) {
      all.flops += c.flops, all.tensor_flops += c.tensor_flops, all.dram_bytes += c.dram_bytes;
      all.l2_bytes += c.l2_bytes, all.seconds += c.seconds, all.kernels += c.kernels;
      for (const auto& [u, f] : c.by_unit) all.by_unit[u] += f;
    }
    out.counted_total = all;
  }
  double total_ns = 0, mapped_ns = 0;
  for (const auto& [path, v] : kernel_ns) total_ns += v;
  const std::vector<Pass> passes =
      train ? std::vector<Pass>{Pass::Forward, Pass::InputGrad, Pass::WeightGrad} : std::vector<Pass>{Pass::Forward};
  for (size_t i = 0; i < nodes.size(); ++i) {
    const NodeInfo& n = nodes[i];
    for (Pass pass : passes) {
      const std::string path = fmt::format("{}/{}/{}", g.name(), n.name, to_string(pass));
      const auto it = kernel_ns.find(path);
      const double ns = it == kernel_ns.end() ? 0.0 : it->second;
      const OpCost& c = train ? n.cost.of(pass) : infer[i];
      if (ns == 0 && c.flops == 0 && c.bytes == 0) continue;
      mapped_ns += ns;
      out.rows.push_back({std::int64_t(i), n.name, n.op, to_string(pass), ns * per, c.flops, c.bytes, counted_at(path)});
    }
  }
  if (train) {
    const auto it = kernel_ns.find(g.name() + "/optimizer/optimizer");
    if (it != kernel_ns.end()) {
      mapped_ns += it->second;
      out.rows.push_back({std::int64_t(nodes.size()), "optimizer", "SGD", "optimizer", it->second * per, 0, 0,
                          counted_at(g.name() + "/optimizer/optimizer")});
    }
  }
  out.step_kernel_s = total_ns * per;
  out.mapped_s = mapped_ns * per;
  return out;
}

Table net_layer_table(const NetRecord& r, const NetLayerRows& all, int steps, size_t top) {
  std::vector<NetLayerRow> rows = all.rows;
  std::stable_sort(rows.begin(), rows.end(), [](const NetLayerRow& a, const NetLayerRow& b) { return a.seconds > b.seconds; });
  Table t("bench.nets.layers", fmt::format("{} {} {} batch {} {}: GPU time per layer and pass (profiled eager steps)",
                                           r.model, r.device, r.precision, r.batch, r.mode));
  t.col("layer", "Layer").col("op", "Op").col("pass", "Pass");
  t.col("ms", "GPU time", "ms", 3).col("share", "of step", "%", 1);
  t.col("gflop", "FLOP", "G", 2).col("mb", "bytes", "MB", 1).col("intensity", "FLOP/B", "", 1);
  t.col("tflops", "TFLOP/s", "", 1).col("gbps", "GB/s", "", 0);
  const size_t n = top ? std::min(top, rows.size()) : rows.size();
  for (size_t i = 0; i < n; ++i) {
    const NetLayerRow& x = rows[i];
    const double s = x.seconds;
    t.row({x.layer, x.op, x.pass, s * 1e3, all.step_kernel_s > 0 ? Cell(100.0 * s / all.step_kernel_s) : Cell(),
           x.flops * 1e-9, x.bytes * 1e-6, x.bytes > 0 ? Cell(x.flops / x.bytes) : Cell(),
           s > 0 && x.flops > 0 ? Cell(x.flops / s * 1e-12) : Cell(), s > 0 && x.bytes > 0 ? Cell(x.bytes / s * 1e-9) : Cell()});
  }
  if (n < rows.size()) t.note(fmt::format("{} more layer passes (the store has every one: roofline chart draws them)", rows.size() - n));
  t.note(fmt::format("GPU time: kernels launched inside each layer's NVTX range, per step ({} eager steps). Kernel "
                     "time per step {:.3f} ms, of which {:.1f}% outside any layer (loss, casts)",
                     steps, all.step_kernel_s * 1e3,
                     all.step_kernel_s > 0 ? 100.0 * (all.step_kernel_s - all.mapped_s) / all.step_kernel_s : 0.0));
  t.note("FLOP and bytes: the engine's paper costs of the pass (fp32 parameters and gradients; activations in the "
         "cell's precision); the counters of `roofline profile --counters` measure them");
  return t;
}

Table net_counter_table(const NetRecord& r, const NetLayerRows& all, size_t top) {
  std::vector<NetLayerRow> rows;
  for (const auto& x : all.rows)
    if (x.counted) rows.push_back(x);
  std::stable_sort(rows.begin(), rows.end(), [](const NetLayerRow& a, const NetLayerRow& b) { return a.seconds > b.seconds; });
  Table t("bench.nets.counters", fmt::format("{} {} {} batch {} {}: counted against paper, per layer and pass (hardware "
                                             "counters, one step)",
                                             r.model, r.device, r.precision, r.batch, r.mode));
  t.col("layer", "Layer").col("pass", "Pass");
  t.col("paper_gflop", "paper FLOP", "G", 2).col("counted_gflop", "counted FLOP", "G", 2);
  t.col("flop_ratio", "counted/paper", "", 2).col("unit", "main unit");
  t.col("paper_mb", "paper bytes", "MB", 1).col("dram_mb", "DRAM", "MB", 1).col("byte_ratio", "DRAM/paper", "", 2);
  t.col("l2_mb", "L2", "MB", 1).col("intensity", "FLOP/DRAM B", "", 1);
  const auto main_unit = [](const CountedWork& c) {
    std::string best;
    double most = 0;
    for (const auto& [u, f] : c.by_unit)
      if (f > most) most = f, best = u;
    return most > 0 ? fmt::format("{} ({:.0f}%)", best, 100.0 * most / c.flops) : std::string("-");
  };
  const size_t n = top ? std::min(top, rows.size()) : rows.size();
  for (size_t i = 0; i < n; ++i) {
    const NetLayerRow& x = rows[i];
    const CountedWork& c = *x.counted;
    t.row({x.layer, x.pass, x.flops * 1e-9, c.flops * 1e-9, x.flops > 0 ? Cell(c.flops / x.flops) : Cell(),
           main_unit(c), x.bytes * 1e-6, c.dram_bytes * 1e-6, x.bytes > 0 ? Cell(c.dram_bytes / x.bytes) : Cell(),
           c.l2_bytes * 1e-6, c.dram_bytes > 0 ? Cell(c.flops / c.dram_bytes) : Cell()});
  }
  if (n < rows.size()) t.note(fmt::format("{} more layer passes in the store", rows.size() - n));
  double paper = 0, paper_bytes = 0;
  for (const auto& x : all.rows) paper += x.flops, paper_bytes += x.bytes;
  if (all.counted_total && paper > 0) {
    const CountedWork& c = *all.counted_total;
    t.note(fmt::format("the step: {:.1f} GFLOP counted ({:.0f}% on tensor cores) against {:.1f} on paper ({:.2f}×); "
                       "{:.0f} MB from DRAM against {:.0f} MB on paper; {} kernels",
                       c.flops * 1e-9, c.flops > 0 ? 100.0 * c.tensor_flops / c.flops : 0.0, paper * 1e-9,
                       c.flops / paper, c.dram_bytes * 1e-6, paper_bytes * 1e-6, c.kernels));
  }
  t.note("counted: every kernel launched in the layer's NVTX range (one eager step, each launch profiled by CUPTI's "
         "range profiler; DRAM bytes read in a separate one-pass run, L2 clean before each launch); main unit: the "
         "unit and precision with most FLOPs; work FLOPs (the compiler's HFMA2.MMA register moves left out, as in "
         "the profile's tables). counted/paper above 1: work the paper leaves out (im2col, padding to tile sizes, "
         "recomputation); below 1: an algorithm with fewer FLOPs than the direct convolution (FFT, Winograd: fp32 "
         "engines) or FLOPs no counter sees (tensor-core FLOPs are counted by precision on Hopper)");
  return t;
}

void store_net_layers(store::Db& db, std::int64_t run_id, std::optional<std::int64_t> device_id, const NetRecord& r,
                      std::optional<std::int64_t> profile_id, const NetLayerRows& rows) {
  store::Transaction tx(db);
  auto st = db.prepare(
      "INSERT INTO layers (run_id, model, layer_index, layer_name, op, pass, batch, flops, bytes, seconds, params, "
      "device_id, precision, mode, profile_id, counted_flops, counted_tensor_flops, counted_dram_bytes, "
      "counted_l2_bytes, counted_seconds, counted_by_unit) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  for (const NetLayerRow& x : rows.rows) {
    st.reset();
    const nlohmann::json params = {{"device", r.device}, {"step_kernel_s", rows.step_kernel_s}};
    st.bind(1, run_id).bind(2, r.model).bind(3, x.index).bind(4, x.layer).bind(5, x.op).bind(6, x.pass);
    st.bind(7, r.batch).bind(8, x.flops).bind(9, x.bytes).bind(10, x.seconds).bind(11, json_text(params));
    st.bind(12, device_id).bind(13, r.precision).bind(14, r.mode).bind(15, profile_id);
    if (x.counted) {
      const CountedWork& c = *x.counted;
      st.bind(16, c.flops).bind(17, c.tensor_flops).bind(18, c.dram_bytes).bind(19, c.l2_bytes).bind(20, c.seconds);
      st.bind(21, json_text(nlohmann::json(c.by_unit)));
    } else {
      for (int k = 16; k <= 21; ++k) st.bind(k, std::optional<double>());
    }
    st.run();
  }
  tx.commit();
}

}  // namespace roofline::engine

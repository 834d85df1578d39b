// The networks' benchmark, per layer: where a profiled step's GPU time goes,
// layer by layer and pass by pass, beside the engine's paper costs.
#include <fmt/format.h>

#include <algorithm>

#include "roofline/engine/layer_graph.hpp"
#include "roofline/engine/net_bench.hpp"

namespace roofline::engine {

std::string net_ceiling_name(const std::string& device, const std::string& precision) {
  if (device == "cpu") return "fp32.simd";
  if (precision == "fp32") return "fp32.cuda";  // TF32 off: the CUDA cores
  return precision + ".tensor";
}

Table net_layer_table(const NetRecord& r, const std::map<std::string, double>& kernel_ns, int steps, size_t top) {
  const LayerGraph g = make_graph_model(r.model);
  const Precision p = parse_precision(r.precision);
  const std::vector<NodeInfo> nodes = g.describe(r.batch, activation_dtype(p));
  const bool train = r.mode == "train";
  struct Row {
    std::string layer, op, pass;
    double ns = 0;
    OpCost cost;
  };
  std::vector<Row> rows;
  double total_ns = 0, mapped_ns = 0;
  for (const auto& [path, v] : kernel_ns) total_ns += v;
  const std::vector<Pass> passes =
      train ? std::vector<Pass>{Pass::Forward, Pass::InputGrad, Pass::WeightGrad} : std::vector<Pass>{Pass::Forward};
  for (const NodeInfo& n : nodes)
    for (Pass pass : passes) {
      const std::string path = fmt::format("{}/{}/{}", g.name(), n.name, to_string(pass));
      const auto it = kernel_ns.find(path);
      const double ns = it == kernel_ns.end() ? 0.0 : it->second;
      const OpCost& c = n.cost.of(pass);
      if (ns == 0 && c.flops == 0 && c.bytes == 0) continue;
      mapped_ns += ns;
      rows.push_back({n.name, n.op, to_string(pass), ns, c});
    }
  if (train) {
    const std::string path = g.name() + "/optimizer/optimizer";
    const auto it = kernel_ns.find(path);
    if (it != kernel_ns.end()) {
      mapped_ns += it->second;
      rows.push_back({"optimizer", "SGD", "optimizer", it->second, {}});
    }
  }
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.ns > b.ns; });
  const double per = steps > 0 ? 1.0 / steps : 1.0;
  Table t("bench.nets.layers", fmt::format("{} {} {} batch {} {}: GPU time per layer and pass (profiled eager steps)",
                                           r.model, r.device, r.precision, r.batch, r.mode));
  t.col("layer", "Layer").col("op", "Op").col("pass", "Pass");
  t.col("ms", "GPU time", "ms", 3).col("share", "of step", "%", 1);
  t.col("gflop", "FLOP", "G", 2).col("mb", "bytes", "MB", 1).col("intensity", "FLOP/B", "", 1);
  t.col("tflops", "TFLOP/s", "", 1).col("gbps", "GB/s", "", 0);
  const size_t n = top ? std::min(top, rows.size()) : rows.size();
  for (size_t i = 0; i < n; ++i) {
    const Row& x = rows[i];
    const double s = x.ns * per * 1e-9;
    t.row({x.layer, x.op, x.pass, s * 1e3, total_ns > 0 ? Cell(100.0 * x.ns / total_ns) : Cell(),
           x.cost.flops * 1e-9, x.cost.bytes * 1e-6, x.cost.bytes > 0 ? Cell(x.cost.intensity()) : Cell(),
           s > 0 && x.cost.flops > 0 ? Cell(x.cost.flops / s * 1e-12) : Cell(),
           s > 0 && x.cost.bytes > 0 ? Cell(x.cost.bytes / s * 1e-9) : Cell()});
  }
  if (n < rows.size()) t.note(fmt::format("{} more layer passes (the store has every kernel)", rows.size() - n));
  t.note(fmt::format("GPU time: kernels launched inside each layer's NVTX range, per step ({} eager steps). Kernel "
                     "time per step {:.3f} ms, of which {:.1f}% outside any layer (loss, casts)",
                     steps, total_ns * per * 1e-6, total_ns > 0 ? 100.0 * (total_ns - mapped_ns) / total_ns : 0.0));
  t.note("FLOP and bytes: the engine's paper costs of the pass (fp32 parameters and gradients; activations in the "
         "cell's precision); the counters of `roofline profile --counters` measure them");
  return t;
}

}  // namespace roofline::engine

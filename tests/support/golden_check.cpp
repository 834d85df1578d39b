#include "tests/support/golden_check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "roofline/engine/safetensors.hpp"
#include "tests/support/golden_init.hpp"

namespace roofline::test {

namespace {

double rel(const std::vector<float>& a, const std::vector<float>& ref) {
  double num = 0, den = 0;
  for (size_t i = 0; i < ref.size() && i < a.size(); ++i) {
    const double d = static_cast<double>(a[i]) - ref[i];
    num += d * d;
    den += static_cast<double>(ref[i]) * ref[i];
  }
  if (a.size() != ref.size()) return INFINITY;
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

}  // namespace

std::string GoldenResult::summary() const {
  std::string s = fmt::format("worst logits {:.2e}, worst gradient {:.2e}", worst_logits, worst_grads);
  if (median_ratio > 0) s += fmt::format(", median gradient error {:.2f}x PyTorch's", median_ratio);
  for (const auto& f : failures) s += "\n  " + f;
  return s;
}

GoldenResult check_golden(engine::GraphNetwork& net, const std::string& file, std::int64_t batch, std::int64_t size,
                          const GoldenBounds& b) {
  using engine::SafetensorsFile;
  const SafetensorsFile g = SafetensorsFile::open(file);
  std::optional<SafetensorsFile> peer;
  if (!b.peer_file.empty()) peer = SafetensorsFile::open(b.peer_file);
  const auto& graph = net.graph();
  GoldenResult r;
  std::vector<double> ratios;  // our gradient error over the peer's, tensor by tensor
  // `key`: the tensor the figure compares (its peer bound, when there is a peer file).
  auto check_key = [&](const std::string& what, double e, double bound, const std::string& key) {
    if (peer) bound = std::max(b.floor, b.factor * rel(peer->read_f32(key), g.read_f32(key)));
    if (!(e <= bound)) r.failures.push_back(fmt::format("{}: {:.3e} > {:.1e}", what, e, bound));
  };
  net.load_state(golden_state(graph));
  net.set_batch(golden_input(batch, size), golden_labels(batch, graph.classes()), batch);
  net.forward(batch, false);
  const double eval = rel(net.logits(batch), g.read_f32("eval_logits"));
  check_key("eval logits", eval, b.logits, "eval_logits");
  net.forward(batch, true);
  net.loss_forward(batch);
  const double train = rel(net.logits(batch), g.read_f32("logits"));
  check_key("training logits", train, b.logits, "logits");
  r.worst_logits = std::max(eval, train);
  check_key("loss", rel({net.loss()}, g.read_f32("loss")), b.loss, "loss");
  net.backward(batch);
  const auto grads = net.grads();
  const auto state = net.state();
  for (size_t i = 0; i < graph.params().size(); ++i) {
    const auto& p = graph.params()[i];
    if (!p.learnable) {
      check_key("running statistic " + p.name, rel(state[i], g.read_f32("after." + p.name)), b.stats, "after." + p.name);
      continue;
    }
    std::vector<float> sample;
    for (auto j : golden_sample_index(static_cast<std::int64_t>(grads[i].size())))
      sample.push_back(grads[i][static_cast<size_t>(j)]);
    double norm = 0;
    for (float x : grads[i]) norm += static_cast<double>(x) * x;
    const double es = rel(sample, g.read_f32("grad_sample." + p.name));
    const double en = rel({static_cast<float>(std::sqrt(norm))}, g.read_f32("grad_norm." + p.name));
    r.worst_grads = std::max({r.worst_grads, es, en});
    check_key("gradient " + p.name, es, b.grads, "grad_sample." + p.name);
    if (peer) {
      const double pe = rel(peer->read_f32("grad_sample." + p.name), g.read_f32("grad_sample." + p.name));
      if (pe > 0) ratios.push_back(es / pe);
    }
    // A norm can agree by chance where the entries do not: its peer bound is the entries'.
    check_key("gradient norm " + p.name, en, b.grads, "grad_sample." + p.name);
  }
  if (!ratios.empty()) {
    std::sort(ratios.begin(), ratios.end());
    const size_t m = ratios.size();
    r.median_ratio = m % 2 ? ratios[m / 2] : 0.5 * (ratios[m / 2 - 1] + ratios[m / 2]);
    if (b.median_factor > 0 && !(r.median_ratio <= b.median_factor))
      r.failures.push_back(fmt::format("median gradient error over PyTorch's: {:.2f} > {:.2f}", r.median_ratio,
                                       b.median_factor));
  }
  return r;
}

}  // namespace roofline::test

#include "roofline/engine/graph_weights.hpp"

#include <fmt/format.h>

#include <cstdint>

#include "roofline/core/error.hpp"
#include "roofline/engine/safetensors.hpp"

namespace roofline::engine {

namespace {

// BatchNorm layers: the names whose running_mean is a parameter of g.
std::vector<std::string> batchnorm_layers(const LayerGraph& g) {
  std::vector<std::string> out;
  for (const auto& n : g.nodes())
    if (n.op == NodeOp::BatchNorm2d) out.push_back(n.name);
  return out;
}

}  // namespace

std::vector<std::vector<float>> read_state(const LayerGraph& g, const std::string& path) {
  const SafetensorsFile file = SafetensorsFile::open(path);
  std::vector<ExpectedTensor> expected;
  for (const auto& p : g.params()) expected.push_back({p.name, p.shape, false});
  for (const auto& bn : batchnorm_layers(g)) expected.push_back({bn + ".num_batches_tracked", {}, true});
  check_checkpoint(file, expected, g.name());
  std::vector<std::vector<float>> out;
  for (const auto& p : g.params()) out.push_back(file.read_f32(p.name));
  return out;
}

void write_state(const LayerGraph& g, const std::vector<std::vector<float>>& state, const std::string& path) {
  ROOFLINE_ASSERT(state.size() == g.params().size(), "state tensors");
  std::vector<SafetensorsTensor> tensors;
  for (size_t i = 0; i < state.size(); ++i) {
    const GraphParam& p = g.params()[i];
    ROOFLINE_ASSERT(static_cast<std::int64_t>(state[i].size()) == numel(p.shape), "state tensor size: " + p.name);
    tensors.push_back({p.name, "F32", p.shape, state[i].data()});
  }
  static const std::int64_t zero = 0;
  for (const auto& bn : batchnorm_layers(g)) tensors.push_back({bn + ".num_batches_tracked", "I64", {}, &zero});
  write_safetensors(path, tensors, {{"format", "pt"}, {"model", g.name()}, {"written_by", "roofline"}});
}

}  // namespace roofline::engine

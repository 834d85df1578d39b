// The small models on the Sequential engine (Network, CPU reference backend)
// as the yardstick for the same models on GraphNetwork: one training-mode
// forward and backward of the mean cross-entropy loss from given weights.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "roofline/engine/layer_graph.hpp"

namespace roofline::test {

// fp32 results held as doubles, the reference side of numeric.hpp's comparisons.
struct SequentialStep {
  std::vector<double> logits;               // (batch, classes)
  std::vector<std::vector<double>> grads;   // per state tensor, torch's layout
};

// `state`: the graph's tensors (LayerGraph::init_params order); `x`: (batch, c, h, w) NCHW.
SequentialStep sequential_step(const engine::LayerGraph& g, const std::vector<std::vector<float>>& state,
                               const std::vector<float>& x, const std::vector<std::int32_t>& labels,
                               std::int64_t batch);

// A seeded input in [−1, 1) for a per-sample shape, and labels below `classes`.
std::vector<float> random_input(const engine::Shape& sample, std::int64_t batch, std::uint64_t seed);
std::vector<std::int32_t> random_labels(std::int64_t batch, std::int64_t classes, std::uint64_t seed);

}  // namespace roofline::test

// The weights and batch of the golden tests, drawn from a counter-based hash
// exactly as peers/golden_nets.py draws them, so that roofline and PyTorch
// start from the same state without a file of weights between them.
#pragma once
#include <cstdint>
#include <vector>

#include "roofline/engine/layer_graph.hpp"

namespace roofline::test {

// lo + (hi − lo)·u with u = (splitmix64(stream·2^32 + i) >> 40) / 2^24, i < n.
std::vector<float> hash_uniform(std::uint64_t stream, std::int64_t n, double lo, double hi);
// Every state_dict tensor of `g` (params() order = torch's state_dict order).
std::vector<std::vector<float>> golden_state(const engine::LayerGraph& g);
// The input batch (batch, 3, size, size) NCHW and its labels.
std::vector<float> golden_input(std::int64_t batch, std::int64_t size);
std::vector<std::int32_t> golden_labels(std::int64_t batch, std::int64_t classes);
// The entries golden_nets.py samples from a gradient of n elements.
std::vector<std::int64_t> golden_sample_index(std::int64_t n);

}  // namespace roofline::test

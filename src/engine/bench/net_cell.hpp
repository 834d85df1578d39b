// What the single-GPU cells (net_bench.cpp) and the data-parallel ones
// (net_dp.cpp) share: the synthetic batch and a cell's network options.
#pragma once
#include <cstdint>

#include "roofline/engine/graph_network.hpp"
#include "roofline/engine/net_bench.hpp"

namespace roofline::engine {

// A batch of standard-normal images and uniform labels drawn from `seed`.
void fill_synthetic(GraphNetwork& net, std::int64_t batch, std::uint64_t seed);
// The network options of one cell: the precision, the model's recipe
// learning rate, training or inference, BatchNorm folding and the layout.
GraphOptions cell_options(const NetBenchConfig& cfg, const LayerGraph& g, Precision p, bool train);

}  // namespace roofline::engine

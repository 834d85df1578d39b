// The BatchNorm folds of an inference GraphNetwork (private): which
// convolution takes which BatchNorm2d into its weights, and the folded
// weights and biases, computed on the host when the state is loaded.
#pragma once
#include <cstdint>
#include <vector>

#include "roofline/engine/graph_network.hpp"
#include "roofline/engine/tensor.hpp"

namespace roofline::engine {

struct GraphNetwork::Fold {
  std::vector<int> partner;         // batchnorm_folds(graph): a folded Conv2d's BatchNorm and back, else −1
  std::vector<std::int64_t> w_off;  // per node: a folded convolution's weights in `weights` (elements)
  std::vector<std::int64_t> b_off;  // per node: its bias in `bias` (floats)
  // The folded weights in the network's dtype, each in its convolution
  // parameter's layout ((k, c/groups, r, s), or (k, r, s, c) in NHWC: the
  // output channel is outermost either way, so the fold scales whole rows).
  Tensor weights;
  Tensor bias;    // fp32, k per convolution
  int count = 0;  // folded pairs
};

}  // namespace roofline::engine

// Compares a GraphNetwork against a golden file of peers/golden_nets.py: runs
// the same steps the script ran (an eval forward, then a training forward,
// the loss and backward) on golden_init's weights and batch, and lists every
// figure outside its bound.
#pragma once
#include <string>
#include <vector>

#include "roofline/engine/graph_network.hpp"

namespace roofline::test {

struct GoldenBounds {
  double logits = 1e-4;  // relative L2 error of eval and training logits
  double loss = 1e-4;
  double grads = 1e-3;   // of each gradient's sampled entries and of its norm
  double stats = 1e-4;   // running statistics after the training forward
  // When set: each figure's bound is instead max(floor, factor × how far this
  // file of PyTorch's (its bf16 run) is from the reference file, figure by figure).
  std::string peer_file;
  double factor = 2, floor = 1e-2;
  // With a peer file: the median over the gradients of (our error / the
  // peer's) must also stay within this (0: not checked). A per-tensor factor
  // alone is a bound on one noisy draw (a gradient's sampled entries); a
  // systematic loss of precision moves the median.
  double median_factor = 0;
};

struct GoldenResult {
  std::vector<std::string> failures;  // "grad layer1.0.conv1.weight: 3.1e-3 > 1e-3"
  double worst_logits = 0, worst_grads = 0;
  double median_ratio = 0;  // with a peer file: median over the gradients of our error / the peer's
  std::string summary() const;
};

// `net` must have been built from the same graph, batch and input size as the file.
GoldenResult check_golden(engine::GraphNetwork& net, const std::string& file, std::int64_t batch, std::int64_t size,
                          const GoldenBounds& bounds);

}  // namespace roofline::test

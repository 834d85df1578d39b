// The buffer plan of a GraphNetwork (private): which arena buffer each value's
// activation and gradient lives in, how each backward edge delivers its
// gradient, and where each buffer sits in the arena. Built once from the graph.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "roofline/engine/graph_network.hpp"

namespace roofline::engine {

// One buffer of the arena: its size and the span of step times it must hold
// its contents over (forward node i at time i, the loss at N, node i's
// backward at 2N − i); `offset` is filled by place_buffers.
struct PlannedBuffer {
  size_t bytes = 0;
  int start = 0, end = 0;
  size_t offset = 0;
};
// Places every buffer at the lowest offset (256-byte aligned) where it
// overlaps no buffer whose lifetime overlaps its own, largest first; returns
// the arena's size.
size_t place_buffers(std::vector<PlannedBuffer>& buffers);

// How a node's backward delivers the gradient of one of its inputs.
enum class GradEdge {
  None,     // the input needs no gradient (the network's input)
  Write,    // the first to send: writes the gradient buffer
  Accumulate,  // later ones: write a temporary, then add it in
  Alias,    // the gradient is the node's own (masked) output gradient: same buffer (residuals, Flatten)
  Copy,     // the same values as the output gradient, but that buffer is taken: copied
  AddOutput,   // the output gradient added into an already written buffer
};

struct GraphNetwork::Plan {
  std::vector<PlannedBuffer> buffers;
  std::vector<int> act;                    // per value: buffer of its activation (−1: the input tensor, or a view of it)
  std::vector<int> grad;                   // per value: buffer of its gradient (−1: none)
  std::vector<int> argmax;                 // per node: max-pool argmax scratch (−1: none)
  std::vector<std::vector<GradEdge>> edge; // per node, per input
  std::vector<std::vector<int>> temp;      // per node, per input: the Accumulate temporary (−1: none)
  size_t arena = 0, unshared = 0;
};

// `folds`: batchnorm_folds of an inference network that folds (else empty): a
// folded BatchNorm's output is its convolution's output buffer, written by the
// convolution, so the pair needs one buffer where it needed two.
GraphNetwork::Plan make_plan(const LayerGraph& g, std::int64_t max_batch, DType dtype, bool training,
                             const std::vector<int>& folds = {});

}  // namespace roofline::engine

#include "src/engine/graph/graph_plan.hpp"

#include <algorithm>
#include <numeric>

#include "roofline/core/error.hpp"

namespace roofline::engine {

size_t place_buffers(std::vector<PlannedBuffer>& buffers) {
  constexpr size_t kAlign = 256;
  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return buffers[a].bytes > buffers[b].bytes; });
  std::vector<size_t> placed;
  size_t total = 0;
  for (size_t i : order) {
    PlannedBuffer& b = buffers[i];
    const size_t bytes = (b.bytes + kAlign - 1) / kAlign * kAlign;
    // Address ranges taken, during b's lifetime, by the buffers placed so far.
    std::vector<std::pair<size_t, size_t>> taken;
    for (size_t j : placed) {
      const PlannedBuffer& o = buffers[j];
      if (o.start <= b.end && b.start <= o.end)
        taken.emplace_back(o.offset, o.offset + (o.bytes + kAlign - 1) / kAlign * kAlign);
    }
    std::sort(taken.begin(), taken.end());
    size_t offset = 0;
    for (const auto& [lo, hi] : taken) {
      if (offset + bytes <= lo) break;
      offset = std::max(offset, hi);
    }
    b.offset = offset;
    total = std::max(total, offset + bytes);
    placed.push_back(i);
  }
  return total;
}

namespace {

// Buffers that must be one (aliases) are merged: the union of their
// lifetimes, the largest size.
struct Buffers {
  std::vector<PlannedBuffer> b;
  std::vector<int> parent;
  int make(size_t bytes, int start, int end) {
    b.push_back({bytes, start, end, 0});
    parent.push_back(static_cast<int>(parent.size()));
    return static_cast<int>(b.size()) - 1;
  }
  int find(int x) {
    while (parent[static_cast<size_t>(x)] != x) x = parent[static_cast<size_t>(x)] = parent[static_cast<size_t>(parent[static_cast<size_t>(x)])];
    return x;
  }
  void extend(int x, int t) {
    PlannedBuffer& p = b[static_cast<size_t>(find(x))];
    p.start = std::min(p.start, t);
    p.end = std::max(p.end, t);
  }
  void unite(int x, int y) {
    x = find(x), y = find(y);
    if (x == y) return;
    PlannedBuffer& a = b[static_cast<size_t>(x)];
    const PlannedBuffer& c = b[static_cast<size_t>(y)];
    a.bytes = std::max(a.bytes, c.bytes);
    a.start = std::min(a.start, c.start);
    a.end = std::max(a.end, c.end);
    parent[static_cast<size_t>(y)] = x;
  }
};

}  // namespace

GraphNetwork::Plan make_plan(const LayerGraph& g, std::int64_t max_batch, DType dtype, bool training,
                             const std::vector<int>& folds) {
  ROOFLINE_ASSERT(folds.empty() || (!training && folds.size() == g.nodes().size()), "folds of an inference network");
  const auto& nodes = g.nodes();
  const auto& values = g.values();
  const int N = static_cast<int>(nodes.size());
  const auto fwd = [](size_t i) { return static_cast<int>(i); };
  const auto bwd = [N](size_t i) { return 2 * N - static_cast<int>(i); };
  const auto bytes_of = [&](int v) {
    return static_cast<size_t>(max_batch * numel(values[static_cast<size_t>(v)].shape)) * dtype_size(dtype);
  };
  Buffers bufs;
  GraphNetwork::Plan plan;
  plan.act.assign(values.size(), -1);
  plan.grad.assign(values.size(), -1);
  plan.argmax.assign(nodes.size(), -1);
  plan.edge.resize(nodes.size());
  plan.temp.resize(nodes.size());

  // Activations: born at their producer, alive through their last reader.
  for (size_t i = 0; i < nodes.size(); ++i) {
    const GraphNode& n = nodes[i];
    const bool folded_bn = !folds.empty() && folds[i] >= 0 && n.op == NodeOp::BatchNorm2d;
    const bool view = n.op == NodeOp::Flatten || (n.op == NodeOp::Dropout && !training) || folded_bn;
    const int in = n.inputs[0];
    if (view) {  // the input's buffer (−1 for the network's input and its views: not in the arena)
      plan.act[static_cast<size_t>(n.output)] = plan.act[static_cast<size_t>(in)];
    } else {
      plan.act[static_cast<size_t>(n.output)] = bufs.make(bytes_of(n.output), fwd(i), fwd(i));
    }
    if (n.op == NodeOp::MaxPool2d && training) {  // inference pools write no argmax
      const size_t count = static_cast<size_t>(max_batch * numel(values[static_cast<size_t>(n.output)].shape));
      plan.argmax[i] = bufs.make(count * 4, fwd(i), bwd(i));
    }
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    const GraphNode& n = nodes[i];
    for (int in : n.inputs)
      if (plan.act[static_cast<size_t>(in)] >= 0) bufs.extend(plan.act[static_cast<size_t>(in)], fwd(i));
    if (!training) continue;
    // What each backward reads of the forward.
    const bool reads_in = n.op == NodeOp::Conv2d || n.op == NodeOp::Linear || n.op == NodeOp::BatchNorm2d;
    const bool reads_out = n.act != ops::Activation::None || n.op == NodeOp::ReLU;
    if (reads_in && plan.act[static_cast<size_t>(n.inputs[0])] >= 0)
      bufs.extend(plan.act[static_cast<size_t>(n.inputs[0])], bwd(i));
    if (reads_out) bufs.extend(plan.act[static_cast<size_t>(n.output)], bwd(i));
  }
  bufs.extend(plan.act[static_cast<size_t>(g.output())], N);  // the loss reads the logits

  if (training) {
    // Gradients, in backward order: the output's from the loss, then each
    // node's inputs' as its backward sends them.
    std::vector<bool> written(values.size(), false);
    const int out = g.output();
    plan.grad[static_cast<size_t>(out)] = bufs.make(bytes_of(out), N, N);
    written[static_cast<size_t>(out)] = true;
    for (size_t ii = nodes.size(); ii-- > 0;) {
      const GraphNode& n = nodes[ii];
      const int t = bwd(ii);
      const int gout = plan.grad[static_cast<size_t>(n.output)];
      ROOFLINE_ASSERT(gout >= 0, "a layer whose output feeds nothing: " + n.name);
      bufs.extend(gout, t);
      plan.edge[ii].assign(n.inputs.size(), GradEdge::None);
      plan.temp[ii].assign(n.inputs.size(), -1);
      for (size_t k = 0; k < n.inputs.size(); ++k) {
        const int v = n.inputs[k];
        if (v == 0) continue;  // the network's input needs no gradient
        // The output gradient is what this input receives (residuals, Add,
        // Flatten): share the buffer when this is the first sender and no
        // other input of this node took it already.
        const bool passes_output = (n.op == NodeOp::BatchNorm2d && k == 1) || n.op == NodeOp::Add ||
                                   n.op == NodeOp::Flatten;
        bool output_taken = false;
        for (size_t j = 0; j < k; ++j) output_taken |= plan.edge[ii][j] == GradEdge::Alias;
        auto& gv = plan.grad[static_cast<size_t>(v)];
        if (passes_output) {
          if (!written[static_cast<size_t>(v)]) {
            if (!output_taken) {
              plan.edge[ii][k] = GradEdge::Alias;
              gv = gout;
            } else {
              plan.edge[ii][k] = GradEdge::Copy;
              gv = bufs.make(bytes_of(v), t, t);
            }
          } else {
            plan.edge[ii][k] = GradEdge::AddOutput;
          }
        } else if (!written[static_cast<size_t>(v)]) {
          plan.edge[ii][k] = GradEdge::Write;
          gv = bufs.make(bytes_of(v), t, t);
        } else {
          plan.edge[ii][k] = GradEdge::Accumulate;
          plan.temp[ii][k] = bufs.make(bytes_of(v), t, t);
        }
        written[static_cast<size_t>(v)] = true;
        bufs.extend(gv, t);
        const int producer = values[static_cast<size_t>(v)].producer;
        if (producer >= 0) bufs.extend(gv, bwd(static_cast<size_t>(producer)));
      }
    }
  }

  // Resolve aliases, place, and map every id to its merged buffer.
  std::vector<int> root_index(bufs.b.size(), -1);
  for (size_t i = 0; i < bufs.b.size(); ++i) {
    const int r = bufs.find(static_cast<int>(i));
    if (root_index[static_cast<size_t>(r)] < 0) {
      root_index[static_cast<size_t>(r)] = static_cast<int>(plan.buffers.size());
      plan.buffers.push_back(bufs.b[static_cast<size_t>(r)]);
    }
  }
  const auto map = [&](int& id) {
    if (id >= 0) id = root_index[static_cast<size_t>(bufs.find(id))];
  };
  for (auto& id : plan.act) map(id);
  for (auto& id : plan.grad) map(id);
  for (auto& id : plan.argmax) map(id);
  for (auto& row : plan.temp)
    for (auto& id : row) map(id);
  for (const auto& b : plan.buffers) plan.unshared += b.bytes;
  plan.arena = place_buffers(plan.buffers);
  return plan;
}

}  // namespace roofline::engine

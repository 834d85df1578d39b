// Data-parallel training (issue 25; roadmap step 7): which gradients travel
// together in one all-reduce, and what a GraphNetwork calls to average them
// across ranks during backward (GradSync). Two implementations: ThreadGroup
// (the ranks are threads of one process on CPU contexts: the CPU suite checks
// the whole algorithm with it) and NCCL (nccl_sync.hpp: one process or one
// thread per GPU).
#pragma once
#include <barrier>
#include <cstdint>
#include <memory>
#include <vector>

#include "roofline/engine/context.hpp"
#include "roofline/engine/layer_graph.hpp"
#include "roofline/engine/rank_env.hpp"
#include "roofline/engine/tensor.hpp"

namespace roofline::engine::dist {

// ---- Gradient buckets ----------------------------------------------------------
// Gradients are all-reduced in buckets as backward produces them, so that the
// communication of the last layers overlaps the backward of the first (as
// PyTorch DDP): the learnable parameters in reverse state_dict order (the
// order backward reaches them), cut into buckets of at most `cap_bytes` of
// gradient; the first bucket is capped at `first_cap_bytes` so that its
// all-reduce starts early; a gradient larger than the cap is a bucket of its
// own. DDP's defaults: 25 MiB, first 1 MiB.
struct BucketPlanConfig {
  std::int64_t cap_bytes = 25ll << 20;
  std::int64_t first_cap_bytes = 1ll << 20;
  DType grad_dtype = DType::F32;  // what travels: fp32 or bf16 gradients
};
struct GradBucket {
  std::vector<int> params;  // indices into LayerGraph::params(), in the order backward produces them
  std::int64_t bytes = 0;   // of gradient, at grad_dtype's width
};
std::vector<GradBucket> plan_buckets(const LayerGraph& g, const BucketPlanConfig& cfg = {});

// ---- Averaging gradients across ranks -------------------------------------------
// What a data-parallel GraphNetwork calls (GraphNetwork::set_grad_sync). Every
// rank makes the same calls in the same order (the same graph, the same bucket
// plan), as collectives need.
class GradSync {
 public:
  virtual ~GradSync() = default;
  virtual int rank() const = 0;
  virtual int world() const = 0;
  // A bucket's gradients are complete: `floats` fp32 values at `grads`, on
  // `ctx`'s device, enqueued after the backward that wrote them. Replaces
  // them with their mean over the ranks, in stream order, overlapping the
  // rest of backward where the backend can (NCCL: a stream of its own).
  // `bucket` counts from 0 within the step.
  virtual void reduce(Context& ctx, int bucket, float* grads, std::int64_t floats) = 0;
  // Before the optimizer reads the gradients: the context's stream waits for
  // every reduce of the step.
  virtual void finish(Context& ctx) = 0;
  // Rank 0's `floats` fp32 values at `data` copied to every rank (the
  // parameters at set-up, as DDP's constructor does). Synchronous.
  virtual void broadcast(Context& ctx, float* data, std::int64_t floats) = 0;
};

// Ranks that are threads of one process, on CPU contexts: reduce waits for
// every rank to reach the same bucket, then each rank averages its share of
// the values (summed in rank order, then divided by the world), so the
// result is the same on every rank. For tests and for the CPU backends.
class ThreadGroup {
 public:
  explicit ThreadGroup(int world);
  ~ThreadGroup();
  ThreadGroup(const ThreadGroup&) = delete;
  ThreadGroup& operator=(const ThreadGroup&) = delete;
  int world() const { return world_; }
  // The GradSync of one rank; each rank's thread uses its own. Throws
  // Error(Usage) for a rank outside [0, world).
  std::unique_ptr<GradSync> member(int rank);

 private:
  friend class ThreadMember;
  int world_;
  std::barrier<> barrier_;
  std::vector<float*> slots_;           // each rank's values, between two barriers
  std::vector<std::int64_t> counts_;    // and their count (checked equal)
};

}  // namespace roofline::engine::dist

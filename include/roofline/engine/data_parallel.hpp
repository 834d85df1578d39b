// Data-parallel training's host-side plan (issue 25; roadmap step 7): where
// a process sits among its peers, read from the launcher's environment, and
// which gradients travel together in one all-reduce. Pure host code, so the
// CPU suite checks it; the NCCL side that uses it comes with the multi-GPU
// trainer.
#pragma once
#include <cstdint>
#include <vector>

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

}  // namespace roofline::engine::dist

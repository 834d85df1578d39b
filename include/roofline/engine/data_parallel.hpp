// Data-parallel training's host-side plan (issue 25; roadmap step 7): where
// a process sits among its peers, read from the launcher's environment, and
// which gradients travel together in one all-reduce. Pure host code, so the
// CPU suite checks it; the NCCL side that uses it comes with the multi-GPU
// trainer.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "roofline/engine/layer_graph.hpp"
#include "roofline/engine/tensor.hpp"

namespace roofline::engine::dist {

// ---- The rank environment ------------------------------------------------------
// One process of a job of `world` processes, `local_world` of them on this
// machine. NCCL is bootstrapped over TCP from the rendezvous address.
struct RankEnv {
  int rank = 0, world = 1;
  int local_rank = 0, local_world = 1;
  std::string master_addr;  // rank 0's host ("" where the launcher gives none: one machine, 127.0.0.1)
  int master_port = 0;      // 0: none given
  std::string launcher;     // "torchrun", "mpirun (OpenMPI)", "slurm"
};

// Reads the variables the usual launchers set, through `get` (std::getenv in
// read_rank_env()): torchrun's RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE,
// MASTER_ADDR, MASTER_PORT; OpenMPI's OMPI_COMM_WORLD_{RANK, SIZE, LOCAL_RANK,
// LOCAL_SIZE}; Slurm's SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID,
// SLURM_NTASKS_PER_NODE. The first launcher whose rank variable is set wins
// (in that order). nullopt: no launcher's variables (a single process).
// Error(Input) naming the variable and the fix for a partial or inconsistent
// set: a rank without a world size, a value that is not a whole number, rank
// outside [0, world), local rank outside [0, local world), a port outside
// 1..65535.
using EnvGetter = std::function<std::optional<std::string>(const std::string&)>;
std::optional<RankEnv> read_rank_env(const EnvGetter& get);
std::optional<RankEnv> read_rank_env();

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

// `roofline bench alexnet,resnet18 --gpus 1,2,4` (issue 25): data-parallel
// training steps of the graph networks on N GPUs, one process per GPU, beside
// PyTorch DDP (peers/pytorch_ddp.py) in the same call, and the scaling table.
//
// Each rank builds the network on its GPU (LOCAL_RANK), takes rank 0's
// parameters, trains on its own synthetic batch of `batch` images and hands
// its gradient buckets to NCCL as backward produces them (NcclSync); the step
// is captured as one CUDA graph, collectives included. The ranks meet through
// the TCP rendezvous first: the same build, models, precisions, batches and
// step counts on every rank, or every rank stops naming the difference.
#pragma once
#include <nlohmann/json.hpp>
#include <vector>

#include "roofline/core/report.hpp"
#include "roofline/engine/net_bench.hpp"
#include "roofline/engine/rank_env.hpp"

namespace roofline::engine {

// One rank's cells: every model × precision × batch of cfg, training only,
// on GPU env.local_rank. A step's time is the slowest rank's (each rank times
// its steps with CUDA events; rank 0 gathers them). Returns the records on
// rank 0 (gpus = env.world), nothing on the others. A world of 1 runs the
// same code without NCCL: the scaling table's one-GPU row. Throws
// Error(Input) when the ranks disagree (build or bench), Error(Device) when a
// peer does not come or dies (the rendezvous and NCCL waits have
// cfg.rank_timeout_s), Error(Usage) for a local rank with no GPU of its own.
std::vector<NetRecord> run_net_bench_rank(const NetBenchConfig& cfg, const dist::RankEnv& env,
                                          const NetStatus& status);

// What a rank started by bench --gpus hands back to the launching process:
// the records as JSON and back (every field the tables and the store read).
nlohmann::json net_records_to_json(const std::vector<NetRecord>& records);
std::vector<NetRecord> net_records_from_json(const nlohmann::json& j);

// PyTorch DDP on the same models, precisions, per-GPU batches and GPU counts
// (peers/pytorch_ddp.py; source "pytorch-ddp").
std::vector<NetRecord> run_net_ddp_peer(const NetBenchConfig& cfg);

// Per model, precision and per-GPU batch, one row per GPU count: step time,
// images/s over every GPU, scaling efficiency (the one-GPU step time over
// this one: the per-GPU work is the same), the step's growth over one GPU
// (communication not hidden behind backward), and the same for DDP with the
// ratio of the two.
Table net_scaling_table(const std::vector<NetRecord>& ours, const std::vector<NetRecord>& peer);

}  // namespace roofline::engine

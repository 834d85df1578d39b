// `roofline bench alexnet,resnet18 --gpus 1,2,4` (issue 25): the data-parallel
// side of the bench command. With --gpus this process launches each GPU
// count's ranks (copies of itself, engine/rank_launch.hpp) and gathers rank
// 0's records; a copy it started (--rank-out FILE), or any process a
// launcher started with a world above 1 (mpirun, torchrun, srun), runs as one
// rank (engine/net_scaling.hpp).
#pragma once
#include <string>

#include "roofline/core/report.hpp"
#include "roofline/engine/net_bench.hpp"
#include "roofline/engine/rank_env.hpp"
#include "src/cli/command.hpp"

namespace roofline::cli::bench_scaling {

// bench --gpus: every count of cfg.gpus (1 runs in this process), then the
// DDP peer when cfg.peer is set; the scaling table. Throws Error(Usage) for a
// count above the GPUs present, naming both.
Report run(Invocation& ctx, const engine::NetBenchConfig& cfg);
// One rank. rank_out: where rank 0 writes its records (bench --gpus reads
// them); empty: rank 0 stores and prints them itself, the others print nothing.
Report run_rank(Invocation& ctx, const engine::NetBenchConfig& cfg, const engine::dist::RankEnv& env,
                const std::string& rank_out);

}  // namespace roofline::cli::bench_scaling

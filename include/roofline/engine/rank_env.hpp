// Where a process sits among its peers (issue 25), read from the launcher's
// environment: for the data-parallel trainer and for the profiler's
// injection library (each process's rank in a multi-process profile). Plain
// host code with no engine dependencies, so the injection library compiles it.
#pragma once
#include <functional>
#include <optional>
#include <string>

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

}  // namespace roofline::engine::dist

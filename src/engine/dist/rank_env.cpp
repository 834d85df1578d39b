// The launcher's rank environment: see roofline/engine/rank_env.hpp.
#include "roofline/engine/rank_env.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>

#include "roofline/core/error.hpp"

namespace roofline::engine::dist {

namespace {

// The variables of one launcher: rank and world size required, the rest optional.
struct LauncherVars {
  const char* name;
  const char* rank;
  const char* world;
  const char* local_rank;
  const char* local_world;
  const char* addr;  // nullptr: the launcher gives no rendezvous address
  const char* port;
};

constexpr LauncherVars kLaunchers[] = {
    {"torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"},
    {"mpirun (OpenMPI)", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
     "OMPI_COMM_WORLD_LOCAL_SIZE", "MASTER_ADDR", "MASTER_PORT"},
    {"slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_NTASKS_PER_NODE", "MASTER_ADDR",
     "MASTER_PORT"},
};

// A whole number in [lo, hi] from variable `var`, or Error(Input) saying so.
int whole(const std::string& var, const std::string& value, long lo, long hi, const char* launcher) {
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(value.c_str(), &end, 10);
  if (value.empty() || end == value.c_str() || *end != '\0' || errno != 0 || v < lo || v > hi)
    throw Error(ErrorKind::Input,
                fmt::format("{}=\"{}\" is not a whole number from {} to {}", var, value, lo, hi),
                fmt::format("start the processes with {} as it documents, or unset {}", launcher, var));
  return static_cast<int>(v);
}

}  // namespace

std::optional<RankEnv> read_rank_env(const EnvGetter& get) {
  for (const LauncherVars& l : kLaunchers) {
    const auto rank = get(l.rank);
    if (!rank) continue;
    const auto world = get(l.world);
    if (!world)
      throw Error(ErrorKind::Input, fmt::format("{} is set but {} is not: the job's size is unknown", l.rank, l.world),
                  fmt::format("start every process with {} (it sets both), or set {} to the number of processes",
                              l.name, l.world));
    RankEnv e;
    e.launcher = l.name;
    e.world = whole(l.world, *world, 1, 1 << 20, l.name);
    e.rank = whole(l.rank, *rank, 0, e.world - 1, l.name);
    e.local_world = e.world;
    e.local_rank = e.rank;
    if (const auto lw = get(l.local_world)) {
      // Slurm writes SLURM_NTASKS_PER_NODE as "4" or "4(x2)" on uneven layouts: the count before '('.
      const std::string v = lw->substr(0, lw->find('('));
      e.local_world = whole(l.local_world, v, 1, e.world, l.name);
    }
    if (const auto lr = get(l.local_rank)) {
      e.local_rank = whole(l.local_rank, *lr, 0, e.local_world - 1, l.name);
    } else if (e.local_world != e.world) {
      throw Error(ErrorKind::Input,
                  fmt::format("{} says {} processes on this machine, but {} is not set", l.local_world,
                              e.local_world, l.local_rank),
                  fmt::format("set {} (which GPU this process takes), or start the job with {}", l.local_rank,
                              l.name));
    }
    if (const auto addr = get(l.addr)) e.master_addr = *addr;
    if (const auto port = get(l.port)) e.master_port = whole(l.port, *port, 1, 65535, l.name);
    if (e.world > 1 && e.local_world != e.world && e.master_addr.empty())
      throw Error(ErrorKind::Input,
                  fmt::format("a job over several machines ({} processes, {} here) without MASTER_ADDR", e.world,
                              e.local_world),
                  "export MASTER_ADDR (rank 0's host) and MASTER_PORT to every process; torchrun sets them");
    return e;
  }
  return std::nullopt;
}

std::optional<RankEnv> read_rank_env() {
  return read_rank_env([](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    if (!v) return std::nullopt;
    return std::string(v);
  });
}

}  // namespace roofline::engine::dist

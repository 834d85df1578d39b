// Starting the ranks of a one-machine data-parallel job (issue 25): `roofline
// bench --gpus N` runs N copies of itself, one per GPU, with the variables
// torchrun sets (so each copy reads them with read_rank_env), and watches
// them: when one fails, the others are stopped and the error names it, so a
// rank that dies never leaves its peers hanging in a collective. Across
// machines, mpirun or Slurm start the ranks instead; the same worker code runs.
#pragma once
#include <chrono>
#include <string>
#include <vector>

namespace roofline::engine::dist {

struct RankLaunch {
  std::vector<std::string> argv;  // the program and its arguments, the same for every rank
  int world = 1;
  int port = 0;  // the rendezvous port (MASTER_PORT is one less, as torchrun's agent would hold it); 0: free_port()
  std::chrono::milliseconds grace{5000};         // after a rank fails: SIGTERM to the rest, SIGKILL after this
  std::chrono::milliseconds timeout{0};          // the whole job; 0: none
};

// Starts `world` processes of argv, rank r with RANK=r, WORLD_SIZE, LOCAL_RANK=r,
// LOCAL_WORLD_SIZE, MASTER_ADDR=127.0.0.1 and MASTER_PORT (and
// NCCL_NVLS_ENABLE=0 unless the caller's environment sets it: NVLink
// multicast stays off), and waits for all of them. Returns when every rank
// exited 0. Otherwise throws an Error naming the first rank that failed and
// how (its exit status, or the signal that killed it), of the kind its exit
// status means (exit 4: Error(Device), ...; a signal: Device), after the
// others were stopped; Error(Device) when the timeout passed (every rank
// stopped); Error(Usage) for a world below 1 or an empty argv.
void launch_ranks(const RankLaunch& l);

}  // namespace roofline::engine::dist

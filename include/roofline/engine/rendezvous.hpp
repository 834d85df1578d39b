// The ranks of a data-parallel job find each other over TCP (issue 25): rank
// 0 listens on the rendezvous port, the others connect to it, and small host
// messages are gathered through it: NCCL's unique id (NCCL then makes its own
// connections), each rank's build and model fingerprint (a mismatch stops
// every rank with both named), and the ranks' results. Plain POSIX sockets;
// every wait has a deadline, so a rank that never comes or dies mid-exchange
// is an error that names it, not a hang.
#pragma once
#include <chrono>
#include <string>
#include <vector>

#include "roofline/engine/rank_env.hpp"

namespace roofline::engine::dist {

class Rendezvous {
 public:
  // Rank 0 listens on `port` (every interface; SO_REUSEADDR) and waits for the
  // other world − 1 ranks; the others connect to host:port (host "" is
  // 127.0.0.1), retrying until `timeout`. Each says its rank and world;
  // rank 0 refuses a duplicate rank, a rank outside the world or a different
  // world. Throws Error(Device) naming the ranks that did not come in time,
  // Error(Usage) for a port outside 1..65535 or a rank outside [0, world).
  Rendezvous(int rank, int world, const std::string& host, int port, std::chrono::milliseconds timeout);
  ~Rendezvous();
  Rendezvous(const Rendezvous&) = delete;
  Rendezvous& operator=(const Rendezvous&) = delete;

  int rank() const { return rank_; }
  int world() const { return world_; }
  // Every rank's `mine`, in rank order, on every rank (through rank 0). Each
  // wait has the timeout; a rank that closed its connection (it died) is
  // named in the Error(Device).
  std::vector<std::string> all_gather(const std::string& mine);
  // Waits until every rank has called it.
  void barrier() { (void)all_gather({}); }

 private:
  int rank_, world_;
  std::chrono::milliseconds timeout_;
  int listen_fd_ = -1;
  std::vector<int> fds_;  // rank 0: the socket of each rank (index 0 unused); others: fds_[0], to rank 0
};

// The port rank 0 listens on for a job's ranks: MASTER_PORT + 1 under torchrun
// (whose agent holds MASTER_PORT itself, for its TCPStore; launch_ranks sets
// torchrun's variables the same way), MASTER_PORT as given by other
// launchers, else 29500 (torchrun's default: mpirun and srun set none).
int rendezvous_port(const RankEnv& env);

// A TCP port that is free on this machine now (bound to port 0 and released),
// for a launcher that starts its ranks itself (bench --gpus).
int free_port();

}  // namespace roofline::engine::dist

// Data-parallel gradient averaging over NCCL (issue 25): the GradSync of one
// rank on one GPU. reduce() enqueues an averaging all-reduce (ncclAvg) of a
// bucket on a communication stream of its own, after an event on the
// network's stream, so that it overlaps the rest of backward; finish() makes
// the network's stream wait for every bucket before the optimizer. Gradients
// travel as fp32, or as bf16 (cast on the communication stream, averaged in
// bf16, cast back: half the bytes, as DDP's bf16 compression hook). All of it
// is stream-ordered and allocation-free after the first step, so a step that
// uses it is captured as one CUDA graph. NCCL is bootstrapped by its unique
// id, which rank 0 makes and the rendezvous hands to the others.
#pragma once
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "roofline/engine/data_parallel.hpp"

namespace roofline::engine::dist {

// NCCL's unique id (128 bytes), made on rank 0. Error(Unsupported) where
// NCCL cannot be loaded (a build without CUDA, or no libnccl.so.2), naming why.
std::string nccl_unique_id();
// The NCCL version loaded ("2.28.9"); "" where none.
std::string nccl_version();

class NcclSync final : public GradSync {
 public:
  // One rank of a job of `world` (ncclCommInitRank on ctx's GPU; every rank
  // calls it with the same id). grad_dtype: F32 or BF16.
  NcclSync(Context& ctx, const std::string& unique_id, int rank, int world, DType grad_dtype);
  // Every GPU of ctxs (ctxs[i] on its own GPU) as the ranks of one process
  // (ncclCommInitAll): for tests.
  static std::vector<std::unique_ptr<NcclSync>> all(const std::vector<Context*>& ctxs, DType grad_dtype);
  ~NcclSync() override;
  NcclSync(const NcclSync&) = delete;
  NcclSync& operator=(const NcclSync&) = delete;

  int rank() const override { return rank_; }
  int world() const override { return world_; }
  void reduce(Context& ctx, int bucket, float* grads, std::int64_t floats) override;
  void finish(Context& ctx) override;
  void broadcast(Context& ctx, float* data, std::int64_t floats) override;
  // Waits for ctx's stream (every step enqueued, its collectives included),
  // polling NCCL's asynchronous errors. After `timeout`, or on an NCCL error,
  // aborts the communicator and throws Error(Device): a peer rank that died or
  // stopped leaves this one's collective waiting forever otherwise.
  void wait(Context& ctx, std::chrono::milliseconds timeout);

  struct Impl;

 private:
  NcclSync(std::unique_ptr<Impl> impl, int rank, int world);
  std::unique_ptr<Impl> impl_;
  int rank_ = 0, world_ = 1;
};

}  // namespace roofline::engine::dist

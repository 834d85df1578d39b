// Data-parallel training's host-side plan: see roofline/engine/data_parallel.hpp.
#include "roofline/engine/data_parallel.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "roofline/core/error.hpp"

namespace roofline::engine::dist {

std::vector<GradBucket> plan_buckets(const LayerGraph& g, const BucketPlanConfig& cfg) {
  if (cfg.cap_bytes <= 0 || cfg.first_cap_bytes <= 0)
    throw Error(ErrorKind::Input, "gradient buckets need positive caps", "give bucket caps of at least one byte");
  if (cfg.grad_dtype != DType::F32 && cfg.grad_dtype != DType::BF16 && cfg.grad_dtype != DType::F16)
    throw_unsupported(fmt::format("{} gradients", to_string(cfg.grad_dtype)), "all-reduce fp32, bf16 or fp16 gradients");
  const auto& params = g.params();
  const std::int64_t width = static_cast<std::int64_t>(dtype_size(cfg.grad_dtype));
  std::vector<GradBucket> out;
  GradBucket cur;
  for (int i = static_cast<int>(params.size()) - 1; i >= 0; --i) {
    const GraphParam& p = params[size_t(i)];
    if (!p.learnable) continue;  // BatchNorm's running statistics are buffers: no gradient
    const std::int64_t bytes = numel(p.shape) * width;
    const std::int64_t cap = out.empty() ? cfg.first_cap_bytes : cfg.cap_bytes;
    if (!cur.params.empty() && cur.bytes + bytes > cap) {
      out.push_back(std::move(cur));
      cur = GradBucket{};
    }
    cur.params.push_back(i);
    cur.bytes += bytes;
  }
  if (!cur.params.empty()) out.push_back(std::move(cur));
  return out;
}

// ---- ThreadGroup ------------------------------------------------------------------

class ThreadMember final : public GradSync {
 public:
  ThreadMember(ThreadGroup& g, int rank) : g_(g), rank_(rank) {}
  int rank() const override { return rank_; }
  int world() const override { return g_.world_; }

  void reduce(Context& ctx, int bucket, float* grads, std::int64_t floats) override {
    check_cpu(ctx);
    publish(grads, floats, "bucket " + std::to_string(bucket));
    // Each rank averages its share [lo, hi) of every rank's values, summed in
    // rank order, and writes the mean into every rank's buffer.
    const std::int64_t share = (floats + g_.world_ - 1) / g_.world_;
    const std::int64_t lo = std::min(floats, share * rank_), hi = std::min(floats, lo + share);
    const float inv = 1.0f / static_cast<float>(g_.world_);
    for (std::int64_t i = lo; i < hi; ++i) {
      float sum = 0;
      for (int r = 0; r < g_.world_; ++r) sum += g_.slots_[size_t(r)][i];
      const float mean = sum * inv;
      for (int r = 0; r < g_.world_; ++r) g_.slots_[size_t(r)][i] = mean;
    }
    g_.barrier_.arrive_and_wait();  // every share written before any rank reads on
  }
  void finish(Context& ctx) override { check_cpu(ctx); }
  void broadcast(Context& ctx, float* data, std::int64_t floats) override {
    check_cpu(ctx);
    publish(data, floats, "the broadcast");
    if (rank_ != 0) std::copy(g_.slots_[0], g_.slots_[0] + floats, data);
    g_.barrier_.arrive_and_wait();
  }

 private:
  static void check_cpu(const Context& ctx) {
    if (ctx.is_cuda())
      throw Error(ErrorKind::Usage, "a ThreadGroup averages host memory, not a GPU's",
                  "use NCCL (engine/nccl_sync.hpp) for ranks on GPUs");
  }
  // Every rank's pointer and count visible to all, and the counts equal (every
  // rank sees the same counts, so all of them throw together or none does).
  void publish(float* p, std::int64_t floats, const std::string& what) {
    g_.slots_[size_t(rank_)] = p;
    g_.counts_[size_t(rank_)] = floats;
    g_.barrier_.arrive_and_wait();
    for (int r = 1; r < g_.world_; ++r)
      if (g_.counts_[size_t(r)] != g_.counts_[0])
        throw Error(ErrorKind::Input,
                    fmt::format("ranks disagree on {}: rank 0 has {} values, rank {} has {}", what, g_.counts_[0], r,
                                g_.counts_[size_t(r)]),
                    "every rank must train the same model in the same precision");
  }
  ThreadGroup& g_;
  int rank_;
};

ThreadGroup::ThreadGroup(int world)
    : world_(world > 0 ? world : throw Error(ErrorKind::Usage, "a thread group needs at least one rank",
                                             "give a world of 1 or more")),
      barrier_(world),
      slots_(size_t(world), nullptr),
      counts_(size_t(world), 0) {}
ThreadGroup::~ThreadGroup() = default;

std::unique_ptr<GradSync> ThreadGroup::member(int rank) {
  if (rank < 0 || rank >= world_)
    throw Error(ErrorKind::Usage, fmt::format("rank {} is outside a group of {}", rank, world_),
                fmt::format("give a rank from 0 to {}", world_ - 1));
  return std::make_unique<ThreadMember>(*this, rank);
}

}  // namespace roofline::engine::dist

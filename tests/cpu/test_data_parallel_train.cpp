// Data-parallel training on CPU contexts (issue 25): ranks are threads of a
// ThreadGroup, each a GraphNetwork on its shard of the global batch, with its
// gradients averaged bucket by bucket during backward. With no BatchNorm and
// no dropout, N ranks on shards of B must follow one network on the global
// batch N·B: the same losses and parameters to fp32 rounding.
#include <gtest/gtest.h>

#include <thread>

#include "roofline/core/error.hpp"
#include "roofline/engine/graph_network.hpp"
#include "roofline/engine/model.hpp"
#include "tests/support/numeric.hpp"
#include "tests/support/sequential_ref.hpp"

using namespace roofline;
using namespace roofline::engine;

namespace {

std::vector<double> wide(const std::vector<float>& v) { return {v.begin(), v.end()}; }

struct RankRun {
  std::vector<float> losses;
  std::vector<std::vector<float>> state;
  size_t buckets = 0;
};

std::vector<float> rows(const std::vector<float>& x, std::int64_t per_sample, std::int64_t first, std::int64_t n) {
  return {x.begin() + first * per_sample, x.begin() + (first + n) * per_sample};
}

// `world` ranks on shards of `shard` samples (world 0: one network on the whole batch).
std::vector<RankRun> train(const std::string& model, Backend b, int world, std::int64_t shard, int steps,
                       const dist::BucketPlanConfig& cfg) {
  const LayerGraph g = make_graph_model(model);
  const std::int64_t global = shard * std::max(world, 1);
  const auto x = test::random_input(g.input_shape(), global, 5);
  const auto y = test::random_labels(global, g.classes(), 6);
  const std::int64_t per = numel(g.input_shape());
  const auto one = [&](int rank, dist::GradSync* sync, std::int64_t batch, std::int64_t first) {
    RankRun r;
    Context ctx(b);
    GraphNetwork net(g, ctx, batch);
    // Only rank 0 starts from the shared state: the sync's broadcast must give it to the others.
    net.load_state(g.init_params(rank == 0 ? 21 : 99 + rank));
    if (sync) net.set_grad_sync(sync, cfg);
    r.buckets = net.grad_buckets().size();
    net.set_batch(rows(x, per, first, batch), {y.begin() + first, y.begin() + first + batch}, batch);
    for (int s = 0; s < steps; ++s) {
      net.train_step(batch);
      r.losses.push_back(net.loss());
    }
    r.state = net.state();
    return r;
  };
  if (world == 0) return {one(0, nullptr, global, 0)};
  dist::ThreadGroup group(world);
  std::vector<std::unique_ptr<dist::GradSync>> members;
  for (int r = 0; r < world; ++r) members.push_back(group.member(r));
  std::vector<RankRun> out(static_cast<size_t>(world));
  std::vector<std::thread> threads;
  for (int r = 0; r < world; ++r)
    threads.emplace_back([&, r] { out[size_t(r)] = one(r, members[size_t(r)].get(), shard, r * shard); });
  for (auto& t : threads) t.join();
  return out;
}

}  // namespace

TEST(DataParallelCpu, RanksOnShardsFollowOneNetworkOnTheGlobalBatch) {
  dist::BucketPlanConfig small;  // several buckets, so that reduces interleave with backward
  small.first_cap_bytes = 2048;
  small.cap_bytes = 64 << 10;
  for (const std::string model : {"simple-cnn", "simple-mlp"})
    for (Backend b : {Backend::CpuRef, Backend::Cpu})
      for (int world : {2, 4}) {
        SCOPED_TRACE(model + " on " + to_string(b) + ", " + std::to_string(world) + " ranks");
        const int steps = 4;
        const std::int64_t shard = 4;
        const RankRun single = train(model, b, 0, shard * world, steps, small)[0];
        const std::vector<RankRun> ranks = train(model, b, world, shard, steps, small);
        EXPECT_GE(ranks[0].buckets, 2u);
        for (int s = 0; s < steps; ++s) {
          double mean = 0;  // the global batch's loss: the mean of the equal shards' means
          for (const RankRun& r : ranks) mean += r.losses[size_t(s)];
          mean /= world;
          EXPECT_NEAR(mean, single.losses[size_t(s)], 2e-5 * std::max(1.0, std::abs(mean))) << "step " << s;
        }
        for (size_t t = 0; t < single.state.size(); ++t) {
          for (int r = 1; r < world; ++r)  // the averaged gradients are bit-equal on every rank
            EXPECT_EQ(ranks[size_t(r)].state[t], ranks[0].state[t]) << "tensor " << t << " rank " << r;
          EXPECT_LT(test::max_rel_error(ranks[0].state[t], wide(single.state[t])), 1e-4) << "tensor " << t;
        }
      }
}

TEST(DataParallelCpu, WithoutTheSyncTheRanksDriftApart) {
  // The check above can fail: ranks that train alone on their shards end with different weights.
  const LayerGraph g = make_graph_model("simple-cnn");
  std::vector<std::vector<std::vector<float>>> states;
  for (int r = 0; r < 2; ++r) {
    Context ctx(Backend::CpuRef);
    GraphNetwork net(g, ctx, 4);
    net.load_state(g.init_params(21));
    net.set_batch(test::random_input(g.input_shape(), 4, 5 + r), test::random_labels(4, g.classes(), 6 + r), 4);
    net.train_step(4);
    states.push_back(net.state());
  }
  EXPECT_GT(test::max_rel_error(states[1][0], wide(states[0][0])), 1e-3);
}

TEST(DataParallelCpu, MisuseIsRefusedWithAReason) {
  EXPECT_THROW(dist::ThreadGroup(0), Error);
  dist::ThreadGroup group(2);
  EXPECT_THROW((void)group.member(2), Error);
  // Ranks that disagree on a bucket's size (different models) all stop with the sizes named.
  auto a = group.member(0), c = group.member(1);
  std::vector<float> x(10, 1.0f), z(12, 1.0f);
  std::string msg[2];
  std::thread t0([&] {
    Context ctx(Backend::CpuRef);
    try {
      a->reduce(ctx, 0, x.data(), 10);
    } catch (const Error& e) {
      msg[0] = e.what();
    }
  });
  std::thread t1([&] {
    Context ctx(Backend::CpuRef);
    try {
      c->reduce(ctx, 0, z.data(), 12);
    } catch (const Error& e) {
      msg[1] = e.what();
    }
  });
  t0.join();
  t1.join();
  for (const auto& m : msg) EXPECT_NE(m.find("rank 0 has 10 values, rank 1 has 12"), std::string::npos) << m;
  Context ctx(Backend::CpuRef);
  const LayerGraph g = make_graph_model("simple-mlp");
  GraphOptions infer;
  infer.training = false;
  GraphNetwork net(g, ctx, 2, infer);
  EXPECT_THROW(net.set_grad_sync(a.get()), Error);
}

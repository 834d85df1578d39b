// Data-parallel training's host-side plan (issue 25): the rank environment of
// each launcher and its faults, and the gradient buckets of the networks.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "roofline/core/error.hpp"
#include "roofline/engine/data_parallel.hpp"

using namespace roofline;
using namespace roofline::engine;

namespace {

dist::EnvGetter env_of(std::map<std::string, std::string> vars) {
  return [vars](const std::string& n) -> std::optional<std::string> {
    auto it = vars.find(n);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

std::string error_of(const std::map<std::string, std::string>& vars) {
  try {
    dist::read_rank_env(env_of(vars));
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Input);
    return std::string(e.what()) + " | " + e.hint();
  }
  return "";
}

}  // namespace

TEST(RankEnv, NoLauncherIsOneProcess) { EXPECT_FALSE(dist::read_rank_env(env_of({})).has_value()); }

TEST(RankEnv, TorchrunOpenMpiAndSlurmAreRead) {
  auto t = dist::read_rank_env(env_of({{"RANK", "3"}, {"WORLD_SIZE", "8"}, {"LOCAL_RANK", "1"},
                                       {"LOCAL_WORLD_SIZE", "2"}, {"MASTER_ADDR", "node0"}, {"MASTER_PORT", "29500"}}));
  ASSERT_TRUE(t);
  EXPECT_EQ(t->launcher, "torchrun");
  EXPECT_EQ(t->rank, 3);
  EXPECT_EQ(t->world, 8);
  EXPECT_EQ(t->local_rank, 1);
  EXPECT_EQ(t->local_world, 2);
  EXPECT_EQ(t->master_addr, "node0");
  EXPECT_EQ(t->master_port, 29500);
  auto m = dist::read_rank_env(env_of({{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "2"},
                                       {"OMPI_COMM_WORLD_LOCAL_RANK", "1"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}}));
  ASSERT_TRUE(m);
  EXPECT_EQ(m->launcher, "mpirun (OpenMPI)");
  EXPECT_EQ(m->rank, 1);
  EXPECT_EQ(m->local_world, 2);
  EXPECT_TRUE(m->master_addr.empty());  // one machine: the loopback rendezvous
  auto s = dist::read_rank_env(env_of({{"SLURM_PROCID", "5"}, {"SLURM_NTASKS", "8"}, {"SLURM_LOCALID", "1"},
                                       {"SLURM_NTASKS_PER_NODE", "4(x2)"}, {"MASTER_ADDR", "gpu01"}}));
  ASSERT_TRUE(s);
  EXPECT_EQ(s->launcher, "slurm");
  EXPECT_EQ(s->local_world, 4);
  EXPECT_EQ(s->local_rank, 1);
}

TEST(RankEnv, PartialOrInconsistentSetsAreRefusedByName) {
  EXPECT_NE(error_of({{"RANK", "0"}}).find("WORLD_SIZE is not"), std::string::npos);
  EXPECT_NE(error_of({{"RANK", "4"}, {"WORLD_SIZE", "4"}}).find("RANK=\"4\" is not a whole number from 0 to 3"),
            std::string::npos);
  EXPECT_NE(error_of({{"RANK", "x"}, {"WORLD_SIZE", "2"}}).find("RANK=\"x\""), std::string::npos);
  EXPECT_NE(error_of({{"RANK", "0"}, {"WORLD_SIZE", "0"}}).find("WORLD_SIZE"), std::string::npos);
  EXPECT_NE(error_of({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "70000"}}).find("MASTER_PORT"),
            std::string::npos);
  EXPECT_NE(error_of({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"LOCAL_RANK", "2"}}).find("LOCAL_RANK"),
            std::string::npos);
  EXPECT_NE(error_of({{"RANK", "0"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "0"}, {"LOCAL_WORLD_SIZE", "2"}})
                .find("MASTER_ADDR"),
            std::string::npos);
  EXPECT_NE(error_of({{"RANK", "0"}, {"WORLD_SIZE", "4"}, {"LOCAL_WORLD_SIZE", "2"}}).find("LOCAL_RANK is not set"),
            std::string::npos);
}

TEST(GradBuckets, EveryGradientOnceInBackwardOrderWithinTheCaps) {
  for (const auto& g : {make_alexnet(), make_resnet18()}) {
    const dist::BucketPlanConfig cfg;
    const auto buckets = dist::plan_buckets(g, cfg);
    ASSERT_FALSE(buckets.empty());
    std::set<int> seen;
    int last = static_cast<int>(g.params().size());
    std::int64_t total = 0;
    for (size_t b = 0; b < buckets.size(); ++b) {
      std::int64_t bytes = 0;
      for (int i : buckets[b].params) {
        EXPECT_LT(i, last) << "buckets follow backward: reverse state_dict order";
        last = i;
        EXPECT_TRUE(g.params()[size_t(i)].learnable);
        EXPECT_TRUE(seen.insert(i).second);
        bytes += numel(g.params()[size_t(i)].shape) * 4;
      }
      EXPECT_EQ(bytes, buckets[b].bytes);
      const std::int64_t cap = b == 0 ? cfg.first_cap_bytes : cfg.cap_bytes;
      if (buckets[b].params.size() > 1) EXPECT_LE(bytes, cap) << "bucket " << b;
      total += bytes;
    }
    EXPECT_EQ(total, g.learnable_count() * 4);
  }
}

TEST(GradBuckets, AlexNetsClassifierComesFirstAndBf16HalvesTheBytes) {
  const auto g = make_alexnet();
  const auto f32 = dist::plan_buckets(g);
  // Backward reaches the classifier first: its last layer's bias, then weight (4096 × 1000 fp32: 16.4 MB).
  ASSERT_GE(f32.size(), 3u);
  EXPECT_EQ(g.params()[size_t(f32[0].params[0])].name, "classifier.6.bias");
  // fc6's 151 MB weight, above the cap, travels alone.
  bool alone = false;
  for (const auto& b : f32)
    if (b.params.size() == 1 && g.params()[size_t(b.params[0])].name == "classifier.1.weight") alone = true;
  EXPECT_TRUE(alone);
  dist::BucketPlanConfig half;
  half.grad_dtype = DType::BF16;
  std::int64_t a = 0, h = 0;
  for (const auto& b : f32) a += b.bytes;
  for (const auto& b : dist::plan_buckets(g, half)) h += b.bytes;
  EXPECT_EQ(a, 2 * h);
  EXPECT_EQ(a, 61100840ll * 4);
  dist::BucketPlanConfig bad;
  bad.cap_bytes = 0;
  EXPECT_THROW(dist::plan_buckets(g, bad), Error);
}

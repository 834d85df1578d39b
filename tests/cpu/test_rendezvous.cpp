// The ranks' TCP rendezvous and the one-machine launcher (issue 25): ranks
// that meet exchange in rank order; a rank that never comes, one that dies
// mid-exchange, an impostor and a missing rank 0 are each an error that
// names the rank, within the timeout; the launcher gives each rank torchrun's
// variables and stops the others when one fails.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "roofline/core/error.hpp"
#include "roofline/engine/rank_launch.hpp"
#include "roofline/engine/rendezvous.hpp"

using namespace roofline;
using namespace roofline::engine;
using namespace std::chrono_literals;

namespace {

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return std::string(e.what()) + " | " + e.hint();
  }
  return "";
}

}  // namespace

TEST(Rendezvous, RanksGatherInRankOrder) {
  const int port = dist::free_port();
  const int world = 4;
  std::vector<std::future<std::vector<std::string>>> f;
  for (int r = 0; r < world; ++r)
    f.push_back(std::async(std::launch::async, [=] {
      dist::Rendezvous rv(r, world, "", port, 10s);
      auto first = rv.all_gather("rank " + std::to_string(r) + std::string(size_t(r) * 1000, 'x'));
      rv.barrier();
      auto second = rv.all_gather(std::to_string(r * r));
      first.insert(first.end(), second.begin(), second.end());
      return first;
    }));
  for (int r = 0; r < world; ++r) {
    const auto got = f[size_t(r)].get();
    ASSERT_EQ(got.size(), 8u);
    for (int k = 0; k < world; ++k) {
      EXPECT_EQ(got[size_t(k)], "rank " + std::to_string(k) + std::string(size_t(k) * 1000, 'x'));
      EXPECT_EQ(got[size_t(world + k)], std::to_string(k * k));
    }
  }
}

TEST(Rendezvous, AWorldOfOneNeedsNoSocket) {
  dist::Rendezvous rv(0, 1, "", 1, 1s);  // port 1 is never bound
  EXPECT_EQ(rv.all_gather("alone"), std::vector<std::string>{"alone"});
  dist::Rendezvous none(0, 1, "", 0, 1s);  // bench --gpus 1 runs in-process, with no port at all
  EXPECT_EQ(none.all_gather("x").size(), 1u);
}

TEST(Rendezvous, ARankThatNeverComesIsNamed) {
  const int port = dist::free_port();
  auto one = std::async(std::launch::async, [=] {
    try {
      dist::Rendezvous rv(1, 3, "", port, 2s);
      (void)rv.all_gather("x");
    } catch (const Error&) {
    }
  });
  const auto t0 = std::chrono::steady_clock::now();
  const std::string m = message_of([&] { dist::Rendezvous rv(0, 3, "", port, 600ms); });
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
  EXPECT_NE(m.find("rank 2 of 3 did not reach rank 0"), std::string::npos) << m;
  one.get();
}

TEST(Rendezvous, RankZeroMissingIsNamedWithItsAddress) {
  const int port = dist::free_port();
  const std::string m = message_of([&] { dist::Rendezvous rv(1, 2, "127.0.0.1", port, 300ms); });
  EXPECT_NE(m.find(fmt::format("rank 1 could not reach rank 0 at 127.0.0.1:{}", port)), std::string::npos) << m;
  EXPECT_NE(m.find("MASTER_ADDR"), std::string::npos) << m;
}

TEST(Rendezvous, ARankThatDiesMidExchangeIsNamed) {
  const int port = dist::free_port();
  auto dead = std::async(std::launch::async, [=] {
    dist::Rendezvous rv(1, 2, "", port, 5s);
    (void)rv.all_gather("first");
    // ... and it leaves: its socket closes before the second exchange.
  });
  const std::string m = message_of([&] {
    dist::Rendezvous rv(0, 2, "", port, 5s);
    EXPECT_EQ(rv.all_gather("first").size(), 2u);
    dead.get();
    (void)rv.all_gather("second");
  });
  EXPECT_NE(m.find("rank 1 closed its connection"), std::string::npos) << m;
}

TEST(Rendezvous, AnImpostorRankIsRefused) {
  // A process of another job (rank 1 of 3) reaches rank 0 of a job of 2.
  const int port = dist::free_port();
  auto other = std::async(std::launch::async, [=] {
    return message_of([&] {
      dist::Rendezvous rv(1, 3, "", port, 3s);
      (void)rv.all_gather("x");
    });
  });
  const std::string m = message_of([&] { dist::Rendezvous rv(0, 2, "", port, 3s); });
  EXPECT_NE(m.find("a process joined as rank 1 of 3, but this job is 2 ranks"), std::string::npos) << m;
  EXPECT_NE(m.find("MASTER_PORT"), std::string::npos) << m;
  EXPECT_NE(other.get(), "");  // and the impostor is not left waiting
  // Bad arguments are refused before any socket.
  EXPECT_NE(message_of([] { dist::Rendezvous rv(2, 2, "", 5000, 1s); }).find("rank 2 of a world of 2"), std::string::npos);
  EXPECT_NE(message_of([] { dist::Rendezvous rv(0, 2, "", 70000, 1s); }).find("not a TCP port"), std::string::npos);
}

TEST(Rendezvous, ThePortStepsAsideFromTorchrunsStore) {
  dist::RankEnv e;
  e.world = 2;
  e.launcher = "torchrun", e.master_port = 29500;
  EXPECT_EQ(dist::rendezvous_port(e), 29501);  // torchrun's agent holds MASTER_PORT
  e.launcher = "mpirun (OpenMPI)";
  EXPECT_EQ(dist::rendezvous_port(e), 29500);
  e.master_port = 0;
  EXPECT_EQ(dist::rendezvous_port(e), 29500);  // mpirun and srun give none
}

TEST(RankLaunch, EveryRankGetsTorchrunsVariables) {
  dist::RankLaunch l;
  l.world = 3;
  l.argv = {"/bin/sh", "-c",
            "test \"$WORLD_SIZE\" = 3 && test \"$LOCAL_WORLD_SIZE\" = 3 && test \"$RANK\" = \"$LOCAL_RANK\" && "
            "test \"$RANK\" -ge 0 && test \"$RANK\" -lt 3 && test \"$MASTER_ADDR\" = 127.0.0.1 && "
            "test \"$MASTER_PORT\" -gt 0 && test \"$NCCL_NVLS_ENABLE\" = 0 && test -z \"$OMPI_COMM_WORLD_RANK\""};
  ::setenv("OMPI_COMM_WORLD_RANK", "5", 1);  // another launcher's variable must not reach the ranks
  EXPECT_NO_THROW(dist::launch_ranks(l));
  ::unsetenv("OMPI_COMM_WORLD_RANK");
}

TEST(RankLaunch, ARankThatFailsStopsTheOthersAndIsNamed) {
  dist::RankLaunch l;
  l.world = 3;
  l.grace = 300ms;
  l.argv = {"/bin/sh", "-c", "if [ \"$RANK\" = 1 ]; then exit 4; fi; exec sleep 30"};
  auto t0 = std::chrono::steady_clock::now();
  try {
    dist::launch_ranks(l);
    ADD_FAILURE() << "a failed rank must throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Device);  // exit status 4 is a device error
    EXPECT_NE(std::string(e.what()).find("rank 1 of 3 exited with status 4; the other ranks were stopped"),
              std::string::npos)
        << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 10s);
  // Killed by a signal; a rank that ignores SIGTERM is killed after the grace period.
  l.argv = {"/bin/sh", "-c", "trap '' TERM; if [ \"$RANK\" = 2 ]; then kill -9 $$; fi; exec sleep 30"};
  t0 = std::chrono::steady_clock::now();
  std::string m = message_of([&] { dist::launch_ranks(l); });
  EXPECT_NE(m.find("rank 2 of 3 was killed by signal 9"), std::string::npos) << m;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 10s);
  // A usage error in a rank keeps its kind (exit status 2).
  l.argv = {"/bin/sh", "-c", "exit 2"};
  try {
    dist::launch_ranks(l);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
  }
}

TEST(RankLaunch, AJobPastItsTimeoutIsStopped) {
  dist::RankLaunch l;
  l.world = 2;
  l.grace = 200ms;
  l.timeout = 400ms;
  l.argv = {"/bin/sh", "-c", "exec sleep 30"};
  const auto t0 = std::chrono::steady_clock::now();
  const std::string m = message_of([&] { dist::launch_ranks(l); });
  EXPECT_NE(m.find("did not finish within 0.4 s"), std::string::npos) << m;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 10s);
  l.argv = {"/nonexistent/program"};
  l.timeout = {};
  EXPECT_NE(message_of([&] { dist::launch_ranks(l); }).find("exited with status 127"), std::string::npos);
  l.world = 0;
  EXPECT_THROW(dist::launch_ranks(l), Error);
}

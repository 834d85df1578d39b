// The range profiler's launch plan (src/profiler/counters/launch_plan.hpp): which
// launches get the full metric set, which the one-pass DRAM set, which none, and
// how a DRAM pass's counts replace the replayed ones.
#include <gtest/gtest.h>

#include "src/profiler/counters/launch_plan.hpp"

using roofline::prof::RangeRecord;
using roofline::prof::detail::LaunchPlanner;
using roofline::prof::detail::merge_dram_pass;
using Kind = LaunchPlanner::Kind;

TEST(LaunchPlan, FullThenDramPerInstanceUpToTheLimit) {
  LaunchPlanner p(2);
  std::vector<Kind> kinds;
  std::size_t next_record = 0;
  for (int i = 0; i < 6; ++i) {
    auto plan = p.next("k");
    EXPECT_EQ(plan.instance, static_cast<std::uint64_t>(i));
    kinds.push_back(plan.kind);
    if (plan.kind == Kind::Full) p.await_dram("k", next_record++);
    if (plan.kind == Kind::Dram) EXPECT_EQ(plan.record, next_record - 1) << "the record of the launch before";
  }
  EXPECT_EQ(kinds, (std::vector<Kind>{Kind::Full, Kind::Dram, Kind::Full, Kind::Dram, Kind::Skip, Kind::Skip}));
}

TEST(LaunchPlan, WithoutADramPassEveryLaunchUpToTheLimitIsFull) {
  LaunchPlanner p(2);  // await_dram never called: the context has no DRAM set
  EXPECT_EQ(p.next("k").kind, Kind::Full);
  EXPECT_EQ(p.next("k").kind, Kind::Full);
  EXPECT_EQ(p.next("k").kind, Kind::Skip);
  LaunchPlanner all(0);  // no limit
  for (int i = 0; i < 5; ++i) EXPECT_EQ(all.next("k").kind, Kind::Full);
}

TEST(LaunchPlan, KernelNamesArePairedSeparately) {
  LaunchPlanner p(1);
  EXPECT_EQ(p.next("a").kind, Kind::Full);
  p.await_dram("a", 0);
  EXPECT_EQ(p.next("b").kind, Kind::Full) << "another kernel in between keeps its own count";
  p.await_dram("b", 1);
  auto b = p.next("b");
  EXPECT_EQ(b.kind, Kind::Dram);
  EXPECT_EQ(b.record, 1u);
  auto a = p.next("a");
  EXPECT_EQ(a.kind, Kind::Dram);
  EXPECT_EQ(a.record, 0u);
  EXPECT_EQ(a.instance, 1u);
  EXPECT_EQ(p.next("a").kind, Kind::Skip);
}

TEST(LaunchPlan, MergeReplacesOnlyTheDramCountsAndKeepsTheReplayedOnes) {
  RangeRecord r;
  r.instance = r.dram_instance = 4;
  r.dram_replayed = true;
  r.values = {{"gpu__time_duration.sum", 1000.0}, {"dram__bytes_read.sum", 5e8}, {"dram__bytes_write.sum", 2.1e7}};
  merge_dram_pass(r, {{"dram__bytes_read.sum", 4.9e8}, {"dram__bytes_write.sum", 2e4}}, 5);
  EXPECT_FALSE(r.dram_replayed);
  EXPECT_EQ(r.instance, 4u);
  EXPECT_EQ(r.dram_instance, 5u);
  EXPECT_EQ(r.values.at("gpu__time_duration.sum"), 1000.0);
  EXPECT_EQ(r.values.at("dram__bytes_read.sum"), 4.9e8);
  EXPECT_EQ(r.values.at("dram__bytes_write.sum"), 2e4);
  EXPECT_EQ(r.replayed_dram.at("dram__bytes_write.sum"), 2.1e7);
  EXPECT_EQ(r.replayed_dram.at("dram__bytes_read.sum"), 5e8);
  EXPECT_EQ(r.replayed_dram.count("gpu__time_duration.sum"), 0u);
}

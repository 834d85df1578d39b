// The capture range of `roofline profile` (--delay, --duration,
// --capture-range): the gate's open stretches from program events and the
// time window, and what the aggregator keeps of records that arrive late and
// out of order. A fake clock stands for CUPTI's.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <sstream>
#include <thread>
#include <vector>

#include "roofline/core/report.hpp"
#include "roofline/profiler/aggregator.hpp"
#include "roofline/profiler/capture_gate.hpp"
#include "roofline/profiler/nvtx_tracker.hpp"
#include "roofline/profiler/summary.hpp"

using namespace roofline;
using namespace roofline::prof;

namespace {

std::uint64_t g_now = 0;
std::uint64_t fake_clock() { return g_now; }

CaptureSpec profiler_api() { return *CaptureSpec::parse_range("cuda-profiler-api"); }

// The gate opened by cudaProfilerStart at each `opens[i]` and closed by
// cudaProfilerStop at `closes[i]`.
void run_ranges(CaptureGate& g, const std::vector<std::pair<std::uint64_t, std::uint64_t>>& ranges) {
  for (auto [a, b] : ranges) {
    g_now = a;
    g.profiler_start();
    g_now = b;
    g.profiler_stop();
  }
}

Activity kernel(std::uint64_t start, std::uint64_t end, const char* name = "k") {
  Activity a;
  a.type = Activity::Type::Kernel;
  a.start = start;
  a.end = end;
  a.name = name;
  return a;
}

Activity api(std::uint64_t start, std::uint64_t end, const char* name = "cudaDeviceSynchronize") {
  Activity a;
  a.type = Activity::Type::RuntimeApi;
  a.start = start;
  a.end = end;
  a.name = name;
  return a;
}

std::uint64_t kernel_count(const ProfileData& p) {
  std::uint64_t n = 0;
  for (const auto& [key, k] : p.kernels) n += k.duration.count();
  return n;
}

std::string text_of(const ProfileData& p) {
  Report r("profile");
  add_profile_tables(r, p, SummaryOptions{});
  std::ostringstream out;
  render(r, Format::Text, out);
  return out.str();
}

}  // namespace

TEST(CaptureGate, RangeTextsAreParsedOrRefusedWithTheReason) {
  EXPECT_EQ(profiler_api().range, CaptureSpec::Range::ProfilerApi);
  auto n = CaptureSpec::parse_range("nvtx:train/step");
  ASSERT_TRUE(n);
  EXPECT_EQ(n->range, CaptureSpec::Range::Nvtx);
  EXPECT_EQ(n->nvtx_name, "train/step");
  EXPECT_EQ(n->range_text(), "nvtx:train/step");
  EXPECT_FALSE(CaptureSpec::parse_range("nvtx:"));
  EXPECT_NE(CaptureSpec::problem("nvtx:").find("needs the range's name"), std::string::npos);
  EXPECT_FALSE(CaptureSpec::parse_range("cudaProfilerApi"));
  EXPECT_NE(CaptureSpec::problem("cudaProfilerApi").find("give cuda-profiler-api or nvtx:NAME"), std::string::npos);
  EXPECT_TRUE(CaptureSpec::problem("cuda-profiler-api").empty());
}

TEST(CaptureGate, ProfilerStartStopOpensSeveralRanges) {
  CaptureGate g;
  g.configure(profiler_api(), 0, &fake_clock);
  EXPECT_TRUE(g.active());
  run_ranges(g, {{100, 200}, {500, 700}});
  // A second start while open and a stop while closed change nothing.
  g_now = 900;
  g.profiler_start();
  g_now = 950;
  g.profiler_start();
  g_now = 1000;
  g.profiler_stop();
  g_now = 1100;
  g.profiler_stop();
  CaptureWindows w = g.windows();
  for (std::uint64_t t : {100, 150, 199, 500, 699, 900, 999}) EXPECT_TRUE(w.contains(t)) << t;
  for (std::uint64_t t : {0, 99, 200, 300, 499, 700, 899, 1000, 1050, 5000}) EXPECT_FALSE(w.contains(t)) << t;
  EXPECT_EQ(g.opens(), 3u);
  const auto r = w.clipped(0, 10'000);
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[1].start_ns, 500u);
  EXPECT_EQ(r[1].end_ns, 700u);
  EXPECT_EQ(w.covered_ns(150, 600), 50u + 100u);
  EXPECT_EQ(w.end_of(150), 200u);
  EXPECT_EQ(g.captures(150), true);
  EXPECT_EQ(g.captures(300), false);
  // The other kinds of event do not touch a cudaProfilerStart gate.
  g_now = 2000;
  g.nvtx_push("step");
  EXPECT_FALSE(g.windows().contains(2500));
}

TEST(CaptureGate, AnOpenRangeStaysOpenUntilItCloses) {
  CaptureGate g;
  g.configure(profiler_api(), 0, &fake_clock);
  g_now = 1000;
  EXPECT_EQ(g.profiler_start(), 1000u);  // the time it stamped
  CaptureWindows w;
  g.sync(w);
  EXPECT_TRUE(w.contains(1000));
  EXPECT_TRUE(w.contains(1'000'000));
  EXPECT_EQ(w.end_of(5000), CaptureWindows::kOpen);
  EXPECT_EQ(w.clipped(0, 3000).back().end_ns, 3000u);  // ends "now" in a profile
  g_now = 4000;
  g.profiler_stop();
  g.sync(w);  // the same reader, brought up to date
  EXPECT_TRUE(w.contains(3999));
  EXPECT_FALSE(w.contains(4000));
  EXPECT_EQ(w.end_of(2000), 4000u);
}

TEST(CaptureGate, DelayAndDurationAloneAndIntersectedWithRanges) {
  const std::uint64_t origin = 1'000'000;
  {
    CaptureSpec s;
    s.delay_ns = 700;
    s.duration_ns = 300;
    CaptureGate g;
    g.configure(s, origin, &fake_clock);
    CaptureWindows w = g.windows();
    EXPECT_FALSE(w.contains(origin + 699));
    EXPECT_TRUE(w.contains(origin + 700));
    EXPECT_TRUE(w.contains(origin + 999));
    EXPECT_FALSE(w.contains(origin + 1000));
    EXPECT_EQ(w.clipped(0, origin + 5000).size(), 1u);
    EXPECT_EQ(g.opens(), 0u);  // no program event was asked for
  }
  {
    CaptureSpec s;
    s.delay_ns = 500;  // to the end
    CaptureGate g;
    g.configure(s, origin, &fake_clock);
    EXPECT_FALSE(g.windows().contains(origin + 499));
    EXPECT_TRUE(g.windows().contains(origin + 100'000'000));
  }
  {
    // cudaProfilerStart ranges [100, 300) and [600, 900) after the program's
    // start, window [200, 700): the capture is [200, 300) and [600, 700).
    CaptureSpec s = profiler_api();
    s.delay_ns = 200;
    s.duration_ns = 500;
    CaptureGate g;
    g.configure(s, origin, &fake_clock);
    run_ranges(g, {{origin + 100, origin + 300}, {origin + 600, origin + 900}});
    const auto r = g.windows().clipped(0, origin + 10'000);
    ASSERT_EQ(r.size(), 2u);
    EXPECT_EQ(r[0].start_ns, origin + 200);
    EXPECT_EQ(r[0].end_ns, origin + 300);
    EXPECT_EQ(r[1].start_ns, origin + 600);
    EXPECT_EQ(r[1].end_ns, origin + 700);
    EXPECT_FALSE(g.captures(origin + 150));
    EXPECT_TRUE(g.captures(origin + 650));
    EXPECT_FALSE(g.captures(origin + 800));
  }
}

TEST(CaptureGate, NvtxRangesByNameNestedAndOnSeveralThreads) {
  CaptureGate g;
  g.configure(*CaptureSpec::parse_range("nvtx:step"), 0, &fake_clock);
  g_now = 10;
  g.nvtx_push("epoch");  // another name: nothing
  g_now = 20;
  g.nvtx_push("step");
  g_now = 30;
  g.nvtx_push("step");  // nested: still one stretch
  g_now = 40;
  g.nvtx_pop("step");
  g_now = 45;
  g.nvtx_start(7, "step");  // a start/end range, as another thread would open it
  g_now = 50;
  g.nvtx_pop("step");  // one still open (id 7)
  g_now = 60;
  g.nvtx_end(99);  // not a range it saw
  g_now = 70;
  g.nvtx_end(7);
  g_now = 80;
  g.nvtx_pop("epoch");
  g_now = 90;
  g.nvtx_pop("step");  // pushed before the gate started: no effect
  CaptureWindows w = g.windows();
  EXPECT_FALSE(w.contains(19));
  EXPECT_TRUE(w.contains(20));
  EXPECT_TRUE(w.contains(55));
  EXPECT_FALSE(w.contains(70));
  EXPECT_EQ(w.clipped(0, 100).size(), 1u);
  EXPECT_EQ(g.opens(), 1u);

  // Pushes and pops from threads at once: the gate closes when the last closes.
  CaptureGate h;
  h.configure(*CaptureSpec::parse_range("nvtx:step"), 0, &fake_clock);
  g_now = 1000;
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&] {
      for (int j = 0; j < 1000; ++j) {
        h.nvtx_push("step");
        h.nvtx_pop("step");
      }
    });
  h.nvtx_push("step");  // this thread keeps one open
  for (auto& t : threads) t.join();
  EXPECT_TRUE(h.captures(1000));
  g_now = 2000;
  h.nvtx_pop("step");
  EXPECT_FALSE(h.captures(2000));
}

TEST(CaptureGate, UnconfiguredOrInactiveGateCapturesEverything) {
  CaptureGate g;
  EXPECT_FALSE(g.active());
  EXPECT_TRUE(g.captures(123));
  EXPECT_TRUE(g.windows().contains(0));
  CaptureGate h;
  h.configure(CaptureSpec{}, 0, &fake_clock);
  EXPECT_FALSE(h.active());
  EXPECT_TRUE(h.windows().contains(5));
}

// A: 3 kernels before cudaProfilerStart, N = 5 inside the first range, B = 4
// after it, then a second range with 2 kernels; the records come in batches
// out of time order, some after the gate has closed and opened again.
TEST(CaptureAggregator, KeepsExactlyTheRecordsThatStartInsideAndClipsTheTimeline) {
  CaptureGate gate;
  gate.configure(profiler_api(), 0, &fake_clock);
  Aggregator agg;
  agg.set_gate(&gate);
  std::vector<Activity> before, inside, after, second;
  for (int i = 0; i < 3; ++i) before.push_back(kernel(100 + i * 100, 150 + i * 100, "a"));    // 100..350
  for (int i = 0; i < 5; ++i) inside.push_back(kernel(1000 + i * 100, 1050 + i * 100, "n"));  // 1000..1450
  inside.push_back(kernel(1900, 2100, "n"));  // starts inside, runs past the stop at 2000: counts, busy to 2000
  for (int i = 0; i < 4; ++i) after.push_back(kernel(2200 + i * 100, 2250 + i * 100, "b"));  // 2200..2550
  second.push_back(kernel(5000, 5100, "c"));
  second.push_back(kernel(5300, 5400, "c"));
  inside.push_back(api(1010, 1020));
  after.push_back(api(2300, 2310));

  run_ranges(gate, {{1000, 2000}});
  // The gate is closed again, and the late records of the range come last.
  std::vector<Activity> batch1 = after;
  batch1.push_back(inside[3]);
  agg.add(batch1);
  EXPECT_EQ(batch1.size(), 1u);  // only the captured record is left in the batch (the trace gets it)
  run_ranges(gate, {{4900, 6000}});
  std::vector<Activity> batch2 = second;
  batch2.insert(batch2.end(), before.begin(), before.end());
  std::vector<Activity> rest = inside;
  rest.erase(rest.begin() + 3);
  std::shuffle(rest.begin(), rest.end(), std::mt19937(7));
  batch2.insert(batch2.end(), rest.begin(), rest.end());
  agg.add(batch2);

  ProfileData p = agg.snapshot();
  EXPECT_EQ(kernel_count(p), 5u + 1u + 2u);
  for (const auto& [key, k] : p.kernels) EXPECT_NE(k.name, "a") << "a kernel before cudaProfilerStart counted";
  for (const auto& [key, k] : p.kernels) EXPECT_NE(k.name, "b") << "a kernel after cudaProfilerStop counted";
  ASSERT_EQ(p.apis.size(), 1u);
  EXPECT_EQ(p.apis.begin()->second.duration.count(), 1u);  // the call inside; not the one after
  EXPECT_EQ(p.capture.left_out, 3u + 4u + 1u);
  // Busy: 5 x 50 + [1900, 2000) clipped + 2 x 100 = 550; the window runs
  // from 1000 to 5400 less the closed [2000, 4900).
  const Timeline& t = p.timeline;
  EXPECT_EQ(t.first_gpu_ns, 1000u);
  EXPECT_EQ(t.last_gpu_ns, 5400u);
  EXPECT_EQ(t.kernel_busy_ns, 550u);
  EXPECT_EQ(t.uncaptured_ns, 2900u);
  EXPECT_EQ(t.window_ns(), 4400u - 2900u);
  EXPECT_DOUBLE_EQ(t.busy_fraction(), 550.0 / 1500.0);
  // Gaps leave out the closed stretch: 4 x 50 between the five kernels, 450
  // to the sixth, 0 after it (clipped to the stop), then 100 from the
  // reopening to c, and 200 between the c's. Their sum is the idle time.
  std::uint64_t idle = 0, gaps = 0;
  for (const auto& [bucket, ns] : t.gap_ns_histogram) idle += ns;
  for (const auto& [bucket, n] : t.gap_histogram) gaps += n;
  EXPECT_EQ(idle, t.window_ns() - t.gpu_busy_ns);
  EXPECT_EQ(gaps, 4u + 1u + 1u + 1u);
  ASSERT_FALSE(t.largest_gaps.empty());
  EXPECT_EQ(t.largest_gaps.front().end_ns - t.largest_gaps.front().start_ns, 450u);
  for (const auto& g : t.largest_gaps) EXPECT_FALSE(g.start_ns < 4900 && g.end_ns > 2000) << g.start_ns;
}

TEST(CaptureAggregator, NothingCapturedWhenTheRangeNeverOpens) {
  CaptureGate gate;
  gate.configure(profiler_api(), 0, &fake_clock);
  Aggregator agg;
  agg.set_gate(&gate);
  std::vector<Activity> batch = {kernel(100, 200), kernel(300, 400), api(50, 60)};
  agg.add(batch);
  EXPECT_TRUE(batch.empty());
  ProfileData p = agg.snapshot();
  EXPECT_FALSE(p.has_gpu_activity());
  EXPECT_EQ(p.capture.left_out, 3u);
  EXPECT_EQ(p.timeline.window_ns(), 0u);
  // The summary says why the profile is empty.
  p.capture.range = "cuda-profiler-api";
  std::string text = text_of(p);
  EXPECT_NE(text.find("the capture range never opened: the program called no cudaProfilerStart"), std::string::npos)
      << text;
  EXPECT_NE(text.find("nothing: the capture range never opened"), std::string::npos) << text;
  p.capture.range = "nvtx:step";
  text = text_of(p);
  EXPECT_NE(text.find("the capture range never opened: no NVTX range named step"), std::string::npos) << text;
  // Ranges that opened outside the time window.
  p.capture.range = "cuda-profiler-api";
  p.capture.opens = 2;
  p.capture.delay_ns = 700'000'000;
  text = text_of(p);
  EXPECT_NE(text.find("never opened inside the time window (from 0.70 s after the program started)"), std::string::npos)
      << text;
}

TEST(CaptureAggregator, NvtxRangesCountOnlyWhenTheyStartInside) {
  CaptureGate gate;
  CaptureSpec s;
  s.delay_ns = 1000;
  gate.configure(s, 0, &fake_clock);
  NvtxTracker nvtx;
  nvtx.set_gate(&gate);
  nvtx.push("early", 500);
  nvtx.pop(600);
  nvtx.push("late", 1500);
  nvtx.pop(1700);
  nvtx.push("across", 900);  // starts before the window: left out
  nvtx.pop(1800);
  std::map<std::string, NvtxRangeSummary> ranges;
  nvtx.snapshot(ranges);
  EXPECT_EQ(ranges.count("early"), 0u);
  EXPECT_EQ(ranges.count("across"), 0u);
  ASSERT_EQ(ranges.count("late"), 1u);
  EXPECT_EQ(ranges.at("late").cpu_ns.count(), 1u);
}

TEST(CaptureSummaryJson, RoundTripsMergesAndIsSaidInTheOverview) {
  ProfileData p;
  p.capture.range = "cuda-profiler-api";
  p.capture.ranges = {{1'000'000'000, 3'000'000'000}, {5'000'000'000, 5'400'000'000}};
  p.capture.opens = 2;
  p.capture.left_out = 17;
  p.wall_ns = 31.2e9;
  p.timeline.first_gpu_ns = 1'100'000'000;
  p.timeline.last_gpu_ns = 5'300'000'000;
  p.timeline.uncaptured_ns = 2'000'000'000;
  p.timeline.kernel_busy_ns = 1'100'000'000;
  ProfileData q = ProfileData::from_json(p.to_json());
  EXPECT_EQ(q.capture.range, "cuda-profiler-api");
  ASSERT_EQ(q.capture.ranges.size(), 2u);
  EXPECT_EQ(q.capture.ranges[1].end_ns, 5'400'000'000u);
  EXPECT_EQ(q.capture.opens, 2u);
  EXPECT_EQ(q.capture.left_out, 17u);
  EXPECT_EQ(q.timeline.uncaptured_ns, 2'000'000'000u);
  EXPECT_EQ(q.timeline.window_ns(), 2'200'000'000u);
  EXPECT_EQ(q.capture.captured_ns(), 2'400'000'000u);
  std::string text = text_of(q);
  EXPECT_NE(text.find("2 ranges, 2.40 s of 31.2 s run (cudaProfilerStart/Stop)"), std::string::npos) << text;
  EXPECT_NE(text.find("over the captured ranges only"), std::string::npos) << text;
  // A profile without a capture range has no capture in its JSON.
  EXPECT_FALSE(ProfileData{}.to_json().contains("capture"));
  EXPECT_FALSE(ProfileData::from_json(ProfileData{}.to_json()).capture.active());

  // A forked child's ranges join the parent's; the window leaves out what neither captured.
  ProfileData child;
  child.capture.range = "cuda-profiler-api";
  child.capture.ranges = {{2'500'000'000, 4'000'000'000}};
  child.capture.opens = 1;
  child.timeline.first_gpu_ns = 3'000'000'000;
  child.timeline.last_gpu_ns = 3'500'000'000;
  q.merge(child);
  ASSERT_EQ(q.capture.ranges.size(), 2u);
  EXPECT_EQ(q.capture.ranges[0].end_ns, 4'000'000'000u);
  EXPECT_EQ(q.capture.opens, 3u);
  EXPECT_EQ(q.timeline.uncaptured_ns, 1'000'000'000u);  // [4.0, 5.0) s only

  // PM samples outside the ranges are dropped.
  q.pm_samples = {{500'000'000}, {1'500'000'000}, {4'500'000'000}, {5'100'000'000}};
  q.keep_captured_samples();
  ASSERT_EQ(q.pm_samples.size(), 2u);
  EXPECT_EQ(q.pm_samples[0].t_ns, 1'500'000'000u);
  EXPECT_EQ(q.pm_samples[1].t_ns, 5'100'000'000u);
}

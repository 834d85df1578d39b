// The profiler's on-the-fly aggregation against exact computations on fresh
// random activity: busy time (union of intervals) and gaps with records out of
// order, duration statistics, kernel sequences, launch joins, NVTX paths.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <thread>

#include "roofline/profiler/aggregator.hpp"
#include "roofline/profiler/busy_tracker.hpp"
#include "roofline/profiler/diagnosis.hpp"
#include "roofline/profiler/nvtx_tracker.hpp"
#include "roofline/profiler/sequence_counter.hpp"
#include "roofline/profiler/summary.hpp"

#include <sstream>

using namespace roofline::prof;

namespace {

std::uint64_t fresh_seed() {
  std::uint64_t s = std::random_device{}();
  ::testing::Test::RecordProperty("seed", std::to_string(s));
  return s;
}

struct ExactUnion {
  std::uint64_t busy = 0;
  std::vector<std::uint64_t> gaps;
};

ExactUnion exact_union(std::vector<Interval> v) {
  std::sort(v.begin(), v.end(), [](const Interval& a, const Interval& b) { return a.start_ns < b.start_ns; });
  ExactUnion u;
  std::uint64_t cs = 0, ce = 0;
  bool open = false;
  for (const auto& i : v) {
    if (!open) {
      cs = i.start_ns;
      ce = i.end_ns;
      open = true;
    } else if (i.start_ns <= ce) {
      ce = std::max(ce, i.end_ns);
    } else {
      u.busy += ce - cs;
      u.gaps.push_back(i.start_ns - ce);
      cs = i.start_ns;
      ce = i.end_ns;
    }
  }
  if (open) u.busy += ce - cs;
  return u;
}

// Kernels on a few streams: overlapping within and across streams, gaps of
// every histogram size between bursts.
std::vector<Interval> random_intervals(std::mt19937_64& rng, size_t n) {
  std::vector<Interval> v;
  std::uniform_int_distribution<std::uint64_t> len(500, 200'000), jump(0, 300'000);
  std::uniform_int_distribution<int> kind(0, 9);
  std::uint64_t t = 1'000'000'000;
  for (size_t i = 0; i < n; ++i) {
    int k = kind(rng);
    if (k == 0)
      t += 20'000'000;  // a long idle stretch
    else if (k < 3)
      t += jump(rng);  // a gap (or an overlap below)
    std::uint64_t l = len(rng);
    v.push_back({t, t + l});
    t += l / 2;  // the next one may overlap this one
  }
  return v;
}

}  // namespace

TEST(ProfileBusyTracker, ShuffledIntervalsGiveTheExactUnionAndGaps) {
  std::mt19937_64 rng(fresh_seed());
  auto v = random_intervals(rng, 5000);
  ExactUnion exact = exact_union(v);
  std::shuffle(v.begin(), v.end(), rng);
  BusyTracker b(/*max_open=*/100000);  // room for everything: no late records possible
  for (const auto& i : v) b.add(i.start_ns, i.end_ns);
  EXPECT_EQ(b.busy_ns(), exact.busy);
  EXPECT_EQ(b.late_records(), 0u);
  std::map<std::string, std::uint64_t> hist, hist_ns;
  for (auto g : exact.gaps) {
    ++hist[BusyTracker::gap_bucket(g)];
    hist_ns[BusyTracker::gap_bucket(g)] += g;
  }
  EXPECT_EQ(b.gap_histogram(), hist);
  EXPECT_EQ(b.gap_ns_histogram(), hist_ns);
  std::vector<std::uint64_t> sorted = exact.gaps;
  std::sort(sorted.rbegin(), sorted.rend());
  auto largest = b.largest_gaps();
  ASSERT_EQ(largest.size(), std::min<size_t>(BusyTracker::kLargestGaps, sorted.size()));
  for (size_t i = 0; i < largest.size(); ++i) EXPECT_EQ(largest[i].end_ns - largest[i].start_ns, sorted[i]);
}

TEST(ProfileBusyTracker, LocallyOutOfOrderRecordsStayExactWithBoundedMemory) {
  // CUPTI's disorder is local (one buffer per stream): shuffling within
  // windows much smaller than the open-interval bound loses nothing.
  std::mt19937_64 rng(fresh_seed());
  auto v = random_intervals(rng, 20000);
  ExactUnion exact = exact_union(v);
  for (size_t i = 0; i < v.size(); i += 32) std::shuffle(v.begin() + i, v.begin() + std::min(v.size(), i + 32), rng);
  BusyTracker b(/*max_open=*/256);
  for (const auto& i : v) b.add(i.start_ns, i.end_ns);
  EXPECT_EQ(b.busy_ns(), exact.busy);
  EXPECT_EQ(b.late_records(), 0u);
  std::map<std::string, std::uint64_t> hist, hist_ns;
  for (auto g : exact.gaps) {
    ++hist[BusyTracker::gap_bucket(g)];
    hist_ns[BusyTracker::gap_bucket(g)] += g;
  }
  EXPECT_EQ(b.gap_histogram(), hist);
  EXPECT_EQ(b.gap_ns_histogram(), hist_ns);  // closed and open gaps together
  EXPECT_EQ(b.first_ns(),
            std::min_element(v.begin(), v.end(), [](auto& a, auto& c) { return a.start_ns < c.start_ns; })->start_ns);
}

TEST(ProfileBusyTracker, VeryLateRecordsAreCountedAndBoundTheError) {
  std::mt19937_64 rng(fresh_seed());
  auto v = random_intervals(rng, 4000);
  ExactUnion exact = exact_union(v);
  std::shuffle(v.begin(), v.end(), rng);
  BusyTracker b(/*max_open=*/16);
  for (const auto& i : v) b.add(i.start_ns, i.end_ns);
  EXPECT_GT(b.late_records(), 0u);
  EXPECT_LE(b.busy_ns(), exact.busy);
  EXPECT_LE(exact.busy - b.busy_ns(), b.late_ns());
}

TEST(ProfileBusyTracker, StreamsDeliveredInLateBuffersStayExactAtDefaultBounds) {
  // How CUPTI really hands records over on a long multi-stream run: each
  // stream's records in order, in buffers of ~40,000, and one stream's buffers
  // arriving whole seconds after the others have moved on. 500,000 kernels
  // (more than a 45-s ResNet-18 training run): the union stays exact, nothing
  // is late, and memory stays within the stated bound.
  std::mt19937_64 rng(fresh_seed());
  constexpr int kStreams = 4;
  constexpr size_t kPerStream = 125'000, kBuffer = 40'000;
  std::vector<std::vector<Interval>> stream(kStreams);
  std::vector<Interval> all;
  for (int s = 0; s < kStreams; ++s) {
    stream[s] = random_intervals(rng, kPerStream);
    for (auto& i : stream[s]) i.start_ns += s * 777, i.end_ns += s * 777;  // streams interleave in time
    all.insert(all.end(), stream[s].begin(), stream[s].end());
  }
  ExactUnion exact = exact_union(all);
  // Deliver: streams 0-2 buffer by buffer in turn; stream 3 holds its buffers
  // back until the others are three buffers ahead (seconds of GPU time).
  BusyTracker b;
  std::vector<size_t> at(kStreams, 0);
  auto deliver = [&](int s) {
    const size_t end = std::min(stream[s].size(), at[s] + kBuffer);
    for (; at[s] < end; ++at[s]) b.add(stream[s][at[s]].start_ns, stream[s][at[s]].end_ns);
  };
  while (at[0] < kPerStream || at[3] < kPerStream) {
    for (int s = 0; s < 3; ++s) deliver(s);
    if (at[0] >= 3 * kBuffer || at[0] >= kPerStream) deliver(3);
  }
  EXPECT_EQ(b.busy_ns(), exact.busy);
  EXPECT_EQ(b.late_records(), 0u);
  EXPECT_EQ(b.intervals(), all.size());
  EXPECT_LE(b.open_intervals(), BusyTracker::kDefaultMaxOpen);
  std::map<std::string, std::uint64_t> hist;
  for (auto g : exact.gaps) ++hist[BusyTracker::gap_bucket(g)];
  EXPECT_EQ(b.gap_histogram(), hist);
}

TEST(ProfileBusyTracker, OverlapTouchAndContainment) {
  BusyTracker b;
  b.add(100, 200);
  b.add(150, 180);  // inside
  b.add(200, 250);  // touching
  b.add(400, 500);
  b.add(90, 120);  // extends the first to the left
  EXPECT_EQ(b.busy_ns(), (250 - 90) + 100u);
  auto h = b.gap_histogram();
  EXPECT_EQ(h["<10us"], 1u);
  ASSERT_EQ(b.largest_gaps().size(), 1u);
  EXPECT_EQ(b.largest_gaps()[0].start_ns, 250u);
  EXPECT_EQ(b.largest_gaps()[0].end_ns, 400u);
}

TEST(ProfileDurationStats, MatchesExactStatistics) {
  std::mt19937_64 rng(fresh_seed());
  std::lognormal_distribution<double> d(8.0, 1.0);
  for (size_t n : {size_t{1}, size_t{7}, size_t{2048}, size_t{50000}}) {
    std::vector<double> v(n);
    for (auto& x : v) x = std::round(d(rng));
    DurationStats s, a, b;
    for (size_t i = 0; i < n; ++i) {
      s.add(v[i]);
      (i % 3 == 0 ? a : b).add(v[i]);
    }
    a.merge(b);
    double sum = 0;
    for (double x : v) sum += x;
    double mean = sum / static_cast<double>(n), m2 = 0;
    for (double x : v) m2 += (x - mean) * (x - mean);
    double sd = n > 1 ? std::sqrt(m2 / static_cast<double>(n - 1)) : 0.0;
    std::vector<double> sorted = v;
    std::sort(sorted.begin(), sorted.end());
    double median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    for (const DurationStats* x : {&s, &a}) {
      EXPECT_EQ(x->count(), n);
      EXPECT_NEAR(x->total(), sum, 1e-9 * sum);
      EXPECT_NEAR(x->mean(), mean, 1e-9 * mean);
      EXPECT_NEAR(x->stddev(), sd, 1e-6 * (sd + 1));
      EXPECT_EQ(x->min(), sorted.front());
      EXPECT_EQ(x->max(), sorted.back());
    }
    if (s.median_exact()) {
      EXPECT_EQ(s.median(), median) << "n=" << n;
    } else {
      // Reservoir of 2048: the estimate lies well inside the 40-60th percentiles.
      EXPECT_GE(s.median(), sorted[n * 40 / 100]);
      EXPECT_LE(s.median(), sorted[n * 60 / 100]);
    }
  }
}

TEST(ProfileSequences, CountsRepeatedPatternsPerStream) {
  SequenceCounter c;
  // Stream 1: (A B C) x 50; stream 2 interleaved in time: (D E) x 30.
  std::uint64_t t = 0;
  for (int i = 0; i < 50; ++i)
    for (std::uint32_t k : {1u, 2u, 3u}) {
      c.add(1, k, t += 10, 5.0);
      if (i < 30 && k != 3) c.add(2, k == 1 ? 4u : 5u, t += 1, 2.0);
    }
  auto top = c.top(10);
  ASSERT_FALSE(top.empty());
  // A B C repeats 50 times; its rotations B C A and C A B 49 times; the pairs
  // inside it are hidden by the longer sequences that contain them.
  auto find = [&](std::vector<std::uint32_t> k) -> const SequenceCounter::Sequence* {
    for (const auto& s : top)
      if (s.kernels == k) return &s;
    return nullptr;
  };
  const auto* abca = find({1, 2, 3, 1});
  ASSERT_NE(abca, nullptr);
  EXPECT_EQ(abca->count, 49u);
  EXPECT_DOUBLE_EQ(abca->total_ns, 49 * 4 * 5.0);
  const auto* dede = find({4, 5, 4, 5});
  ASSERT_NE(dede, nullptr);
  EXPECT_EQ(dede->count, 29u);
  EXPECT_DOUBLE_EQ(dede->total_ns, 29 * 4 * 2.0);
  EXPECT_EQ(find({1, 2}), nullptr);  // hidden inside A B C A
  EXPECT_EQ(find({4, 5}), nullptr);  // hidden inside D E D E (30 vs 29 times)
  EXPECT_EQ(c.out_of_order(), 0u);
}

TEST(ProfileSequences, BoundedTableKeepsFrequentSequences) {
  std::mt19937_64 rng(fresh_seed());
  std::uniform_int_distribution<std::uint32_t> noise(100, 100000);
  SequenceCounter c(/*capacity=*/200);
  std::uint64_t t = 0;
  for (int i = 0; i < 2000; ++i) {
    c.add(7, 1, t += 10, 1.0);
    c.add(7, 2, t += 10, 1.0);
    c.add(7, noise(rng), t += 10, 1.0);  // mostly unique: these get pruned
  }
  EXPECT_LE(c.size(), 201u);
  EXPECT_GT(c.prune_floor(), 0u);
  auto top = c.top(1);
  ASSERT_EQ(top.size(), 1u);
  EXPECT_EQ(top[0].kernels, (std::vector<std::uint32_t>{1, 2}));
  EXPECT_GE(top[0].count, 2000u - c.prune_floor());
  EXPECT_LE(top[0].count, 2000u);
}

TEST(ProfileSequences, OutOfOrderRecordRestartsHistory) {
  SequenceCounter c;
  c.add(1, 1, 100, 1);
  c.add(1, 2, 200, 1);
  c.add(1, 3, 150, 1);  // older than the last one
  c.add(1, 4, 300, 1);
  EXPECT_EQ(c.out_of_order(), 1u);
  EXPECT_TRUE(c.top(10).empty());  // every sequence seen once only
}

TEST(ProfileNvtx, PathsPerThreadAndLaunchAttribution) {
  NvtxTracker n(1024);
  EXPECT_FALSE(n.active());
  n.push("model", 0);
  n.push("conv1", 10);
  n.push("forward", 20);
  EXPECT_TRUE(n.active());
  std::uint32_t fwd = n.current_path();
  EXPECT_EQ(n.path_name(fwd), "model/conv1/forward");
  n.note_launch(77);
  std::uint32_t other_path = 0;
  std::thread th([&] {
    EXPECT_EQ(n.current_path(), 0u);  // another thread has its own stack
    n.push("loader", 0);
    other_path = n.current_path();
    n.note_launch(78);
    n.pop(5);
  });
  th.join();
  EXPECT_EQ(n.path_of_launch(77), fwd);
  EXPECT_EQ(n.path_name(n.path_of_launch(78)), "loader");
  EXPECT_EQ(n.path_of_launch(77 + 1024), 0u);  // same slot, other correlation id
  n.pop(120);
  n.pop(130);
  n.pop(140);
  n.pop(150);  // one more pop than pushes: counted, ignored
  EXPECT_EQ(n.unmatched_pops(), 1u);
  auto lineage = n.lineage(fwd);
  ASSERT_EQ(lineage.size(), 3u);
  EXPECT_EQ(n.path_name(lineage[2]), "model");
  std::map<std::string, NvtxRangeSummary> out;
  n.snapshot(out);
  EXPECT_EQ(out["model/conv1/forward"].cpu_ns.total(), 100.0);
  EXPECT_EQ(out["model"].cpu_ns.total(), 140.0);
  EXPECT_EQ(out["loader"].cpu_ns.count(), 1u);
  n.start_range(5, "epoch", 1000);
  n.end_range(5, 4000);
  n.end_range(6, 4000);  // never started
  out.clear();
  n.snapshot(out);
  EXPECT_EQ(out["epoch"].cpu_ns.total(), 3000.0);
  EXPECT_EQ(n.unmatched_pops(), 2u);
}

namespace {

Activity kernel(const char* name, std::uint64_t s, std::uint64_t e, std::uint32_t corr, std::uint32_t stream = 7) {
  Activity a;
  a.type = Activity::Type::Kernel;
  a.name = name;
  a.start = s;
  a.end = e;
  a.correlation = corr;
  a.stream = stream;
  a.grid[0] = 128;
  a.block[0] = 256;
  a.registers = 32;
  return a;
}

Activity api(const char* name, std::uint64_t s, std::uint64_t e, std::uint32_t corr, bool driver = false) {
  Activity a;
  a.type = driver ? Activity::Type::DriverApi : Activity::Type::RuntimeApi;
  a.name = name;
  a.start = s;
  a.end = e;
  a.correlation = corr;
  return a;
}

}  // namespace

TEST(ProfileAggregator, KernelsApisCopiesAndLaunchesFromShuffledBatches) {
  std::mt19937_64 rng(fresh_seed());
  std::uniform_int_distribution<std::uint64_t> api_len(2000, 6000), queue(0, 20000), klen(1000, 50000);
  NvtxTracker nvtx(4096);
  Aggregator agg;
  agg.set_nvtx(&nvtx);
  std::vector<Activity> all;
  std::uint64_t t = 1'000'000;
  std::uint64_t gpu_free = 0;
  double api_sum = 0, queue_sum = 0, kernel_sum_a = 0;
  std::uint64_t shorter = 0;
  const int n = 3000;
  nvtx.push("train", 0);
  for (int i = 0; i < n; ++i) {
    auto corr = static_cast<std::uint32_t>(i + 1);
    bool in_layer = i % 2 == 0;
    if (in_layer) nvtx.push("layer", t);
    nvtx.note_launch(corr);  // what the launch callback does
    std::uint64_t as = t, ae = t + api_len(rng);
    std::uint64_t ks = std::max(ae - 1000 + queue(rng), gpu_free), ke = ks + klen(rng);
    gpu_free = ke;
    const char* kname = i % 2 ? "_Z6kernelAv" : "_Z6kernelBv";
    Activity k = kernel(kname, ks, ke, corr);
    k.nvtx_path = nvtx.path_of_launch(corr);  // what the collector does
    all.push_back(k);
    all.push_back(api("cudaLaunchKernel", as, ae, corr));
    if (i % 2) {
      api_sum += static_cast<double>(ae - as);
      queue_sum += ks > ae ? static_cast<double>(ks - ae) : 0.0;
      kernel_sum_a += static_cast<double>(ke - ks);
      shorter += (ke - ks) < (ae - as) ? 1 : 0;
    }
    if (in_layer) nvtx.pop(ae);
    t = ae + 100;
  }
  nvtx.pop(t);
  Activity copy;
  copy.type = Activity::Type::Memcpy;
  copy.copy_kind = "HtoD";
  copy.start = gpu_free + 10;
  copy.end = gpu_free + 1010;
  copy.bytes = 1 << 20;
  copy.pageable = true;
  copy.synchronous = true;
  all.push_back(copy);
  copy.start += 5000;
  copy.end += 5000;
  copy.bytes = 4096;
  copy.pageable = false;
  all.push_back(copy);
  all.push_back(api("cudaStreamSynchronize", t, t + 100, 0));
  Activity bad = api("cudaMalloc", t + 200, t + 300, 0);
  bad.failed = true;
  all.push_back(bad);
  // Like CUPTI: GPU records come in buffers that are in order per stream but
  // not sorted inside, API records in buffers of their own, and the two kinds
  // of buffer arrive interleaved at random (an API record may come long before
  // or after its kernel).
  std::vector<Activity> gpu, host;
  for (const auto& a : all)
    (a.type == Activity::Type::RuntimeApi || a.type == Activity::Type::DriverApi ? host : gpu).push_back(a);
  std::sort(gpu.begin(), gpu.end(), [](const Activity& a, const Activity& b) { return a.start < b.start; });
  std::shuffle(host.begin(), host.end(), rng);
  auto chunks = [&](std::vector<Activity>& v) {
    std::vector<std::vector<Activity>> out;
    for (size_t i = 0; i < v.size();) {
      size_t len = std::min(v.size() - i, static_cast<size_t>(1 + rng() % 500));
      out.emplace_back(v.begin() + static_cast<long>(i), v.begin() + static_cast<long>(i + len));
      std::shuffle(out.back().begin(), out.back().end(), rng);
      i += len;
    }
    return out;
  };
  auto g = chunks(gpu), h = chunks(host);
  size_t gi = 0, hi = 0;
  while (gi < g.size() || hi < h.size()) {
    bool take_gpu = hi == h.size() || (gi < g.size() && rng() % 2);
    agg.add(take_gpu ? g[gi++] : h[hi++]);
  }
  ProfileData p = agg.snapshot();
  std::uint64_t a_count = 0, b_count = 0, in_layer = 0;
  for (const auto& [key, k] : p.kernels) {
    (k.name == "_Z6kernelAv" ? a_count : b_count) += k.duration.count();
    if (k.nvtx_path == "train/layer") in_layer += k.duration.count();
    EXPECT_EQ(k.grid[0], 128u);
    EXPECT_EQ(k.registers, 32);
  }
  EXPECT_EQ(a_count, n / 2u);
  EXPECT_EQ(b_count, n / 2u);
  EXPECT_EQ(in_layer, n / 2u);  // every kernel B was launched inside "layer"
  ASSERT_TRUE(p.apis.count("cudaLaunchKernel"));
  EXPECT_EQ(p.apis["cudaLaunchKernel"].duration.count(), static_cast<std::uint64_t>(n));
  EXPECT_EQ(p.apis["cudaMalloc"].errors, 1u);
  const LaunchSummary& la = p.launches.at("_Z6kernelAv");
  EXPECT_EQ(la.kernel_ns.count(), n / 2u);
  EXPECT_NEAR(la.api_ns.total(), api_sum, 1e-6);
  EXPECT_NEAR(la.queue_ns.total(), queue_sum, 1e-6);
  EXPECT_NEAR(la.kernel_ns.total(), kernel_sum_a, 1e-6);
  EXPECT_EQ(la.shorter_than_launch, shorter);
  const MemcpySummary& m = p.memcpys.at("HtoD");
  EXPECT_EQ(m.total_bytes, (1u << 20) + 4096u);
  EXPECT_EQ(m.min_bytes, 4096u);
  EXPECT_EQ(m.max_bytes, 1u << 20);
  EXPECT_EQ(m.pageable, 1u);
  EXPECT_EQ(m.synchronous, 2u);
  // Kernels are serial here: kernel busy time is their sum.
  EXPECT_EQ(p.timeline.kernel_busy_ns, static_cast<std::uint64_t>(p.kernel_time_ns()));
  EXPECT_EQ(p.timeline.gpu_busy_ns, p.timeline.kernel_busy_ns + 2000);
  // NVTX: "train" includes the kernels of "train/layer".
  EXPECT_EQ(p.nvtx_ranges.at("train").kernels, static_cast<std::uint64_t>(n));
  EXPECT_EQ(p.nvtx_ranges.at("train/layer").kernels, n / 2u);
  EXPECT_EQ(p.nvtx_ranges.at("train/layer").cpu_ns.count(), n / 2u);
  EXPECT_NEAR(p.nvtx_ranges.at("train").kernel_ns, p.kernel_time_ns(), 1e-3);
  // Sequences: A and B alternate on one stream.
  ASSERT_FALSE(p.sequences.empty());
  EXPECT_GE(p.sequences[0].count, static_cast<std::uint64_t>(n / 2 - 2));
}

TEST(ProfileAggregator, LaunchApiNames) {
  EXPECT_TRUE(Aggregator::is_launch_api("cudaLaunchKernel"));
  EXPECT_TRUE(Aggregator::is_launch_api("cudaLaunchKernelExC"));
  EXPECT_TRUE(Aggregator::is_launch_api("cuLaunchKernel"));
  EXPECT_TRUE(Aggregator::is_launch_api("cudaLaunchCooperativeKernel_ptsz"));
  EXPECT_FALSE(Aggregator::is_launch_api("cudaLaunchHostFunc"));
  EXPECT_FALSE(Aggregator::is_launch_api("cudaGraphLaunch"));
  EXPECT_FALSE(Aggregator::is_launch_api("cudaMemcpyAsync"));
  // The legacy launches, which the diagnosis once left out: they launch kernels too.
  for (const char* legacy : {"cuLaunch", "cuLaunchGrid", "cuLaunchGridAsync", "cudaLaunch", "cudaLaunch_ptsz",
                             "cuLaunchCooperativeKernelMultiDevice", "cuLaunchKernelEx_ptsz"})
    EXPECT_TRUE(Aggregator::is_launch_api(legacy)) << legacy;
  EXPECT_FALSE(Aggregator::is_launch_api("cuLaunchHostFunc"));
  EXPECT_FALSE(Aggregator::is_launch_api("cudaLaunchHostFunc_ptsz"));
}

TEST(ProfileAggregator, UnmatchedLaunchesDoNotAccumulate) {
  Aggregator::Options o;
  o.max_pending_launches = 100;
  Aggregator agg(o);
  std::vector<Activity> batch;
  for (std::uint32_t i = 1; i <= 1000; ++i) batch.push_back(api("cudaLaunchKernel", i * 10, i * 10 + 5, i));
  agg.add(batch);
  // A kernel for an evicted launch has no partner; a recent one still joins.
  std::vector<Activity> k = {kernel("_Z1kv", 20000, 20100, 1), kernel("_Z1kv", 20200, 20300, 1000)};
  agg.add(k);
  ProfileData p = agg.snapshot();
  EXPECT_EQ(p.launches.at("_Z1kv").kernel_ns.count(), 1u);
  EXPECT_EQ(p.kernels.begin()->second.duration.count(), 2u);
}

TEST(ProfileAggregator, ForkResetKeepsNamesAndDropsData) {
  Aggregator agg;
  std::vector<Activity> b = {kernel("_Z1kv", 100, 200, 1)};
  agg.add(b);
  agg.add_device(0, "NVIDIA H100 80GB HBM3", 3.35e12);
  agg.lock_for_fork();
  agg.reset_locked();
  agg.unlock_after_fork();
  ProfileData p = agg.snapshot();
  EXPECT_TRUE(p.kernels.empty());
  EXPECT_EQ(p.timeline.kernel_busy_ns, 0u);
  ASSERT_EQ(p.devices.size(), 1u);
  EXPECT_EQ(p.devices[0], "NVIDIA H100 80GB HBM3");
}

#include "roofline/profiler/pm_series.hpp"

TEST(ProfilePmSeries, BoundedAndMeanPreserving) {
  std::mt19937_64 rng(fresh_seed());
  std::uniform_real_distribution<double> u(0, 1);
  PmSeries series(64);
  std::vector<PmSample> all;
  std::uint64_t t = 1000;
  for (int batch = 0; batch < 37; ++batch) {
    std::vector<PmSample> b;
    for (int i = 0; i < 31; ++i) {
      PmSample s{t, u(rng), u(rng), u(rng), 1e12 * u(rng), 5e11 * u(rng)};
      t += 100'000;
      b.push_back(s);
      all.push_back(s);
    }
    series.add(b, 100'000);
  }
  auto pts = series.points();
  EXPECT_LE(pts.size(), 64u);
  EXPECT_EQ(series.raw_samples(), all.size());
  // The step is a power-of-two multiple of the interval, and the points cover every sample.
  auto g = static_cast<std::uint64_t>(series.step_ns() / 100'000.0);
  EXPECT_EQ(g & (g - 1), 0u);
  EXPECT_EQ(pts.size(), (all.size() + g - 1) / g);
  // Mean over the run, weighting each point by the raw samples it holds.
  double exact = 0, merged = 0;
  for (const auto& s : all) exact += s.sm_active;
  exact /= static_cast<double>(all.size());
  auto group = static_cast<std::uint64_t>(series.step_ns() / 100'000.0);
  std::uint64_t full = all.size() / group, rest = all.size() % group;
  for (size_t i = 0; i < pts.size(); ++i) merged += pts[i].sm_active * static_cast<double>(i < full ? group : rest);
  merged /= static_cast<double>(all.size());
  EXPECT_NEAR(merged, exact, 1e-12);
  EXPECT_EQ(pts.front().t_ns, all.front().t_ns);
  for (size_t i = 1; i < pts.size(); ++i) EXPECT_GT(pts[i].t_ns, pts[i - 1].t_ns);
}

// NCCL collectives against the other kernels: each union, and their overlap by
// inclusion-exclusion, against exact interval arithmetic on random kernels.
TEST(AggregatorComm, NcclTimeAndItsOverlapWithComputation) {
  EXPECT_TRUE(Aggregator::is_nccl_kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL"));
  EXPECT_TRUE(Aggregator::is_nccl_kernel("ncclKernel_AllGather_RING_LL_Sum_int8_t"));
  EXPECT_FALSE(Aggregator::is_nccl_kernel("ampere_sgemm_128x64_nn"));
  EXPECT_FALSE(Aggregator::is_nccl_kernel("my_ncclDevKernel_copy"));
  // As CUPTI names them: mangled (NCCL 2.28's kernels take their arguments by a templated struct).
  EXPECT_TRUE(Aggregator::is_nccl_kernel("_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE"));
  EXPECT_FALSE(Aggregator::is_nccl_kernel("_Z20my_ncclDevKernel_copyPf"));
  EXPECT_FALSE(Aggregator::is_nccl_kernel("_Z"));
  std::mt19937_64 rng(fresh_seed());
  std::uniform_int_distribution<std::uint64_t> len(1'000, 50'000), at(0, 2'000'000);
  std::vector<Interval> comm, comp;
  std::vector<Activity> batch;
  for (int i = 0; i < 400; ++i) {
    const bool nccl = i % 3 == 0;
    const std::uint64_t s = 1'000'000 + at(rng), e = s + len(rng);
    (nccl ? comm : comp).push_back({s, e});
    Activity a;
    a.type = Activity::Type::Kernel;
    a.start = s, a.end = e;
    a.stream = nccl ? 7 : 1 + i % 2;
    a.name = nccl ? "ncclDevKernel_AllReduce_Sum_bf16_RING_LL" : "compute_kernel";
    batch.push_back(a);
  }
  Aggregator agg;
  agg.add(batch);
  const ProfileData p = agg.snapshot();
  std::vector<Interval> all = comm;
  all.insert(all.end(), comp.begin(), comp.end());
  const std::uint64_t c = exact_union(comm).busy, k = exact_union(comp).busy, u = exact_union(all).busy;
  EXPECT_EQ(p.timeline.comm_busy_ns, c);
  EXPECT_EQ(p.timeline.compute_busy_ns, k);
  EXPECT_EQ(p.timeline.overlap_ns, c + k - u);
  EXPECT_GT(p.timeline.overlap_ns, 0u);
  EXPECT_LT(p.timeline.overlap_ns, c);
  // Written and read back.
  const ProfileData q = ProfileData::from_json(p.to_json());
  EXPECT_EQ(q.timeline.comm_busy_ns, c);
  EXPECT_EQ(q.timeline.overlap_ns, c + k - u);
  // The summary's overview says it.
  roofline::Report r("profile");
  add_profile_tables(r, q, SummaryOptions{});
  std::ostringstream text;
  roofline::render(r, roofline::Format::Text, text);
  EXPECT_NE(text.str().find("Communication (NCCL kernels)"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("Exposed communication"), std::string::npos);
}

// Two ranks' profiles merged as the launcher merges per-process files: each
// keeps its own row, sorted by rank, with its communication hidden and exposed.
TEST(AggregatorComm, RanksKeepTheirOwnRowsThroughTheMerge) {
  auto rank_profile = [](int pid, int rank, std::uint64_t comm_len, std::uint64_t comm_start) {
    Aggregator agg;
    std::vector<Activity> batch;
    Activity k;
    k.type = Activity::Type::Kernel;
    k.start = 1'000'000, k.end = 2'000'000, k.stream = 1, k.name = "compute_kernel";
    batch.push_back(k);
    Activity c = k;
    c.start = comm_start, c.end = comm_start + comm_len, c.stream = 2, c.name = "ncclDevKernel_AllReduce_Sum_f32_RING_LL";
    batch.push_back(c);
    agg.add(batch);
    ProfileData p = agg.snapshot();
    p.pid = pid;
    p.processes = {pid};
    p.add_rank_row(rank, 2, rank, "torchrun");
    return p;
  };
  // Rank 1: 400 µs of NCCL, all under the compute kernel. Rank 0: 400 µs, half after it (exposed 200 µs).
  ProfileData merged = rank_profile(200, 1, 400'000, 1'200'000);
  merged.merge(rank_profile(100, 0, 400'000, 1'800'000));
  const ProfileData p = ProfileData::from_json(merged.to_json());
  ASSERT_EQ(p.ranks.size(), 2u);
  roofline::Report r("profile");
  add_profile_tables(r, p, SummaryOptions{});
  std::ostringstream text;
  roofline::render(r, roofline::Format::Text, text);
  const std::string s = text.str();
  const auto at = s.find("Per rank");
  ASSERT_NE(at, std::string::npos) << s;
  const std::string table = s.substr(at, s.find("\n\n", at) - at);
  const auto row0 = table.find("     0  100"), row1 = table.find("     1  200");
  ASSERT_NE(row0, std::string::npos) << table;
  ASSERT_NE(row1, std::string::npos) << table;
  EXPECT_LT(row0, row1) << table;  // sorted by rank
  // NCCL s, hidden %, exposed s: rank 0 half hidden (0.2 ms exposed), rank 1 all of it.
  EXPECT_NE(table.find("0.0004        50.0       0.0002", row0), std::string::npos) << table;
  EXPECT_NE(table.find("0.0004       100.0       0.0000", row1), std::string::npos) << table;
  EXPECT_NE(table.find("of a job of 2 (torchrun)"), std::string::npos) << table;
}

// The straggler rule lines up the k-th collective of every rank: rank 2 of 3
// starts its collectives late at most steps, so the others wait for it; with
// the ranks arriving in turn, nobody is named.
TEST(AggregatorComm, AStragglerRankIsNamedWithTheWaitItCauses) {
  std::mt19937_64 rng(fresh_seed());
  std::uniform_int_distribution<std::uint64_t> jitter(0, 20'000);
  const int steps = 40, world = 3;
  const auto rank_profile = [&](int rank, auto late_at) {
    Aggregator agg;
    std::vector<Activity> batch;
    for (int s = 0; s < steps; ++s) {
      const std::uint64_t t0 = 10'000'000ull * static_cast<std::uint64_t>(s + 1);
      Activity k;
      k.type = Activity::Type::Kernel;
      k.stream = 1, k.name = "compute_kernel";
      // 2 ms more work when late; rank 2 is otherwise the first to arrive.
      const std::uint64_t compute = late_at(rank, s) ? 3'000'000 : rank == 2 ? 500'000 : 1'000'000;
      k.start = t0, k.end = t0 + compute + jitter(rng);
      batch.push_back(k);
      Activity c = k;
      c.stream = 2, c.name = "ncclDevKernel_AllReduce_Sum_f32_RING_LL";
      c.start = k.end + 1'000, c.end = t0 + 3'500'000;  // all ranks leave the collective together
      batch.push_back(c);
    }
    agg.add(batch);
    ProfileData p = agg.snapshot();
    p.pid = 100 + rank;
    p.processes = {p.pid};
    p.add_rank_row(rank, world, rank, "torchrun");
    return p;
  };
  const auto merged = [&](auto late_at) {
    ProfileData m = rank_profile(0, late_at);
    for (int r = 1; r < world; ++r) m.merge(rank_profile(r, late_at));
    return ProfileData::from_json(m.to_json());  // the collectives survive the store's JSON
  };
  const auto find = [](const std::vector<Diagnosis>& ds) -> const Diagnosis* {
    for (const auto& d : ds)
      if (d.rule == "straggler") return &d;
    return nullptr;
  };
  // Rank 2 is late at 36 of 40 steps (every step but a multiple of 10).
  const ProfileData slow = merged([](int rank, int s) { return rank == 2 && s % 10 != 0; });
  ASSERT_EQ(slow.ranks.size(), 3u);
  for (const auto& r : slow.ranks) EXPECT_EQ(r.collectives.size(), size_t(steps));
  const std::vector<Diagnosis> found = diagnose(slow);
  const Diagnosis* d = find(found);
  ASSERT_NE(d, nullptr);
  EXPECT_NE(d->evidence.find("rank 2 reaches the NCCL collectives last at 36 of 40 (90%, 3 ranks)"),
            std::string::npos)
      << d->evidence;
  // The others wait about 2 ms each time it is late: 36 × ~2 ms in all.
  EXPECT_GT(d->impact_ns, 36 * 1.95e6);
  EXPECT_LT(d->impact_ns, 36 * 2.05e6);
  // Lateness taking turns: each rank late at a third of the steps. Nobody is named.
  const std::vector<Diagnosis> turns = diagnose(merged([](int rank, int s) { return s % 3 == rank; }));
  EXPECT_EQ(find(turns), nullptr);
  // One process alone (no ranks) gives no finding either.
  const std::vector<Diagnosis> alone = diagnose(rank_profile(0, [](int, int) { return false; }));
  EXPECT_EQ(find(alone), nullptr);
}

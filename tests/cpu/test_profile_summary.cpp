// Summary tables, kernel names, JSON round trip, merge of forked children and
// the store, on the recorded fixture tests/data/profiles/cnn_train_h100.json
// (a simulated 60-step CNN training run on an H100; see generate_fixture.py).
// Expected figures are recomputed from the fixture's JSON, not hard-coded.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>

#include "roofline/core/error.hpp"
#include "roofline/core/report.hpp"
#include "roofline/core/strings.hpp"
#include "roofline/profiler/profile_data.hpp"
#include "roofline/profiler/profile_store.hpp"
#include "roofline/profiler/short_names.hpp"
#include "roofline/profiler/diagnosis.hpp"
#include "roofline/profiler/metrics.hpp"
#include "roofline/profiler/summary.hpp"
#include "roofline/store/db.hpp"
#include "roofline/store/results.hpp"
#include "tests/support/cli.hpp"

using namespace roofline;
using namespace roofline::prof;

namespace {

nlohmann::json fixture_json() {
  std::ifstream f(std::string(ROOFLINE_TEST_DATA) + "/profiles/cnn_train_h100.json");
  return nlohmann::json::parse(f);
}

const Table& table(const Report& r, const std::string& id) {
  const Table* t = r.find(id);
  if (!t) throw std::runtime_error("no table " + id);
  return *t;
}

size_t col(const Table& t, const std::string& key) {
  for (size_t i = 0; i < t.columns().size(); ++i)
    if (t.columns()[i].key == key) return i;
  throw std::runtime_error("no column " + key);
}

double num(const Cell& c) {
  if (auto* d = std::get_if<double>(&c)) return *d;
  if (auto* i = std::get_if<std::int64_t>(&c)) return static_cast<double>(*i);
  return NAN;
}

}  // namespace

TEST(ProfileKernelNames, DemangleAndShorten) {
  EXPECT_EQ(short_kernel_name(
                "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_10AbsFunctorIfEESt5arrayIPcLm2EEEEviT0_T1_"),
            "at::native::vectorized_elementwise_kernel<4, AbsFunctor<\xE2\x80\xA6>, array<\xE2\x80\xA6>>");
  EXPECT_EQ(short_kernel_name("_ZN2at6native12_GLOBAL__N_120softmax_warp_forwardIfffLi4ELb0ELb0EEEvPT1_PKT_iiiPKbib"),
            "at::native::softmax_warp_forward<float, float, float, 4, false, false>");
  EXPECT_EQ(short_kernel_name(
                "_ZN2at6native29vectorized_elementwise_kernelILi4EZNS0_4instEvEUlfE_St5arrayIPcLm2EEEEviT0_T1_"),
            "at::native::vectorized_elementwise_kernel<4, inst::lambda, array<\xE2\x80\xA6>>");
  EXPECT_EQ(short_kernel_name("_ZN8roofline7kernels10gemm_tiledILi32EEEvPKfPfi"), "roofline::kernels::gemm_tiled<32>");
  EXPECT_EQ(demangle("_ZN8roofline7kernels10gemm_tiledILi32EEEvPKfPfi"),
            "void roofline::kernels::gemm_tiled<32>(float const*, float*, int)");
  // Not mangled: as is, and cut to the width asked for.
  EXPECT_EQ(short_kernel_name("ampere_sgemm_32x32_sliced1x4_tn"), "ampere_sgemm_32x32_sliced1x4_tn");
  EXPECT_EQ(short_kernel_name("ampere_sgemm_32x32_sliced1x4_tn", 10), "ampere_sg\xE2\x80\xA6");
  EXPECT_EQ(display_width(short_kernel_name(
                "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_10AbsFunctorIfEESt5arrayIPcLm2EEEEviT0_T1_", 30)),
            30u);
  // A damaged mangled name is shown as it is, never lost.
  EXPECT_EQ(demangle("_Z3fooILi"), "_Z3fooILi");
  EXPECT_EQ(base_kernel_name("_ZN2at6native13reduce_kernelIfNS0_8ReduceOpIfEEEEvPT_T0_"),
            "reduce_kernel<float, ReduceOp<\xE2\x80\xA6>>");
}

TEST(ProfileKernelNames, Library) {
  EXPECT_EQ(kernel_library("ampere_sgemm_32x32_sliced1x4_tn"), "cuBLAS");
  EXPECT_EQ(kernel_library("sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize64x64x32_warpgroupsize1x1x1_execute_segment_"
                           "k_off_kernel__5x_cublas"),
            "cuBLAS");
  EXPECT_EQ(kernel_library("sm90_xmma_fprop_implicit_gemm_f32f32_tf32f32_f32_nhwckrsc_nchw_tilesize64x32x64_stage5_"
                           "warpsize2x1x1_g1_tensor16x8x8_kernel__5x_cudnn"),
            "cuDNN");
  EXPECT_EQ(kernel_library("_ZN2at6native13reduce_kernelIfNS0_8ReduceOpIfEEEEvPT_T0_"), "PyTorch");
  EXPECT_EQ(kernel_library("_ZN8roofline7kernels10gemm_tiledILi32EEEvPKfPfi"), "roofline");
  EXPECT_EQ(kernel_library("my_kernel"), "");
}

TEST(ProfileData, JsonRoundTripOfTheFixture) {
  nlohmann::json j = fixture_json();
  ProfileData p = ProfileData::from_json(j);
  nlohmann::json again = p.to_json();
  EXPECT_EQ(ProfileData::from_json(again).to_json(), again);
  // Nothing in the file is dropped by the reader.
  for (const auto& [key, value] : j.items()) EXPECT_TRUE(again.contains(key)) << key;
  EXPECT_EQ(again["kernels"].size(), j["kernels"].size());
  EXPECT_EQ(again["nvtx_ranges"], j["nvtx_ranges"]);
  EXPECT_EQ(again["timeline"], j["timeline"]);
  // Older files without the newer keys still read.
  nlohmann::json old = j;
  for (const char* k : {"nvtx_ranges", "processes", "wall_ns", "dram_peak_bps"}) old.erase(k);
  for (auto& m : old["memcpys"]) m.erase("sizes");
  ProfileData q = ProfileData::from_json(old);
  EXPECT_TRUE(q.nvtx_ranges.empty());
  EXPECT_EQ(q.memcpys.size(), p.memcpys.size());
}

TEST(ProfileSummary, TablesAgreeWithTheRecordedData) {
  nlohmann::json j = fixture_json();
  ProfileData p = ProfileData::from_json(j);
  fill_demangled(p);
  Report r("profile");
  SummaryOptions opt;
  opt.top = 0;
  opt.label = "60/train";
  add_profile_tables(r, p, opt);

  // Kernels: one row per name (NVTX paths folded), instances and time add up.
  std::map<std::string, std::pair<double, double>> by_name;  // name -> count, total
  for (const auto& k : j["kernels"]) {
    by_name[k["name"]].first += k["duration"]["count"].get<double>();
    by_name[k["name"]].second += k["duration"]["total"].get<double>();
  }
  const Table& kt = table(r, "kernels");
  ASSERT_EQ(kt.rows().size(), by_name.size());
  double pct = 0, instances = 0, prev_total = INFINITY;
  for (const auto& row : kt.rows()) {
    pct += num(row[col(kt, "time_pct")]);
    instances += num(row[col(kt, "instances")]);
    double total = num(row[col(kt, "total_ns")]);
    EXPECT_LE(total, prev_total);  // sorted by total time
    prev_total = total;
    EXPECT_LE(display_width(std::get<std::string>(row[col(kt, "name")])), 80u);
  }
  double all = 0;
  for (const auto& [n, v] : by_name) all += v.first;
  EXPECT_NEAR(pct, 100.0, 1e-6);
  EXPECT_EQ(instances, all);

  // Launches: the share shorter than their launch call, per kernel.
  const Table& lt = table(r, "launch");
  for (const auto& l : j["launches"]) {
    double count = l["kernel_ns"]["count"].get<double>();
    double expect = 100.0 * l["shorter_than_launch"].get<double>() / count;
    std::string shown = short_kernel_name(l["kernel"].get<std::string>(), 80);
    bool found = false;
    for (const auto& row : lt.rows())
      if (std::get<std::string>(row[col(lt, "name")]) == shown && num(row[col(lt, "count")]) == count) {
        EXPECT_NEAR(num(row[col(lt, "shorter_pct")]), expect, 1e-9);
        found = true;
      }
    EXPECT_TRUE(found) << shown;
  }

  // Utilization: busy time over the GPU-active window.
  const auto& t = j["timeline"];
  // Timestamps are ns since the epoch: subtract as integers (doubles keep only ~256 ns there).
  double window = static_cast<double>(t["last_gpu_ns"].get<std::uint64_t>() - t["first_gpu_ns"].get<std::uint64_t>());
  const Table& ut = table(r, "utilization");
  EXPECT_NEAR(num(ut.rows()[0][col(ut, "value")]), 100.0 * t["kernel_busy_ns"].get<double>() / window, 1e-9);
  EXPECT_NEAR(num(ut.rows()[1][col(ut, "value")]), 100.0 * t["gpu_busy_ns"].get<double>() / window, 1e-9);
  EXPECT_EQ(std::get<std::string>(ut.rows()[0][col(ut, "config")]), "60/train");
  EXPECT_NEAR(num(ut.rows()[0][col(ut, "end_s")]) - num(ut.rows()[0][col(ut, "start_s")]), window * 1e-9, 1e-9);

  // Memory: bytes by kind, in nsys's MB (10^6 bytes).
  const Table& mt = table(r, "gpu_mem_size");
  for (const auto& m : j["memcpys"]) {
    std::string op = m["kind"] == "memset" ? "[CUDA memset]" : "[CUDA memcpy " + m["kind"].get<std::string>() + "]";
    bool found = false;
    for (const auto& row : mt.rows())
      if (std::get<std::string>(row[col(mt, "operation")]) == op) {
        EXPECT_NEAR(num(row[col(mt, "total_mb")]), m["total_bytes"].get<double>() * 1e-6, 1e-12);
        EXPECT_EQ(num(row[col(mt, "pageable")]), m["pageable"].get<double>());
        found = true;
      }
    EXPECT_TRUE(found) << op;
  }

  // NVTX: every range, GPU time inclusive of nested ranges.
  const Table& nt = table(r, "nvtx");
  EXPECT_EQ(nt.rows().size(), j["nvtx_ranges"].size());
  double kernel_total = p.kernel_time_ns();
  EXPECT_NEAR(num(nt.rows()[0][col(nt, "gpu_pct")]),
              100.0 * j["nvtx_ranges"][0]["kernel_ns"].get<double>() / kernel_total, 1e-9);

  // Gaps: the five buckets, counts as recorded.
  const Table& gt = table(r, "gaps");
  double gaps = 0, recorded = 0;
  double idle = 0, recorded_idle = 0;
  for (const auto& row : gt.rows()) {
    gaps += num(row[col(gt, "count")]);
    idle += num(row[col(gt, "idle_ns")]);
  }
  for (const auto& [k, v] : t["gap_histogram"].items()) recorded += v.get<double>();
  for (const auto& [k, v] : t["gap_ns_histogram"].items()) recorded_idle += v.get<double>();
  EXPECT_EQ(gaps, recorded);
  EXPECT_EQ(idle, recorded_idle);
  // The idle time is the window less the busy time.
  EXPECT_EQ(recorded_idle, window - t["gpu_busy_ns"].get<double>());
  EXPECT_TRUE(r.find("sequences"));
  EXPECT_FALSE(r.find("diagnoses"));  // none recorded

  // Text, JSON and CSV all render.
  std::ostringstream text, json, csv;
  render(r, Format::Text, text);
  render(r, Format::Json, json);
  render(r, Format::Csv, csv);
  EXPECT_NE(text.str().find("cuda_gpu_kern_sum"), std::string::npos);
  EXPECT_EQ(nlohmann::json::parse(json.str())["tables"].size(), r.tables().size());
  EXPECT_NE(csv.str().find("# kernels"), std::string::npos);
}

TEST(ProfileSummary, FullNamesAndTopRows) {
  ProfileData p = ProfileData::from_json(fixture_json());
  fill_demangled(p);
  SummaryOptions opt;
  opt.full_names = true;
  opt.top = 3;
  Report r;
  add_profile_tables(r, p, opt);
  const Table& kt = table(r, "kernels");
  ASSERT_EQ(kt.rows().size(), 3u);
  ASSERT_EQ(kt.notes().size(), 1u);
  bool has_params = false;
  for (const auto& row : kt.rows()) has_params |= contains(std::get<std::string>(row[col(kt, "name")]), "(");
  for (const auto& [key, k] : p.kernels)
    if (starts_with(k.name, "_Z")) EXPECT_TRUE(starts_with(k.demangled, "void ")) << k.demangled;
  // The fixture's top three include PyTorch's reduce kernel: whole, with its parameter list.
  EXPECT_TRUE(has_params);
  std::ostringstream text;
  render(r, Format::Text, text);
  EXPECT_NE(text.str().find("more kernels not shown"), std::string::npos);
}

TEST(ProfileSummary, EmptyProfileSaysLittleAndDoesNotFail) {
  ProfileData p;
  p.command = "/bin/true";
  p.exit_status = "exited 0";
  Report r;
  add_profile_tables(r, p, {});
  EXPECT_TRUE(r.find("profile"));
  EXPECT_FALSE(r.find("kernels"));
  EXPECT_FALSE(r.find("utilization"));
  std::ostringstream text;
  render(r, Format::Text, text);
  EXPECT_NE(text.str().find("exited 0"), std::string::npos);
}

TEST(ProfileMerge, ForkedChildrenAddUp) {
  ProfileData parent = ProfileData::from_json(fixture_json());
  parent.pid = 100;
  ProfileData child = parent;  // a child that ran the same work
  child.pid = 101;
  child.complete = false;  // and was killed: only a snapshot
  child.processes.clear();
  ProfileData other;  // a child with one kernel of its own
  other.pid = 102;
  other.complete = true;
  KernelSummary k;
  k.name = "_Z12child_kernelv";
  for (double d : {1000.0, 3000.0}) k.duration.add(d);
  other.kernels[k.name + '\x1f'] = k;
  other.timeline.first_gpu_ns = parent.timeline.first_gpu_ns + 10;
  other.timeline.last_gpu_ns = parent.timeline.first_gpu_ns + 4010;
  other.timeline.kernel_busy_ns = 4000;

  ProfileData m = parent;
  m.processes.clear();
  m.merge(child);
  m.merge(other);
  EXPECT_EQ(m.processes, (std::vector<int>{100, 101, 102}));
  EXPECT_FALSE(m.complete);
  EXPECT_EQ(m.kernels.size(), parent.kernels.size() + 1);
  for (const auto& [key, pk] : parent.kernels) EXPECT_EQ(m.kernels.at(key).duration.count(), 2 * pk.duration.count());
  EXPECT_EQ(m.kernels.at(k.name + '\x1f').duration.count(), 2u);
  EXPECT_NEAR(m.kernel_time_ns(), 2 * parent.kernel_time_ns() + 4000, 1e-3);
  for (const auto& [key, a] : parent.apis) EXPECT_EQ(m.apis.at(key).duration.count(), 2 * a.duration.count());
  for (const auto& [key, mc] : parent.memcpys) EXPECT_EQ(m.memcpys.at(key).total_bytes, 2 * mc.total_bytes);
  for (const auto& [key, n] : parent.nvtx_ranges) EXPECT_EQ(m.nvtx_ranges.at(key).kernels, 2 * n.kernels);
  for (const auto& s : parent.sequences) {
    bool found = false;
    for (const auto& ms : m.sequences)
      if (ms.kernels == s.kernels) {
        EXPECT_EQ(ms.count, 2 * s.count);
        found = true;
      }
    EXPECT_TRUE(found);
  }
  // Busy time of overlapping processes is clipped to the joint window.
  EXPECT_LE(m.timeline.kernel_busy_ns, m.timeline.last_gpu_ns - m.timeline.first_gpu_ns);
}

TEST(ProfileStore, StoresEveryPartAndReadsTheSameProfileBack) {
  test::TempDir dir;
  store::Db db(dir.file("p.db"));
  EXPECT_EQ(db.schema_version(), store::latest_schema_version());
  ProfileData p = ProfileData::from_json(fixture_json());
  fill_demangled(p);
  PmSample s1{p.timeline.first_gpu_ns, 0.5, 0.4, 0.1, 1e11, 5e10},
      s2{p.timeline.first_gpu_ns + 1000, 0.6, 0.5, 0.2, 2e11, 6e10};
  p.pm_samples = {s1, s2};
  Diagnosis d{"launch-bound", "high", "the GPU waits for launches", "37 % of launches", "use CUDA graphs", 1e6};
  p.diagnoses.push_back(d);
  KernelCounters c;
  c.kernel = p.kernels.begin()->second.name;
  c.instances = 3;
  c.flops["fp32"] = 1e9;
  c.tensor_flops["tf32"] = 4e9;
  p.counters.push_back(c);
  std::int64_t run = store::begin_run(db, {"profile", {"roofline", "profile", "--", "x"}});
  std::int64_t id = store_profile(db, run, p, "60/train");
  EXPECT_EQ(load_profile(db, id).to_json(), p.to_json());
  auto count = [&](const char* sql) {
    auto st = db.prepare(sql);
    st.bind(1, id);
    EXPECT_TRUE(st.step());
    return st.i64(0);
  };
  EXPECT_EQ(count("SELECT COUNT(*) FROM profile_kernels WHERE profile_id=?"),
            static_cast<std::int64_t>(p.kernels.size()));
  EXPECT_EQ(count("SELECT COUNT(*) FROM profile_apis WHERE profile_id=?"), static_cast<std::int64_t>(p.apis.size()));
  EXPECT_EQ(count("SELECT COUNT(*) FROM profile_memcpys WHERE profile_id=?"),
            static_cast<std::int64_t>(p.memcpys.size()));
  EXPECT_EQ(count("SELECT COUNT(*) FROM profile_samples WHERE profile_id=?"), 2);
  EXPECT_EQ(count("SELECT COUNT(*) FROM profile_diagnoses WHERE profile_id=?"), 1);
  EXPECT_EQ(count("SELECT SUM(instances) FROM profile_kernels WHERE profile_id=?"), static_cast<std::int64_t>([&] {
              std::uint64_t n = 0;
              for (const auto& [key, k] : p.kernels) n += k.duration.count();
              return n;
            }()));
  {
    auto st = db.prepare("SELECT flops, tensor_flops FROM profile_counters WHERE profile_id=?");
    st.bind(1, id);
    ASSERT_TRUE(st.step());
    EXPECT_EQ(st.f64(0), 1e9);
    EXPECT_EQ(st.f64(1), 4e9);
  }
  auto rows = list_profiles(db, run);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].label, "60/train");
  EXPECT_NEAR(rows[0].busy_fraction, p.timeline.busy_fraction(), 1e-12);
  EXPECT_THROW(load_profile(db, id + 1), Error);
  // Deleting the run deletes its profiles and their rows.
  db.exec("DELETE FROM runs WHERE id=" + std::to_string(run));
  EXPECT_EQ(count("SELECT COUNT(*) FROM profile_kernels WHERE profile_id=?"), 0);
}

TEST(ProfileSummary, PmSamplingRowsAndCounterTable) {
  ProfileData p = ProfileData::from_json(fixture_json());
  std::mt19937_64 rng(std::random_device{}());
  std::uniform_real_distribution<double> u(0, 1);
  double rd = 0, wr = 0, sm = 0;
  for (int i = 0; i < 500; ++i) {
    PmSample s{p.timeline.first_gpu_ns + static_cast<std::uint64_t>(i) * 100'000,
               u(rng),
               u(rng),
               u(rng),
               3e12 * u(rng),
               1e12 * u(rng)};
    rd += s.dram_read_bps / 500;
    wr += s.dram_write_bps / 500;
    sm += s.sm_active / 500;
    p.pm_samples.push_back(s);
  }
  p.pm_interval_ns = 100'000;
  KernelCounters c;
  c.kernel = p.kernels.begin()->second.name;
  c.instances = 2;
  c.duration_ns = 20'000;
  c.flops["fp32"] = 3e6;
  c.tensor_flops["tf32"] = 1e7;
  c.dram_read_bytes = 4e6;
  c.dram_write_bytes = 1e6;
  c.achieved_occupancy = 0.5;
  p.counters.push_back(c);
  Report r;
  add_profile_tables(r, p, {});
  const Table& ut = table(r, "utilization");
  auto row = [&](const std::string& metric) -> const std::vector<Cell>& {
    for (const auto& x : ut.rows())
      if (std::get<std::string>(x[col(ut, "metric")]) == metric) return x;
    throw std::runtime_error("no row " + metric);
  };
  EXPECT_NEAR(num(row("DRAM bandwidth - r")[col(ut, "value")]), rd * 1e-9, 1e-9);
  EXPECT_NEAR(num(row("DRAM bandwidth - r")[col(ut, "pct_of_peak")]), 100 * rd / 3.35e12, 1e-9);  // the fixture's peak
  EXPECT_NEAR(num(row("DRAM bandwidth - w")[col(ut, "value")]), wr * 1e-9, 1e-9);
  EXPECT_NEAR(num(row("SM active")[col(ut, "value")]), 100 * sm, 1e-9);
  const Table& ct = table(r, "counters");
  ASSERT_EQ(ct.rows().size(), 1u);
  EXPECT_NEAR(num(ct.rows()[0][col(ct, "intensity")]), 13e6 / 5e6, 1e-12);
  EXPECT_NEAR(num(ct.rows()[0][col(ct, "gflops")]), 13e6 / 20e-6 * 1e-9, 1e-9);
  EXPECT_NEAR(num(ct.rows()[0][col(ct, "gbps")]), 5e6 / 20e-6 * 1e-9, 1e-9);
  EXPECT_NEAR(num(ct.rows()[0][col(ct, "avg_ns")]), 10'000, 1e-9);
}

// The lecture's polynomial kernel under --counters (2^26 threads, k = 100): its
// one HFMA2.MMA register move per thread reads as 0.268 GFLOP of FP16; the
// table shows the 13.422 GFLOP of FP32 work and its intensity, as
// docs/counters.md says, not 13.690 and 26.55.
TEST(ProfileSummary, CounterTableLeavesRegisterMovesOutOfWorkFlops) {
  ProfileData p;
  KernelCounters c;
  c.kernel = "compute_k_terms";
  c.instances = 1;
  c.duration_ns = 1e6;
  const double n = double(1 << 26);
  c.flops["fp32"] = 2 * n * 100;
  c.flops["fp16"] = 4 * n;
  c.raw[prof::metric::kThreadsLaunched] = n;
  c.dram_read_bytes = 4 * n;
  c.dram_write_bytes = 4 * n * 0.2902;
  p.counters.push_back(c);
  Report r;
  add_profile_tables(r, p, {});
  const Table& ct = table(r, "counters");
  ASSERT_EQ(ct.rows().size(), 1u);
  EXPECT_NEAR(num(ct.rows()[0][col(ct, "gflop_cuda")]), 2 * n * 100 * 1e-9, 1e-9);
  EXPECT_NEAR(num(ct.rows()[0][col(ct, "intensity")]), 2 * n * 100 / c.dram_bytes(), 1e-9);
  bool said = false;
  for (const auto& note : ct.notes()) said |= note.find("register moves") != std::string::npos;
  EXPECT_TRUE(said);
}

// A --counters run whose launches were all replayed (no timestamps): the kernel
// table still lists them with their measured time, and the rules that read the
// timeline stay off with the reason, instead of "GPU idle 100%".
TEST(ProfileSummary, CountersRunTimesReplayedLaunchesAndKeepsTimelineRulesOff) {
  ProfileData p;
  p.timeline.process_start_ns = 1'000'000'000;
  p.timeline.process_end_ns = 2'410'000'000;  // 1.41 s
  p.timeline.first_gpu_ns = 1'000'000'000;
  p.timeline.last_gpu_ns = 2'410'000'000;
  p.timeline.largest_gaps.push_back({1'000'000'000, 2'410'000'000});
  p.timeline.gap_histogram[">10ms"] = 1;
  p.timeline.gap_ns_histogram[">10ms"] = 1'410'000'000;
  p.wall_ns = 1.41e9;
  ProfileData::from_json(p.to_json());  // the new field round-trips (below)
  for (int i = 0; i < 14; ++i) {
    const std::string name = "kernel_" + std::to_string(i);
    p.untimed_launches[name] = 1;
    KernelCounters c;
    c.kernel = name;
    c.instances = 1;
    c.duration_ns = 1000.0 * (i + 1);
    c.flops["fp32"] = 1e6;
    c.dram_read_bytes = 1e5;
    p.counters.push_back(c);
  }
  EXPECT_EQ(p.time_replayed_launches(), 14u);
  EXPECT_EQ(p.kernels.size(), 14u);
  EXPECT_DOUBLE_EQ(p.kernels.at(std::string("kernel_3") + '\x1f').duration.total(), 4000.0);
  const ProfileData q = ProfileData::from_json(p.to_json());
  EXPECT_EQ(q.untimed_launch_count(), 14u);
  p.diagnoses = diagnose(p);
  bool off = false;
  for (const auto& d : p.diagnoses) {
    EXPECT_NE(d.rule, "host-starvation") << d.evidence;
    EXPECT_NE(d.rule, "launch-bound") << d.evidence;
    off |= d.rule == "timeline-rules-off";
  }
  EXPECT_TRUE(off);
  Report r;
  add_profile_tables(r, p, {});
  const Table& kt = table(r, "kernels");
  EXPECT_EQ(kt.rows().size(), 14u);
  bool said = false;
  for (const auto& note : kt.notes()) said |= note.find("replayed by --counters") != std::string::npos;
  EXPECT_TRUE(said);
}

// PM sampling that stopped early (1,022 samples every 20 us from 0.711 s while
// kernels ran to 0.887 s): the utilization rows say they cover part of the run.
TEST(ProfileSummary, PmSamplesThatStopEarlySaySo) {
  ProfileData p;
  p.timeline.process_start_ns = 1'000'000'000;
  p.timeline.first_gpu_ns = p.timeline.process_start_ns + 700'000'000;
  p.timeline.last_gpu_ns = p.timeline.process_start_ns + 887'000'000;
  p.timeline.kernel_busy_ns = p.timeline.gpu_busy_ns = 100'000'000;
  p.pm_interval_ns = 20'000;
  for (int i = 0; i < 1022; ++i)
    p.pm_samples.push_back({p.timeline.process_start_ns + 711'000'000 + std::uint64_t(i) * 20'000, 0.5, 0.4, 0.1, 1e12,
                            1e11});
  Report r;
  add_profile_tables(r, p, {});
  bool warned = false;
  for (const auto& w : r.warnings()) warned |= w.find("cover 0.711-0.731 s, but GPU work ran 0.700-0.887 s") != std::string::npos;
  EXPECT_TRUE(warned) << ::testing::PrintToString(r.warnings());
  // Samples over the whole window: no warning.
  p.pm_samples.clear();
  for (int i = 0; i <= 9350; ++i)
    p.pm_samples.push_back({p.timeline.first_gpu_ns + std::uint64_t(i) * 20'000, 0.5, 0.4, 0.1, 1e12, 1e11});
  Report ok;
  add_profile_tables(ok, p, {});
  for (const auto& w : ok.warnings()) EXPECT_EQ(w.find("PM samples cover"), std::string::npos) << w;
}

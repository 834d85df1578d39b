// Diagnosis rules on recorded profiles (tests/data/profiles/diag_*.json, made
// by diag_generate.py) and on small profiles built here: which rules fire,
// which do not, and the numbers their evidence quotes.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "roofline/profiler/diagnosis.hpp"

using namespace roofline;
using namespace roofline::prof;

namespace {

ProfileData fixture(const std::string& name) {
  std::ifstream in(std::string(ROOFLINE_TEST_DATA) + "/profiles/" + name + ".json");
  EXPECT_TRUE(in.good()) << name;
  return ProfileData::from_json(nlohmann::json::parse(in));
}

const Diagnosis* find(const std::vector<Diagnosis>& ds, const std::string& rule) {
  for (const auto& d : ds)
    if (d.rule == rule) return &d;
  return nullptr;
}

std::set<std::string> rules(const std::vector<Diagnosis>& ds) {
  std::set<std::string> s;
  for (const auto& d : ds) s.insert(d.rule);
  return s;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// "14,243" as the evidence writes counts.
std::string grouped(std::uint64_t n) {
  std::string d = std::to_string(n), s;
  for (size_t i = 0; i < d.size(); ++i) {
    if (i && (d.size() - i) % 3 == 0) s += ',';
    s += d[i];
  }
  return s;
}

model::Roofline a100() {
  using model::CeilingKind;
  using model::Source;
  model::Roofline r("NVIDIA A100-SXM4-80GB");
  r.add({"fp32.cuda", "FP32 CUDA cores", CeilingKind::Compute, 19.5e12, Source::Datasheet, "fp32", "cuda", ""});
  r.add({"tf32.tensor", "TF32 tensor cores", CeilingKind::Compute, 156e12, Source::Datasheet, "tf32", "tensor", ""});
  r.add({"dram", "DRAM", CeilingKind::Memory, 2.0e12, Source::Datasheet, "", "dram", ""});
  return r;
}

void expect_sorted_and_well_formed(const std::vector<Diagnosis>& ds) {
  static const std::set<std::string> severities = {"high", "medium", "low", "info"};
  std::map<std::string, std::string> titles;  // by rule id
  for (const auto& r : diagnosis_rules()) titles[r.id] = r.title;
  for (size_t i = 0; i < ds.size(); ++i) {
    EXPECT_TRUE(titles.count(ds[i].rule)) << ds[i].rule;
    EXPECT_EQ(ds[i].title, titles[ds[i].rule]) << "a finding's title is its rule's row";
    EXPECT_TRUE(severities.count(ds[i].severity)) << ds[i].severity;
    EXPECT_FALSE(ds[i].evidence.empty());
    EXPECT_FALSE(ds[i].suggestion.empty());
    if (i) EXPECT_GE(ds[i - 1].impact_ns, ds[i].impact_ns);
  }
}

}  // namespace

TEST(Diagnosis, EagerMlpTrainingLikeSeed000) {
  ProfileData p = fixture("diag_mlp_eager");
  auto ds = diagnose(p);
  expect_sorted_and_well_formed(ds);
  auto fired = rules(ds);
  for (const char* r : {"waiting-on-data", "host-starvation", "launch-bound", "pageable-memcpy", "fp32-no-tensor-cores",
                        "fusion-candidates", "low-utilization-small-batch"})
    EXPECT_TRUE(fired.count(r)) << r;
  for (const char* r :
       {"blocking-sync", "sync-memcpy", "memory-bound-low-bandwidth", "compute-bound-below-peak", "no-gpu-work"})
    EXPECT_FALSE(fired.count(r)) << r;

  // The data loader's gaps dominate: 548 batches, each followed by a long gap.
  const Diagnosis* data = find(ds, "waiting-on-data");
  ASSERT_TRUE(data);
  EXPECT_EQ(data->severity, "high");
  EXPECT_TRUE(has(data->evidence, grouped(p.memcpys.at("HtoD").duration.count()) + " host-to-device copies"))
      << data->evidence;
  EXPECT_TRUE(has(data->evidence,
                  grouped(p.timeline.gap_histogram.at(">10ms") + p.timeline.gap_histogram.at("1-10ms")) + " GPU gaps"));
  EXPECT_DOUBLE_EQ(data->impact_ns, static_cast<double>(p.timeline.gap_ns_histogram.at("1-10ms") +
                                                        p.timeline.gap_ns_histogram.at(">10ms")));

  // Launch statistics: the launches of kernels shorter than their launch call, counted from the fixture.
  const Diagnosis* lb = find(ds, "launch-bound");
  ASSERT_TRUE(lb);
  std::uint64_t total = 0, shorter = 0;
  for (const auto& [k, l] : p.launches) {
    total += l.kernel_ns.count();
    if (l.kernel_ns.mean() < l.api_ns.mean()) shorter += l.kernel_ns.count();
  }
  EXPECT_GT(shorter, total / 2);
  EXPECT_TRUE(has(lb->evidence, grouped(shorter) + " of " + grouped(total) + " launches")) << lb->evidence;
  EXPECT_TRUE(has(lb->suggestion, "CUDA graph"));

  // The FP32 GEMMs are named, and the counters confirm the one they cover.
  const Diagnosis* fp32 = find(ds, "fp32-no-tensor-cores");
  ASSERT_TRUE(fp32);
  EXPECT_TRUE(has(fp32->evidence, "ampere_sgemm_32x32_sliced1x4_tn")) << fp32->evidence;
  EXPECT_TRUE(has(fp32->evidence, "counters confirm it for 1"));
  EXPECT_TRUE(has(fp32->suggestion, "allow_tf32"));
  double sgemm = 0;
  for (const auto& [key, k] : p.kernels)
    if (k.name.find("sgemm") != std::string::npos)
      sgemm += k.duration.total();  // gemmSN: tensor-core use not in its name
  EXPECT_NEAR(fp32->impact_ns, sgemm, 1.0);

  // Fusion: the add -> ReLU chain, not the GEMM -> add one.
  const Diagnosis* fu = find(ds, "fusion-candidates");
  ASSERT_TRUE(fu);
  EXPECT_TRUE(has(fu->evidence, "CUDAFunctor_add")) << fu->evidence;
  EXPECT_TRUE(has(fu->evidence, "launch_clamp_scalar"));
  EXPECT_FALSE(has(fu->evidence, "sgemm"));
  EXPECT_TRUE(has(fu->evidence, "938 times"));

  const Diagnosis* pg = find(ds, "pageable-memcpy");
  ASSERT_TRUE(pg);
  EXPECT_TRUE(has(pg->evidence, "1,096 of 1,096 HtoD copies (100%)")) << pg->evidence;

  const Diagnosis* sb = find(ds, "low-utilization-small-batch");
  ASSERT_TRUE(sb);
  EXPECT_TRUE(has(sb->evidence, "108 SMs")) << sb->evidence;  // from the device name
}

TEST(Diagnosis, CountersAndARooflineJudgeKernelsAgainstTheirRoof) {
  ProfileData p = fixture("diag_mlp_eager");
  DiagnosisOptions o;
  o.roofline = a100();
  auto ds = diagnose(p, o);
  const Diagnosis* mem = find(ds, "memory-bound-low-bandwidth");
  ASSERT_TRUE(mem);
  // The add kernel: 10 x 768 KiB in 22.8 us, about 345 GB/s of 2 TB/s.
  EXPECT_TRUE(has(mem->evidence, "CUDAFunctor_add")) << mem->evidence;
  EXPECT_TRUE(has(mem->evidence, "345 GB/s of 2.00 TB/s")) << mem->evidence;
  // Judged over every instance in the profile, not only the 10 counted.
  EXPECT_GT(mem->impact_ns, 1e6);
  // The threshold is an option: at 10% of the roof the kernel (17%) passes.
  o.low_efficiency = 0.1;
  EXPECT_FALSE(find(diagnose(p, o), "memory-bound-low-bandwidth"));
}

TEST(Diagnosis, DataStarvedRun) {
  ProfileData p = fixture("diag_data_starved");
  auto ds = diagnose(p);
  expect_sorted_and_well_formed(ds);
  auto fired = rules(ds);
  EXPECT_TRUE(fired.count("waiting-on-data"));
  EXPECT_TRUE(fired.count("host-starvation"));
  EXPECT_TRUE(fired.count("pageable-memcpy"));
  // Its kernels are long tensor-core kernels: none of the kernel-side rules.
  for (const char* r : {"launch-bound", "fp32-no-tensor-cores", "fusion-candidates", "low-utilization-small-batch",
                        "blocking-sync", "sync-memcpy"})
    EXPECT_FALSE(fired.count(r)) << r;
  const Diagnosis* hs = find(ds, "host-starvation");
  ASSERT_TRUE(hs);
  EXPECT_EQ(hs->severity, "high");
  EXPECT_TRUE(has(hs->evidence, "200 gaps of 1 ms or more hold 38.0 s")) << hs->evidence;
  EXPECT_TRUE(has(find(ds, "waiting-on-data")->evidence, "190 ms of GPU idle per gap"));
  EXPECT_TRUE(has(find(ds, "pageable-memcpy")->evidence, "400 of 400 HtoD copies"));
}

TEST(Diagnosis, HealthyLargeGemmRunHasNothingSerious) {
  ProfileData p = fixture("diag_healthy_gemm");
  DiagnosisOptions o;
  model::Roofline r("H100");
  r.add({"bf16.tensor", "BF16 tensor cores", model::CeilingKind::Compute, 989e12, model::Source::Datasheet, "bf16",
         "tensor", ""});
  r.add({"dram", "DRAM", model::CeilingKind::Memory, 3.35e12, model::Source::Datasheet, "", "dram", ""});
  o.roofline = r;
  auto ds = diagnose(p, o);
  expect_sorted_and_well_formed(ds);
  for (const auto& d : ds) EXPECT_NE(d.severity, "high") << d.rule << ": " << d.evidence;
  auto fired = rules(ds);
  // One final cudaDeviceSynchronize that waits 9.6 s for queued work is correct, not blocking.
  for (const char* r2 : {"blocking-sync", "launch-bound", "host-starvation", "fp32-no-tensor-cores", "pageable-memcpy",
                         "fusion-candidates", "compute-bound-below-peak"})
    EXPECT_FALSE(fired.count(r2)) << r2;
}

TEST(Diagnosis, SynchronisingAfterEveryKernel) {
  ProfileData p = fixture("diag_sync_every_kernel");
  auto ds = diagnose(p);
  expect_sorted_and_well_formed(ds);
  ASSERT_FALSE(ds.empty());
  EXPECT_EQ(ds[0].rule, "blocking-sync");
  EXPECT_TRUE(has(ds[0].evidence, "cudaDeviceSynchronize: 20,000 calls")) << ds[0].evidence;
  EXPECT_TRUE(has(ds[0].evidence, "1.0 per kernel launch"));
  // The cost is the GPU idle the waits leave, not the waiting itself.
  double idle = static_cast<double>(p.timeline.last_gpu_ns - p.timeline.first_gpu_ns - p.timeline.gpu_busy_ns);
  EXPECT_NEAR(ds[0].impact_ns, idle, 1.0);
  EXPECT_NE(ds[0].severity, "info");
  auto fired = rules(ds);
  EXPECT_TRUE(fired.count("sync-memcpy"));    // its two cudaMemcpy calls
  EXPECT_FALSE(fired.count("launch-bound"));  // busy 70%: not launch-bound
  EXPECT_FALSE(fired.count("host-starvation"));
}

TEST(Diagnosis, ThresholdsAreOptions) {
  ProfileData p = fixture("diag_mlp_eager");
  DiagnosisOptions o;
  o.busy_low = 0.005;  // below this run's busy fraction (0.9%)
  auto fired = rules(diagnose(p, o));
  EXPECT_FALSE(fired.count("launch-bound"));
  EXPECT_FALSE(fired.count("low-utilization-small-batch"));
  o = {};
  o.fp32_matmul_share = 0.5;  // the FP32 GEMMs hold 41% of kernel time
  EXPECT_FALSE(rules(diagnose(p, o)).count("fp32-no-tensor-cores"));
  o = {};
  o.sm_count = 8;  // a GPU this small is filled by most launches
  EXPECT_FALSE(rules(diagnose(p, o)).count("low-utilization-small-batch"));
}

// NCCL's kernels launch one block per channel by design and mostly wait for
// the other ranks: the small-batch rule does not count them, even mangled.
TEST(Diagnosis, CollectivesAreNotSmallBatchKernels) {
  ProfileData p = fixture("diag_mlp_eager");
  ASSERT_TRUE(rules(diagnose(p)).count("low-utilization-small-batch"));
  for (auto& [key, k] : p.kernels)
    if (static_cast<std::uint64_t>(k.grid[0]) * k.grid[1] * k.grid[2] < 108)
      k.name = "_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE";
  EXPECT_FALSE(rules(diagnose(p)).count("low-utilization-small-batch"));
}

TEST(Diagnosis, CountersShowingTensorFlopsOverruleTheName) {
  ProfileData p = fixture("diag_mlp_eager");
  for (auto& c : p.counters)
    if (c.kernel == "ampere_sgemm_32x32_sliced1x4_tn") c.tensor_flops["tf32"] = 1e9;
  auto ds = diagnose(p);
  const Diagnosis* d = find(ds, "fp32-no-tensor-cores");
  ASSERT_TRUE(d);
  EXPECT_TRUE(d->evidence.find("1 kernel(s) left out") != std::string::npos) << d->evidence;
  EXPECT_FALSE(has(d->evidence.substr(0, d->evidence.find("largest")), "ampere_sgemm_32x32_sliced1x4_tn"));
}

TEST(Diagnosis, OlderProfilesWithoutGapTimesGiveBounds) {
  ProfileData p = fixture("diag_data_starved");
  p.timeline.gap_ns_histogram.clear();  // as written before the field existed
  // The bound (about 5 s of the 58 s window) is below the default 10% share.
  EXPECT_FALSE(find(diagnose(p), "host-starvation"));
  DiagnosisOptions o;
  o.starvation_share = 0.05;
  auto ds = diagnose(p, o);
  const Diagnosis* hs = find(ds, "host-starvation");
  ASSERT_TRUE(hs);
  EXPECT_TRUE(has(hs->evidence, "hold at least")) << hs->evidence;
  // 200 gaps over 10 ms: at least the 16 listed ones plus 184 x 10 ms.
  double listed = 0;
  for (const auto& g : p.timeline.largest_gaps) listed += static_cast<double>(g.end_ns - g.start_ns);
  EXPECT_NEAR(hs->impact_ns, listed + 184 * 10e6, 1.0);
}

TEST(Diagnosis, LaunchCallsAreTheAggregatorsLaunchApis) {
  // Without launch records, launch-bound compares kernels with the mean time of
  // the launch calls, chosen by the same predicate as the aggregator's: a
  // legacy cuLaunchGrid counts as cudaLaunchKernel does.
  ProfileData p = fixture("diag_mlp_eager");
  p.launches.clear();
  const auto before = diagnose(p);
  const Diagnosis* modern = find(before, "launch-bound");
  ASSERT_TRUE(modern);
  ASSERT_TRUE(has(modern->evidence, "against a mean launch call of")) << modern->evidence;
  ApiSummary legacy = p.apis.at("cudaLaunchKernel");
  legacy.name = "cuLaunchGrid";
  p.apis.erase("cudaLaunchKernel");
  p.apis[legacy.name] = legacy;
  auto ds = diagnose(p);
  const Diagnosis* lb = find(ds, "launch-bound");
  ASSERT_TRUE(lb);
  EXPECT_EQ(lb->evidence, modern->evidence);
}

TEST(Diagnosis, EmptyProfileSaysSo) {
  ProfileData p;
  auto ds = diagnose(p);
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].rule, "no-gpu-work");
  EXPECT_EQ(ds[0].severity, "info");
}

TEST(Diagnosis, SeverityAndDeviceTables) {
  DiagnosisOptions o;
  EXPECT_EQ(severity_for(25, 100, o), "high");
  EXPECT_EQ(severity_for(6, 100, o), "medium");
  EXPECT_EQ(severity_for(2, 100, o), "low");
  EXPECT_EQ(severity_for(0.5, 100, o), "info");
  EXPECT_EQ(severity_for(5, 0, o), "info");
  EXPECT_EQ(sm_count_from_name("NVIDIA H100 80GB HBM3"), 132);
  EXPECT_EQ(sm_count_from_name("NVIDIA H100 PCIe"), 114);
  EXPECT_EQ(sm_count_from_name("NVIDIA A100-SXM4-80GB"), 108);
  EXPECT_EQ(sm_count_from_name("NVIDIA L40S"), 142);
  EXPECT_EQ(sm_count_from_name("Some Future GPU"), 0);
  EXPECT_EQ(sm_count_from_name("Tesla V100-SXM2-16GB"), 80);  // any GPU the hardware database knows
  // Every rule is documented with its condition.
  for (const auto& r : diagnosis_rules()) EXPECT_FALSE(r.when.empty()) << r.id;
  // One row per rule: ids are unique, each with a title.
  std::set<std::string> ids;
  for (const auto& r : diagnosis_rules()) {
    EXPECT_TRUE(ids.insert(r.id).second) << r.id;
    EXPECT_FALSE(r.title.empty()) << r.id;
  }
  EXPECT_EQ(ids.size(), 14u);
}

TEST(Diagnosis, RecordedProfilesSurviveAJsonRoundTrip) {
  // The fixtures are read with the reader the profiler's files go through;
  // writing them back and reading again must not change a finding.
  for (const char* f : {"diag_mlp_eager", "diag_data_starved", "diag_healthy_gemm", "diag_sync_every_kernel"}) {
    ProfileData p = fixture(f);
    ProfileData q = ProfileData::from_json(p.to_json());
    auto a = diagnose(p), b = diagnose(q);
    ASSERT_EQ(a.size(), b.size()) << f;
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].rule, b[i].rule);
      EXPECT_EQ(a[i].evidence, b[i].evidence);
    }
  }
}

// A 28-s BERT script: 30 eager calls, then torch.compile (reduce-overhead)
// builds its graphs for 5.91 s with no GPU work, then graph replays. The gap is
// a one-time phase, said as such; the steady state is not host starvation.
TEST(Diagnosis, AOneTimeCompilePhaseIsNotStarvation) {
  ProfileData p;
  const std::uint64_t t0 = 5'000'000'000;
  p.timeline.process_start_ns = t0 - 20'000'000'000;
  p.timeline.process_end_ns = t0 + 8'000'000'000;
  p.timeline.first_gpu_ns = t0;
  p.timeline.last_gpu_ns = t0 + 7'000'000'000;
  p.timeline.kernel_busy_ns = p.timeline.gpu_busy_ns = 360'000'000;
  p.timeline.largest_gaps = {{t0 + 550'000'000, t0 + 6'460'000'000}, {t0 + 200'000'000, t0 + 240'000'000}};
  p.timeline.gap_histogram = {{"<10us", 40000}, {"1-10ms", 10}, {">10ms", 2}};
  p.timeline.gap_ns_histogram = {{"<10us", 160'000'000}, {"1-10ms", 30'000'000}, {">10ms", 5'910'000'000 + 40'000'000}};
  KernelSummary k;
  k.name = "triton_per_fused_add_native_layer_norm_0";
  for (int i = 0; i < 40000; ++i) k.duration.add(9000);
  p.kernels[k.name + '\x1f'] = k;
  p.devices = {"NVIDIA H100 80GB HBM3"};
  auto found = diagnose(p);
  bool phase = false;
  for (const auto& d : found) {
    EXPECT_NE(d.rule, "host-starvation") << d.evidence;
    if (d.rule == "one-time-phase") {
      phase = true;
      EXPECT_NE(d.evidence.find("5.91 s"), std::string::npos) << d.evidence;
      EXPECT_EQ(d.severity, "info");
    }
  }
  EXPECT_TRUE(phase);
  // Without the one long gap the same idle in long gaps would be starvation.
  p.timeline.largest_gaps = {{t0 + 200'000'000, t0 + 240'000'000}};
  bool starved = false;
  for (const auto& d : diagnose(p)) starved |= d.rule == "host-starvation";
  EXPECT_TRUE(starved) << "the rule must still fire when no single gap explains the idle time";
}

// The metric -> FLOPs/bytes/occupancy derivation and the roofline placement,
// with counter values of the size the H100 reports for real kernels.
#include <gtest/gtest.h>

#include <cmath>

#include "roofline/profiler/metrics.hpp"
#include "roofline/profiler/range_profiler.hpp"

using namespace roofline;
using namespace roofline::prof;
namespace m = roofline::prof::metric;

namespace {

std::map<std::string, double> zero_cuda_core() {
  return {{m::kDadd, 0}, {m::kDmul, 0}, {m::kDfma, 0}, {m::kFadd, 0}, {m::kFmul, 0},
          {m::kFfma, 0}, {m::kHadd, 0}, {m::kHmul, 0}, {m::kHfma, 0}};
}

model::Ceiling compute(const char* id, const char* prec, const char* unit, double v) {
  model::Ceiling c;
  c.id = id;
  c.kind = model::CeilingKind::Compute;
  c.precision = prec;
  c.unit = unit;
  c.value = v;
  return c;
}
model::Ceiling memory(const char* id, const char* level, double v) {
  model::Ceiling c;
  c.id = id;
  c.kind = model::CeilingKind::Memory;
  c.unit = level;
  c.value = v;
  return c;
}
// The ceilings measured on the lent H100 (docs/gpu-machine.md).
model::Roofline h100() {
  model::Roofline r("H100");
  r.add(compute("fp32.cuda", "fp32", "cuda", 64.5e12));
  r.add(compute("bf16.tensor", "bf16", "tensor", 816e12));
  r.add(compute("tf32.tensor", "tf32", "tensor", 426e12));
  r.add(memory("dram", "dram", 3.00e12));
  r.add(memory("l2", "l2", 10e12));
  return r;
}

}  // namespace

TEST(Metrics, SeedReportFp32CountsGiveItsTotal) {
  // Seed 000 §2.4: fadd 763,904, fmul 772,096, ffma x2 = 30,968,064 -> 32,504,064 FLOPs.
  auto raw = zero_cuda_core();
  raw[m::kFadd] = 763904;
  raw[m::kFmul] = 772096;
  raw[m::kFfma] = 30968064 / 2;
  KernelCounters c = derive(raw, "ampere_sgemm_32x32_sliced1x4_tn");
  EXPECT_DOUBLE_EQ(c.flops.at("fp32"), 32504064);
  EXPECT_DOUBLE_EQ(c.flops.at("fp64"), 0);
  EXPECT_DOUBLE_EQ(c.flops.at("fp16"), 0);
  EXPECT_DOUBLE_EQ(c.total_flops(), 32504064);
  EXPECT_EQ(c.kernel, "ampere_sgemm_32x32_sliced1x4_tn");
}

TEST(Metrics, PackedHalfInstructionsCountBothLanes) {
  // 2^20 threads x 2048 iterations x 8 chains of HFMA2, plus some HADD2/HMUL2.
  auto raw = zero_cuda_core();
  raw[m::kHfma] = 17179869184.0;
  raw[m::kHadd] = 1000;
  raw[m::kHmul] = 500;
  KernelCounters c = derive(raw);
  EXPECT_DOUBLE_EQ(c.flops.at("fp16"), 4 * 17179869184.0 + 2 * 1000 + 2 * 500);
  EXPECT_DOUBLE_EQ(c.flops.at("fp32"), 0);
}

TEST(Metrics, DoublePrecisionUsesDaddDmulDfma) {
  auto raw = zero_cuda_core();
  raw[m::kDadd] = 10;
  raw[m::kDmul] = 20;
  raw[m::kDfma] = 30;
  EXPECT_DOUBLE_EQ(derive(raw).flops.at("fp64"), 10 + 20 + 60);
}

TEST(Metrics, TensorOpsAreFlopsNotInstructionsTimes512) {
  // A 6144^3 BF16 GEMM: 2*M*N*K tensor FLOPs; the tensor pipe issued far fewer
  // instructions, and 512 x that count (the seed's formula) is not the FLOPs.
  const double flops = 2.0 * 6144 * 6144 * 6144;
  auto raw = zero_cuda_core();
  raw[m::kTensorBf16] = flops;
  raw[m::kTensorTf32] = 0;
  raw[m::kTensorFp16] = 0;
  raw[m::kTensorPipeInst] = 113246208;
  raw[m::kDuration] = 600000;
  KernelCounters c = derive(raw);
  EXPECT_DOUBLE_EQ(c.tensor_flops.at("bf16"), flops);
  EXPECT_DOUBLE_EQ(c.total_flops(), flops);
  EXPECT_NE(c.total_flops(), 512 * raw[m::kTensorPipeInst]);
  auto d = dominant_work(c);
  EXPECT_EQ(d.precision, "bf16");
  EXPECT_EQ(d.unit, "tensor");
}

TEST(Metrics, PlainFp32KernelWithTensorPipeInstructionsHasNoTensorFlops) {
  // On Hopper a plain FP32 kernel reads one tensor-pipe instruction per warp.
  auto raw = zero_cuda_core();
  raw[m::kFfma] = 1 << 20;
  raw[m::kTensorPipeInst] = 32768;
  raw[m::kTensorBf16] = 0;
  raw[m::kTensorFp16] = 0;
  KernelCounters c = derive(raw);
  for (const auto& [p, v] : c.tensor_flops) EXPECT_EQ(v, 0) << p;
  EXPECT_DOUBLE_EQ(c.total_flops(), 2.0 * (1 << 20));
}

TEST(Metrics, AmpereFp16TensorOpsSumBothDestinations) {
  std::map<std::string, double> raw = {{m::kTensorFp16DstFp16, 1e9}, {m::kTensorFp16DstFp32, 3e9}};
  EXPECT_DOUBLE_EQ(derive(raw).tensor_flops.at("fp16"), 4e9);
  // When the aggregate exists (Hopper) it is used alone, never added to the split ones.
  raw[m::kTensorFp16] = 5e9;
  EXPECT_DOUBLE_EQ(derive(raw).tensor_flops.at("fp16"), 5e9);
}

TEST(Metrics, UnavailableMetricsAreAbsentNotZero) {
  // sm__ops_path_tensor_src_fp16_dst_fp32 reads n/a on GH100; a NaN or missing
  // value contributes nothing and the precision is not reported as measured.
  std::map<std::string, double> raw = {{m::kTensorBf16, 8e9}, {m::kTensorFp16DstFp32, std::nan("")}};
  KernelCounters c = derive(raw);
  EXPECT_EQ(c.tensor_flops.count("fp16"), 0u);
  EXPECT_EQ(c.tensor_flops.count("fp8"), 0u);
  EXPECT_DOUBLE_EQ(c.tensor_flops.at("bf16"), 8e9);
  EXPECT_EQ(c.raw.count(m::kTensorFp16DstFp32), 0u);  // NaN is not kept (JSON cannot hold it)
  auto missing = missing_metrics(raw, default_range_metrics(9, 0));
  EXPECT_NE(std::find(missing.begin(), missing.end(), m::kDuration), missing.end());
  EXPECT_EQ(std::find(missing.begin(), missing.end(), m::kTensorBf16), missing.end());
}

TEST(Metrics, BytesAndOccupancy) {
  std::map<std::string, double> raw = {
      {m::kDramRead, 67108864}, {m::kDramWrite, 60000000}, {m::kL2ReadSectors, 2097152}, {m::kL2WriteSectors, 2097152},
      {m::kOccupancy, 87.5},    {m::kDuration, 52000},     {"lts__t_bytes.sum", 4e8}};
  KernelCounters c = derive(raw);
  EXPECT_DOUBLE_EQ(c.dram_read_bytes, 67108864);
  EXPECT_DOUBLE_EQ(c.dram_write_bytes, 60000000);
  EXPECT_DOUBLE_EQ(c.l2_read_bytes, 2097152.0 * 32);  // sectors x 32, not lts__t_bytes
  EXPECT_DOUBLE_EQ(c.l2_write_bytes, 2097152.0 * 32);
  EXPECT_DOUBLE_EQ(c.achieved_occupancy, 0.875);
  EXPECT_DOUBLE_EQ(c.duration_ns, 52000);
  EXPECT_NEAR(dram_bandwidth(c), (67108864.0 + 60000000.0) / 52e-6, 1);
}

TEST(Metrics, AccumulateSumsCountsAndWeightsOccupancyByDuration) {
  std::map<std::string, double> a = {{m::kFfma, 100}, {m::kDuration, 1000}, {m::kOccupancy, 50}, {m::kDramRead, 10}};
  std::map<std::string, double> b = {{m::kFfma, 300}, {m::kDuration, 3000}, {m::kOccupancy, 100}, {m::kDramRead, 30}};
  KernelCounters total;
  accumulate(total, derive(a, "k"));
  accumulate(total, derive(b, "k"));
  EXPECT_EQ(total.instances, 2u);
  EXPECT_DOUBLE_EQ(total.flops.at("fp32"), 800);
  EXPECT_DOUBLE_EQ(total.duration_ns, 4000);
  EXPECT_DOUBLE_EQ(total.dram_read_bytes, 40);
  EXPECT_DOUBLE_EQ(total.achieved_occupancy, (0.5 * 1000 + 1.0 * 3000) / 4000);
  EXPECT_DOUBLE_EQ(total.raw.at(m::kFfma), 400);                                       // .sum adds up
  EXPECT_DOUBLE_EQ(total.raw.at(m::kOccupancy), (50.0 * 1000 + 100.0 * 3000) / 4000);  // others weighted
}

TEST(Metrics, AggregateGroupsByNameAndNvtxPathInFirstSeenOrder) {
  std::map<std::string, double> r = {{m::kFfma, 1}, {m::kDuration, 1}};
  auto out = aggregate({derive(r, "b", "train"), derive(r, "a"), derive(r, "b", "train"), derive(r, "b", "eval")});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].kernel, "b");
  EXPECT_EQ(out[0].nvtx_path, "train");
  EXPECT_EQ(out[0].instances, 2u);
  EXPECT_EQ(out[1].kernel, "a");
  EXPECT_EQ(out[2].nvtx_path, "eval");
}

TEST(Metrics, PlacesGemmAsComputeBoundUnderTheTensorRoof) {
  auto raw = zero_cuda_core();
  raw[m::kTensorBf16] = 2.0 * 6144 * 6144 * 6144;
  raw[m::kDramRead] = 3.2e8;
  raw[m::kDramWrite] = 7.5e7;
  raw[m::kDuration] = 600000;  // 0.6 ms -> 773 TFLOP/s
  KernelPlacement p = place_kernel(derive(raw), h100());
  ASSERT_TRUE(p.placed) << p.reason;
  EXPECT_EQ(p.compute_ceiling, "bf16.tensor");
  EXPECT_EQ(p.memory_ceiling, "dram");
  EXPECT_EQ(p.bound, "compute-bound");
  EXPECT_NEAR(p.dram.achieved, raw[m::kTensorBf16] / 600e-6, 1e6);
  EXPECT_NEAR(p.dram.ai, raw[m::kTensorBf16] / 3.95e8, 1e-6 * raw[m::kTensorBf16] / 3.95e8);
  EXPECT_GT(p.dram.efficiency, 0.9);
  ASSERT_TRUE(p.l2.has_value());
}

TEST(Metrics, PlacesCopyAsMemoryBoundAndTinyKernelAsLatencyBound) {
  auto raw = zero_cuda_core();
  raw[m::kDramRead] = raw[m::kDramWrite] = 536870912;
  raw[m::kDuration] = 400000;  // 2.68 TB/s of 3.0
  KernelPlacement copy = place_kernel(derive(raw), h100());
  ASSERT_TRUE(copy.placed);
  EXPECT_EQ(copy.work.precision, "");
  EXPECT_EQ(copy.compute_ceiling, "fp32.cuda");
  EXPECT_EQ(copy.bound, "memory-bound");
  EXPECT_NEAR(copy.dram.efficiency, 2 * 536870912.0 / 400e-6 / 3e12, 1e-9);

  raw[m::kDramRead] = 4096;
  raw[m::kDramWrite] = 4096;
  raw[m::kFfma] = 1024;
  raw[m::kDuration] = 2000;
  EXPECT_EQ(place_kernel(derive(raw), h100()).bound, "latency-bound");
}

TEST(Metrics, HalfCudaCoreWorkNeverUsesATensorRoof) {
  auto raw = zero_cuda_core();
  raw[m::kHfma] = 1e9;
  raw[m::kDuration] = 1e5;
  model::Roofline r = h100();  // no fp16/bf16 CUDA-core ceiling, but a bf16 tensor one
  KernelPlacement p = place_kernel(derive(raw), r);
  EXPECT_FALSE(p.placed);
  EXPECT_NE(p.reason.find("fp16 cuda"), std::string::npos) << p.reason;
  r.add(compute("bf16.cuda", "bf16", "cuda", 120e12));
  p = place_kernel(derive(raw), r);
  ASSERT_TRUE(p.placed);
  EXPECT_EQ(p.compute_ceiling, "bf16.cuda");
}

TEST(Metrics, NoDurationMeansNoPlacement) {
  auto raw = zero_cuda_core();
  raw[m::kFfma] = 10;
  KernelPlacement p = place_kernel(derive(raw), h100());
  EXPECT_FALSE(p.placed);
  EXPECT_FALSE(p.reason.empty());
}

TEST(Metrics, MetricListsPerChip) {
  auto hopper = default_range_metrics(9, 0).all();
  auto has = [](const std::vector<std::string>& v, const char* s) {
    return std::find(v.begin(), v.end(), s) != v.end();
  };
  EXPECT_TRUE(has(hopper, m::kTensorFp16));
  EXPECT_TRUE(has(hopper, m::kTensorFp8));
  EXPECT_FALSE(has(hopper, m::kTensorFp16DstFp32));  // n/a on GH100
  EXPECT_FALSE(has(hopper, m::kTensorPipeInst));     // never part of a FLOP count
  auto a100 = default_range_metrics(8, 0).all();
  EXPECT_TRUE(has(a100, m::kTensorFp16DstFp32));
  EXPECT_TRUE(has(a100, m::kTensorFp64));
  EXPECT_FALSE(has(a100, m::kTensorFp8));
  EXPECT_TRUE(has(default_range_metrics(8, 9).all(), m::kTensorFp8));
  for (const auto& name : hopper) EXPECT_NE(name.find('.'), std::string::npos) << name << " lacks a rollup";
  auto v = verification_metrics(9);
  EXPECT_TRUE(has(v, "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum"));
}

TEST(Metrics, ChipNamesToComputeCapability) {
  EXPECT_EQ(chip_compute_capability("GH100"), std::make_pair(9, 0));
  EXPECT_EQ(chip_compute_capability("GA100"), std::make_pair(8, 0));
  EXPECT_EQ(chip_compute_capability("GA102"), std::make_pair(8, 6));
  EXPECT_EQ(chip_compute_capability("AD102"), std::make_pair(8, 9));
  EXPECT_EQ(chip_compute_capability("TU104"), std::make_pair(7, 5));
  EXPECT_EQ(chip_compute_capability("gv100"), std::make_pair(7, 0));
  EXPECT_EQ(chip_compute_capability("GB100"), std::make_pair(10, 0));
}

namespace {
// The counters of kf_fma_f32 as the H100 read them (docs/counters.md): 2^20 threads,
// 2048 x 8 FFMA each, and one `HFMA2.MMA R3, -RZ, RZ, 0, 0` per thread (a register
// zeroed on the tensor pipe) that the hfma counter counts like any HFMA2.
std::map<std::string, double> fp32_fma_on_h100() {
  auto raw = zero_cuda_core();
  raw[m::kFfma] = 17179869184.0;
  raw[m::kHfma] = 1048576;
  raw[m::kThreadsLaunched] = 1048576;
  raw[m::kDramRead] = 33.5e6;
  raw[m::kDramWrite] = 16.2e6;
  raw[m::kDuration] = 560000;
  return raw;
}
}  // namespace

TEST(Metrics, HfmaRegisterMovesInAnFp32KernelAreNotFp16Work) {
  KernelCounters c = derive(fp32_fma_on_h100());
  EXPECT_DOUBLE_EQ(c.flops.at("fp16"), 4.0 * 1048576);  // the raw count stays, as ncu shows it
  EXPECT_DOUBLE_EQ(fp16_register_move_flops(c), 4.0 * 1048576);
  EXPECT_DOUBLE_EQ(work_flops(c), 2 * 17179869184.0);
  EXPECT_DOUBLE_EQ(c.total_flops(), 2 * 17179869184.0 + 4.0 * 1048576);
  EXPECT_EQ(dominant_work(c).precision, "fp32");
  EXPECT_DOUBLE_EQ(arithmetic_intensity(c), 2 * 17179869184.0 / (33.5e6 + 16.2e6));
  auto notes = counter_notes(c);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("compiler register moves"), std::string::npos) << notes[0];
  EXPECT_NE(notes[0].find("HFMA2.MMA"), std::string::npos) << notes[0];
}

TEST(Metrics, LightFp32KernelKeepsItsRoofDespiteMoreMovesThanWork) {
  // An elementwise FP32 add: one FADD per thread, and one zeroing HFMA2.MMA per
  // thread, whose 4 "FLOPs" outnumber the real work. It must stay an FP32 kernel.
  auto raw = zero_cuda_core();
  raw[m::kFadd] = 1 << 24;
  raw[m::kHfma] = 1 << 24;
  raw[m::kThreadsLaunched] = 1 << 24;
  raw[m::kDramRead] = 2.0 * 4 * (1 << 24);
  raw[m::kDramWrite] = 4.0 * (1 << 24);
  raw[m::kDuration] = 40000;
  KernelCounters c = derive(raw);
  EXPECT_EQ(dominant_work(c).precision, "fp32");
  EXPECT_DOUBLE_EQ(work_flops(c), double(1 << 24));
  KernelPlacement p = place_kernel(c, h100());
  ASSERT_TRUE(p.placed) << p.reason;
  EXPECT_EQ(p.compute_ceiling, "fp32.cuda");
  EXPECT_DOUBLE_EQ(p.dram.ai, 1.0 / 12);
}

TEST(Metrics, RealHalfWorkIsNeverTakenForRegisterMoves) {
  // half2_fma: 2^20 threads x 2048 x 8 HFMA2 plus the one zeroing move per thread.
  auto raw = zero_cuda_core();
  raw[m::kHfma] = 17179869184.0 + 1048576;
  raw[m::kThreadsLaunched] = 1048576;
  KernelCounters c = derive(raw);
  EXPECT_DOUBLE_EQ(fp16_register_move_flops(c), 0);
  EXPECT_EQ(dominant_work(c).precision, "fp16");
  EXPECT_TRUE(counter_notes(c).empty());
  // One HFMA2 per thread and nothing else (a half2 axpy) is work too: no other FLOPs.
  raw[m::kHfma] = 1048576;
  c = derive(raw);
  EXPECT_DOUBLE_EQ(fp16_register_move_flops(c), 0);
  EXPECT_EQ(dominant_work(c).precision, "fp16");
  // More than kMaxRegisterMovesPerThread per thread next to FP32 work: real FP16 work.
  raw[m::kHfma] = (kMaxRegisterMovesPerThread + 1) * 1048576;
  raw[m::kFfma] = 1e9;
  EXPECT_DOUBLE_EQ(fp16_register_move_flops(derive(raw)), 0);
}

TEST(Metrics, WithoutTheThreadCountMovesCannotBeTold) {
  auto raw = fp32_fma_on_h100();
  raw.erase(m::kThreadsLaunched);
  KernelCounters c = derive(raw);
  EXPECT_DOUBLE_EQ(fp16_register_move_flops(c), 0);
  EXPECT_DOUBLE_EQ(work_flops(c), c.total_flops());
  EXPECT_EQ(dominant_work(c).precision, "fp32");  // still the larger work here
}

TEST(Metrics, RegisterMovesSurviveAggregation) {
  KernelCounters total;
  accumulate(total, derive(fp32_fma_on_h100(), "kf_fma_f32"));
  accumulate(total, derive(fp32_fma_on_h100(), "kf_fma_f32"));
  EXPECT_DOUBLE_EQ(total.raw.at(m::kThreadsLaunched), 2.0 * 1048576);
  EXPECT_DOUBLE_EQ(fp16_register_move_flops(total), 2 * 4.0 * 1048576);
  EXPECT_DOUBLE_EQ(work_flops(total), 2 * 2 * 17179869184.0);
}

TEST(Metrics, MemoryMetricsComeFirstAndThreadsAreCollected) {
  for (auto [major, minor] : {std::pair{9, 0}, std::pair{8, 0}, std::pair{7, 5}}) {
    auto all = default_range_metrics(major, minor).all();
    ASSERT_GE(all.size(), 5u);
    EXPECT_EQ(all[1], m::kDramRead);
    EXPECT_EQ(all[2], m::kDramWrite);
    EXPECT_NE(std::find(all.begin(), all.end(), m::kThreadsLaunched), all.end());
  }
}

TEST(ReplayDramWarning, OnlyWhenDramWritesWereReadUnderReplay) {
  using roofline::prof::RangeProfilerStats;
  using roofline::prof::replay_dram_write_warning;
  RangeProfilerStats st;
  st.profiled = 3;
  st.passes = 7;
  st.dram_replayed = 2;
  const std::vector<std::string> with = {"gpu__time_duration.sum", "dram__bytes_write.sum"};
  const std::vector<std::string> without = {"gpu__time_duration.sum", "dram__bytes_read.sum"};
  std::string w = replay_dram_write_warning(st, with);
  EXPECT_NE(w.find("on 2 of 3 profiled kernel launches"), std::string::npos) << w;
  EXPECT_NE(w.find("7 passes"), std::string::npos) << w;
  EXPECT_NE(w.find("--metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum"), std::string::npos)
      << w;
  EXPECT_TRUE(replay_dram_write_warning(st, without).empty()) << "no DRAM writes collected";
  st.dram_replayed = 0;
  EXPECT_TRUE(replay_dram_write_warning(st, with).empty()) << "every record's DRAM counts came from a one-pass launch";
  st.dram_replayed = 2;
  st.passes = 1;
  EXPECT_TRUE(replay_dram_write_warning(st, with).empty()) << "one pass: no replay, exact";
  st.passes = 7;
  st.profiled = 0;
  EXPECT_TRUE(replay_dram_write_warning(st, with).empty()) << "nothing profiled";
}

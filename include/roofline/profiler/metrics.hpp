// Hardware-counter metrics for one kernel and what follows from them: the
// metric list to collect per chip, FLOPs per precision on CUDA cores and on
// tensor cores, DRAM and L2 bytes, achieved occupancy, and the kernel's place
// on a roofline. Plain C++ (no CUPTI): the range profiler and ncu's CSV both
// feed `derive()` with metric name -> value maps. docs/counters.md explains
// every formula and why the seed reports' formulas were wrong.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "roofline/model/roofline.hpp"
#include "roofline/profiler/profile_data.hpp"

namespace roofline::prof {

// Full metric names (base name + rollup), exactly as ncu and CUPTI spell them.
namespace metric {
inline constexpr const char* kDuration = "gpu__time_duration.sum";  // ns
inline constexpr const char* kSmClock = "sm__cycles_elapsed.avg.per_second";
// CUDA-core thread instructions whose predicates were all true.
inline constexpr const char* kDadd = "smsp__sass_thread_inst_executed_op_dadd_pred_on.sum";
inline constexpr const char* kDmul = "smsp__sass_thread_inst_executed_op_dmul_pred_on.sum";
inline constexpr const char* kDfma = "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum";
inline constexpr const char* kFadd = "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum";
inline constexpr const char* kFmul = "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum";
inline constexpr const char* kFfma = "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum";
// Half precision: one count per packed (x2) instruction, FP16 and BF16 together.
inline constexpr const char* kHadd = "smsp__sass_thread_inst_executed_op_hadd_pred_on.sum";
inline constexpr const char* kHmul = "smsp__sass_thread_inst_executed_op_hmul_pred_on.sum";
inline constexpr const char* kHfma = "smsp__sass_thread_inst_executed_op_hfma_pred_on.sum";
// Tensor-core math ops: already FLOPs (one FMA = 2), real (dense) operations.
inline constexpr const char* kTensorFp64 = "sm__ops_path_tensor_src_fp64.sum";
inline constexpr const char* kTensorTf32 = "sm__ops_path_tensor_src_tf32_dst_fp32.sum";
inline constexpr const char* kTensorFp16 = "sm__ops_path_tensor_src_fp16.sum";  // Hopper: both destinations
inline constexpr const char* kTensorFp16DstFp16 = "sm__ops_path_tensor_src_fp16_dst_fp16.sum";  // Ampere
inline constexpr const char* kTensorFp16DstFp32 = "sm__ops_path_tensor_src_fp16_dst_fp32.sum";  // Ampere (n/a on GH100)
inline constexpr const char* kTensorBf16 = "sm__ops_path_tensor_src_bf16_dst_fp32.sum";
inline constexpr const char* kTensorFp8 = "sm__ops_path_tensor_src_fp8.sum";
inline constexpr const char* kTensorInt8 = "sm__ops_path_tensor_src_int8.sum";
// Memory.
inline constexpr const char* kDramRead = "dram__bytes_read.sum";
inline constexpr const char* kDramWrite = "dram__bytes_write.sum";
inline constexpr const char* kL2ReadSectors = "lts__t_sectors_srcunit_tex_op_read.sum";
inline constexpr const char* kL2WriteSectors = "lts__t_sectors_srcunit_tex_op_write.sum";
inline constexpr const char* kOccupancy = "sm__warps_active.avg.pct_of_peak_sustained_active";  // %
// Threads the kernel launched: tells compiler register moves from FP16 work (below).
inline constexpr const char* kThreadsLaunched = "sm__threads_launched.sum";
// Only for checking (never used in a FLOP count): the seed reports' tensor formula.
inline constexpr const char* kTensorPipeInst = "sm__inst_executed_pipe_tensor.sum";
inline constexpr const char* kHfma2MmaInst = "sm__inst_executed_pipe_tensor_op_hmma_type_hfma2.sum";
}  // namespace metric

// FLOPs per counted instruction (docs/counters.md, "CUDA-core FLOPs").
inline constexpr double kFlopsPerAdd = 1, kFlopsPerMul = 1, kFlopsPerFma = 2;
// A packed half instruction works on two lanes: HADD2/HMUL2 = 2 FLOPs, HFMA2 = 4.
inline constexpr double kFlopsPerHalfAdd = 2, kFlopsPerHalfMul = 2, kFlopsPerHalfFma = 4;
// L2 sectors are 32 bytes.
inline constexpr double kL2SectorBytes = 32;
// nvcc for sm_90 sets registers to zero or to a constant with `HFMA2.MMA Rd, -RZ, RZ, 0, 0`
// (a multiply-add of zeros on the tensor pipe, used as a MOV). The hfma counter counts
// these like any HFMA2, and so does ncu: a plain FP32 kernel reads one per thread. A
// kernel whose FP16 CUDA-core FLOPs are at most 4 x threads x this many instructions,
// and that does other floating-point work, is taken to hold register moves only.
inline constexpr double kMaxRegisterMovesPerThread = 2;

struct MetricSet {
  std::vector<std::string> required;  // every supported chip has these; a missing one is an error
  std::vector<std::string> optional;  // collected where the chip has them (tensor paths differ by chip)
  std::vector<std::string> all() const;
};

// What to collect for a GPU of compute capability major.minor: the full list on
// Hopper (9.x) and later, a subset on Ampere/Ada (8.x: no FP8 on GA100, FP16
// tensor ops split by destination type), the CUDA-core part on Turing/Volta.
MetricSet default_range_metrics(int cc_major, int cc_minor = 0);
// Compute capability of a CUPTI chip name ("GH100" -> {9,0}, "GA102" -> {8,6});
// unknown names count as the newest known architecture.
std::pair<int, int> chip_compute_capability(const std::string& chip);
// Extra metrics that check the derivation on the device: sparsity variants of the
// tensor paths, HFMA2.MMA and tensor-pipe instruction counts, lts__t_bytes.
std::vector<std::string> verification_metrics(int cc_major);

// The counters of one kernel instance. `raw` holds the metric values as read;
// a metric absent from `raw` (or NaN there) was not available and counts as 0
// (it is listed by missing_metrics()).
KernelCounters derive(const std::map<std::string, double>& raw, const std::string& kernel = {},
                      const std::string& nvtx_path = {});
std::vector<std::string> missing_metrics(const std::map<std::string, double>& raw, const MetricSet& wanted);

// Adds one instance to a running total: counts and bytes add up, occupancy is
// averaged weighted by duration, raw ".sum" metrics add up and others are
// duration-weighted averages.
void accumulate(KernelCounters& total, const KernelCounters& one);
// Groups instances by kernel name and NVTX path, in order of first appearance.
std::vector<KernelCounters> aggregate(const std::vector<KernelCounters>& instances);

// FLOPs of the precision and unit that did the most work: e.g. {"bf16","tensor"}
// for a BF16 GEMM, {"fp16","cuda"} for half2 arithmetic (FP16 and BF16 CUDA-core
// work are one counter). Empty precision when the kernel did no FLOPs.
struct DominantWork {
  std::string precision;  // fp64 fp32 tf32 fp16 bf16 fp8 int8
  std::string unit;       // "cuda" or "tensor"
  double flops = 0;
};
// Register moves (kMaxRegisterMovesPerThread) never make "fp16"/"cuda" the dominant work.
DominantWork dominant_work(const KernelCounters& c);

// The FP16 CUDA-core FLOPs of `c` that are compiler register moves, not FP16 work
// (HFMA2.MMA with zero operands; see kMaxRegisterMovesPerThread): all of
// flops["fp16"] when the kernel launched `threads` threads (sm__threads_launched.sum
// in raw), those FLOPs are at most 4 x threads x kMaxRegisterMovesPerThread, and the
// kernel has FLOPs of another precision or unit; else 0. The raw flops["fp16"] is
// kept as read (it equals ncu's); only the derived figures below leave it out.
double fp16_register_move_flops(const KernelCounters& c);
// FLOPs that are work: total_flops() less register moves.
double work_flops(const KernelCounters& c);
// Remarks for reports about how to read a kernel's counters (empty when none),
// e.g. that its FP16 FLOPs are compiler register moves.
std::vector<std::string> counter_notes(const KernelCounters& c);

double arithmetic_intensity(const KernelCounters& c);  // work FLOPs / DRAM bytes (inf when no DRAM bytes)
double achieved_flops(const KernelCounters& c);        // work FLOP/s over the kernel's duration
double dram_bandwidth(const KernelCounters& c);        // bytes/s
double l2_bandwidth(const KernelCounters& c);          // bytes/s

// The kernel's place on a device's roofline: its work FLOPs against the compute
// ceiling of its dominant precision and unit (CUDA-core FP16 work may use a
// "bf16"/"cuda" ceiling: one counter covers both; never another unit's roof),
// DRAM bytes against the DRAM ceiling, and L2 bytes against the L2 ceiling when
// the roofline has one. A kernel without FLOPs sits on the slope under the
// FP32 CUDA-core roof.
struct KernelPlacement {
  bool placed = false;
  std::string reason;  // why not placed (no duration, no matching ceilings)
  DominantWork work;
  std::string compute_ceiling, memory_ceiling;  // ids of the ceilings used
  model::Placement dram;
  std::optional<model::Placement> l2;
  std::string bound;  // model::classify(dram): memory-, compute- or latency-bound
};
KernelPlacement place_kernel(const KernelCounters& c, const model::Roofline& roof, double latency_low = 0.2);

}  // namespace roofline::prof

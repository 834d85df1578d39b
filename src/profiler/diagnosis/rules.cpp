// The diagnosis rules, one row each: id, title, the condition in words, and
// the check (its own file). A new rule is a file with its check and a row
// here; docs/diagnosis.md describes each row.
#include "src/profiler/diagnosis/facts.hpp"

namespace roofline::prof::diag {

namespace {

// clang-format off
constexpr Rule kRules[] = {
  {"waiting-on-data", "GPU waits for input data between steps",
   "at least min_steps host-to-device copies and as many gaps of 1 ms or more (0.5 to 8 copies per gap), the "
   "gaps holding at least low_share of the run",
   waiting_on_data, /*empty_profile=*/false, /*reads_timeline=*/true},
  {"one-time-phase", "A one-time phase without GPU work (compiling, loading, warming up)",
   "one gap of at least 1 s, at least 5 times any other, starting in the first quarter of the GPU-active window; "
   "the timeline rules then judge the steady state without it",
   one_time_phase, /*empty_profile=*/false, /*reads_timeline=*/true},
  {"host-starvation", "GPU idle in long gaps: the host is not submitting work",
   "idle time in gaps >= 1 ms is at least starvation_share of the GPU-active window (a one-time phase left out)",
   host_starvation, /*empty_profile=*/false, /*reads_timeline=*/true},
  {"launch-bound", "Kernels are shorter than their launch: launch overhead dominates",
   "busy fraction < busy_low, idle in gaps < 1 ms at least low_share of the run, and >= short_launch_share of "
   "launches shorter than their launch call or mean kernel < small_kernel_ns",
   launch_bound, /*empty_profile=*/false, /*reads_timeline=*/true},
  {"blocking-sync", "Blocking synchronisation stalls the pipeline",
   "at least min_steps synchronise calls, taking >= sync_share of wall time or numbering >= sync_per_launch per "
   "launch, and the GPU is idle for at least low_share of the run",
   blocking_sync, /*empty_profile=*/false, /*reads_timeline=*/true},
  {"sync-memcpy", "Synchronous copies or memsets block the host",
   "any copy or memset issued by a synchronous API",
   sync_memcpy},
  {"pageable-memcpy", "Copies from pageable host memory",
   "any copy that touched pageable host memory",
   pageable_memcpy},
  {"fp32-no-tensor-cores", "FP32 GEMMs/convolutions run on CUDA cores, not tensor cores",
   "kernels decoded as FP32 GEMM/convolution without tensor cores hold >= fp32_matmul_share of kernel time "
   "(counters showing tensor FLOPs overrule the name)",
   fp32_no_tensor_cores},
  {"low-utilization-small-batch", "Kernels too small to fill the GPU",
   "busy fraction < busy_low and kernels with fewer blocks than SMs hold >= small_grid_share of kernel time "
   "(needs grid sizes and the SM count: sm_count, or a device name the hardware database knows)",
   small_batch, /*empty_profile=*/false, /*reads_timeline=*/true},
  {"fusion-candidates", "Chains of memory-bound elementwise kernels (fusion candidates)",
   "a recorded sequence of >= 2 elementwise kernels seen >= min_sequence_count times holding >= fusion_share of "
   "kernel time",
   fusion_candidates},
  {"memory-bound-low-bandwidth", "Memory-bound kernels far below the memory bandwidth",
   "with counters and a roofline: memory-bound kernels below low_efficiency of the bandwidth roof",
   memory_bound_low_bandwidth},
  {"compute-bound-below-peak", "Compute-bound kernels far below the compute peak",
   "with counters and a roofline: compute-bound kernels below low_efficiency of the compute roof",
   compute_below_peak},
  {"straggler", "One rank reaches the collectives last: the others wait for it",
   "a profile of >= 2 ranks with NCCL kernels, >= straggler_min_collectives of them per rank, where one rank's "
   "k-th collective starts last at >= straggler_share of them (and clearly more than its fair 1/ranks), the "
   "others' waits for it >= low_share of the GPU-active window",
   straggler},
  {"no-gpu-work", "No GPU work recorded",
   "no kernel, copy or memset in the profile",
   no_gpu_work, /*empty_profile=*/true},
};
// clang-format on

}  // namespace

std::span<const Rule> rules() { return kRules; }

}  // namespace roofline::prof::diag

// The tables `roofline profile` prints, from a ProfileData: the columns of
// nsys stats (cuda_gpu_kern_sum, cuda_api_sum, cuda_gpu_mem_time_sum,
// cuda_gpu_mem_size_sum, cuda_kern_exec_sum), seed 000's utilization table,
// GPU idle gaps, NVTX ranges, frequent kernel sequences and diagnoses. Every
// time is in nanoseconds, as in nsys.
#pragma once
#include <string>

#include "roofline/core/report.hpp"
#include "roofline/profiler/profile_data.hpp"

namespace roofline::prof {

struct SummaryOptions {
  bool full_names = false;  // whole demangled names instead of short ones
  size_t name_width = 80;   // columns for short names
  size_t top = 30;          // rows of the kernel, API and sequence tables (0: all)
  std::string label;        // "config" column of the utilization table
};

// Adds the profile's tables (ids: profile, kernels, cuda_api, gpu_mem_time,
// gpu_mem_size, launch, utilization, gaps, nvtx, sequences, diagnoses) and its
// warnings to `report`. Tables without data are left out.
void add_profile_tables(Report& report, const ProfileData& p, const SummaryOptions& opt);

// Fills KernelSummary::demangled where it is empty.
void fill_demangled(ProfileData& p);

// GPU utilization rows for seed 000's table, also used by the store.
struct Utilization {
  double kernel_busy = 0;         // fraction of the GPU-active window with a kernel running
  double gpu_busy = 0;            // ... with a kernel, copy or memset running
  double window_s = 0;            // the GPU-active window (first to last GPU activity)
  double start_s = 0, end_s = 0;  // window bounds, seconds from the process's start of tracing
};
Utilization activity_utilization(const ProfileData& p);

}  // namespace roofline::prof

// Diagnosis: rules over a ProfileData that name what slows a program down and
// the evidence for it (launch-bound, host starvation, pageable/synchronous
// copies, blocking synchronisation, FP32 matrix work off the tensor cores,
// small launches, waiting on data, fusable elementwise chains, kernels far
// under the roofline). Each rule has a stable id, explicit thresholds (below),
// evidence text with the numbers that triggered it, a suggestion, and an
// estimated impact (the time at stake) from which its severity follows.
// docs/diagnosis.md describes every rule.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "roofline/model/roofline.hpp"
#include "roofline/profiler/profile_data.hpp"

namespace roofline::prof {

struct DiagnosisOptions {
  // Severity from impact as a share of the run's wall time (the GPU-active
  // window when the wall time is unknown).
  double high_share = 0.20, medium_share = 0.05, low_share = 0.01;

  // launch-bound: the GPU is busy less than `busy_low` of its active window,
  // idle in short gaps (< 1 ms), and its kernels are short: at least
  // `short_launch_share` of launches are of kernels shorter than their launch
  // call, or the mean kernel is shorter than `small_kernel_ns`.
  double busy_low = 0.50;
  double short_launch_share = 0.50;
  double small_kernel_ns = 10e3;

  // host-starvation: idle time in gaps of 1 ms or more is at least this share
  // of the GPU-active window.
  double starvation_share = 0.10;

  // blocking-sync: synchronisation calls take this share of wall time, or
  // there are at least `sync_per_launch` of them per kernel launch.
  double sync_share = 0.10;
  double sync_per_launch = 0.5;

  // fp32-no-tensor-cores: FP32 GEMMs/convolutions on CUDA cores take at least
  // this share of kernel time.
  double fp32_matmul_share = 0.05;

  // low-utilization-small-batch: with the GPU busy < busy_low, kernels that
  // launch fewer blocks than the GPU has SMs take this share of kernel time.
  double small_grid_share = 0.50;
  int sm_count = 0;  // 0: from the device name, when the hardware database knows it

  // waiting-on-data / pageable / synchronous copies: a per-step pattern needs
  // at least this many host-to-device copies and long gaps.
  std::uint64_t min_steps = 10;

  // fusion-candidates: a chain of >= 2 elementwise kernels seen at least
  // `min_sequence_count` times holding at least `fusion_share` of kernel time.
  std::uint64_t min_sequence_count = 10;
  double fusion_share = 0.02;

  // memory-bound-low-bandwidth / compute-below-peak (need counters and a
  // roofline): kernels reaching less than `low_efficiency` of their roof,
  // among those with at least `min_kernel_share` of the counted kernel time.
  std::optional<model::Roofline> roofline;
  double low_efficiency = 0.50;

  // straggler: with one process per rank, one rank's collectives start last
  // at least this share of the time, over at least `straggler_min_collectives`.
  double straggler_share = 0.60;
  std::uint64_t straggler_min_collectives = 8;
  double min_kernel_share = 0.02;
};

struct RuleInfo {
  std::string id;
  std::string title;
  std::string when;  // the condition, in words, with the option names
};
// Every rule, in the order diagnose() runs them: the rows of the one table
// (src/profiler/diagnosis/rules.cpp) the findings take their ids and titles from.
const std::vector<RuleInfo>& diagnosis_rules();

// Runs every rule; the result is sorted by impact (largest first), then by
// rule order. An empty profile gives one "no-gpu-work" finding.
std::vector<Diagnosis> diagnose(const ProfileData& profile, const DiagnosisOptions& options = {});

// "high", "medium", "low" or "info" for `impact_ns` out of `base_ns`.
std::string severity_for(double impact_ns, double base_ns, const DiagnosisOptions& options);

// SMs of a GPU by its driver name, from the hardware database (the datasheet
// entries the name fits, when they agree): "NVIDIA H100 80GB HBM3" -> 132,
// "NVIDIA A100-SXM4-80GB" -> 108; 0 when the database does not know it.
int sm_count_from_name(const std::string& device_name);

}  // namespace roofline::prof

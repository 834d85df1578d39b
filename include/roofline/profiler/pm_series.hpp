// A PM-sampling time series in bounded memory. Samples arrive at the
// sampler's interval (100 us by default: 10000 a second); beyond `max_points`
// neighbouring points are averaged in pairs and the step doubles, so a long
// run keeps its whole timeline at a coarser step, and the mean over the run
// (what the utilization table shows) is unchanged by the merging.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "roofline/profiler/profile_data.hpp"

namespace roofline::prof {

class PmSeries {
 public:
  explicit PmSeries(size_t max_points = 20000);

  // Samples in time order, taken every `interval_ns`.
  void add(const std::vector<PmSample>& samples, double interval_ns);
  // The series so far (a last, partly filled point included) and its step.
  std::vector<PmSample> points() const;
  double step_ns() const { return interval_ns_ * static_cast<double>(group_); }
  std::uint64_t raw_samples() const { return raw_; }

 private:
  void halve();
  size_t max_;
  double interval_ns_ = 0;
  std::uint64_t group_ = 1;  // raw samples per point
  std::uint64_t raw_ = 0;
  std::vector<PmSample> points_;
  PmSample acc_{};  // sum of the raw samples of the point being filled
  std::uint64_t acc_n_ = 0;
};

}  // namespace roofline::prof

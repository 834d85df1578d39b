#include "roofline/profiler/pm_series.hpp"

#include <algorithm>

namespace roofline::prof {

namespace {
void accumulate(PmSample& into, const PmSample& s, double w = 1.0) {
  into.gr_active += w * s.gr_active;
  into.sm_active += w * s.sm_active;
  into.tensor_active += w * s.tensor_active;
  into.dram_read_bps += w * s.dram_read_bps;
  into.dram_write_bps += w * s.dram_write_bps;
}

PmSample scaled(const PmSample& sum, double n, std::uint64_t t) {
  PmSample p{};
  p.t_ns = t;
  accumulate(p, sum, 1.0 / n);
  return p;
}
}  // namespace

PmSeries::PmSeries(size_t max_points) : max_(std::max<size_t>(max_points, 2) & ~size_t{1}) {}

void PmSeries::add(const std::vector<PmSample>& samples, double interval_ns) {
  if (interval_ns > 0) interval_ns_ = interval_ns;
  for (const auto& s : samples) {
    ++raw_;
    if (acc_n_ == 0) acc_.t_ns = s.t_ns;  // a point is stamped with its first sample's time
    accumulate(acc_, s);
    if (++acc_n_ == group_) {
      points_.push_back(scaled(acc_, static_cast<double>(acc_n_), acc_.t_ns));
      acc_ = PmSample{};
      acc_n_ = 0;
      if (points_.size() >= max_) halve();
    }
  }
}

void PmSeries::halve() {
  std::vector<PmSample> half;
  half.reserve(points_.size() / 2 + 1);
  for (size_t i = 0; i + 1 < points_.size(); i += 2) {
    PmSample sum{};
    accumulate(sum, points_[i]);
    accumulate(sum, points_[i + 1]);
    half.push_back(scaled(sum, 2.0, points_[i].t_ns));
  }
  points_ = std::move(half);  // max_ is even: no point is left over
  group_ *= 2;
}

std::vector<PmSample> PmSeries::points() const {
  std::vector<PmSample> out = points_;
  if (acc_n_ > 0) out.push_back(scaled(acc_, static_cast<double>(acc_n_), acc_.t_ns));
  return out;
}

}  // namespace roofline::prof

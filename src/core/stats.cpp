#include "roofline/core/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace roofline {

double quantile_sorted(const std::vector<double>& s, double q) {
  if (s.empty()) return 0;
  double pos = q * static_cast<double>(s.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(pos));
  size_t hi = std::min(lo + 1, s.size() - 1);
  double f = pos - static_cast<double>(lo);
  return s[lo] * (1 - f) + s[hi] * f;
}

Summary summarize(std::vector<double> v) {
  Summary r;
  r.n = v.size();
  if (v.empty()) return r;
  std::sort(v.begin(), v.end());
  r.min = v.front();
  r.max = v.back();
  r.median = quantile_sorted(v, 0.5);
  r.q1 = quantile_sorted(v, 0.25);
  r.q3 = quantile_sorted(v, 0.75);
  r.mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  if (v.size() > 1) {
    double ss = 0;
    for (double x : v) ss += (x - r.mean) * (x - r.mean);
    r.stdev = std::sqrt(ss / static_cast<double>(v.size() - 1));
  }
  r.rel_stdev = r.mean != 0 ? r.stdev / r.mean : 0;
  return r;
}

}  // namespace roofline

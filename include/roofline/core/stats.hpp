// Summary statistics of repeated measurements.
#pragma once
#include <cstddef>
#include <vector>

namespace roofline {

struct Summary {
  size_t n = 0;
  double mean = 0, median = 0, min = 0, max = 0;
  double q1 = 0, q3 = 0;    // quartiles (linear interpolation)
  double stdev = 0;         // sample standard deviation
  double rel_stdev = 0;     // stdev / mean
  double iqr() const { return q3 - q1; }
  double rel_iqr() const { return median != 0 ? (q3 - q1) / median : 0; }
};

// Quantile q in [0,1] of already sorted values, linear interpolation.
double quantile_sorted(const std::vector<double>& sorted, double q);
Summary summarize(std::vector<double> values);

}  // namespace roofline

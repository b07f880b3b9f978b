#pragma once
// Order statistics of measured values: the step-time percentiles a trial records and the
// figures and verdicts of the report (report/stats.h) rest on.

#include <vector>

namespace runx::base {

/// The q-quantile (0 <= q <= 1) of `values` with linear interpolation between the closest ranks
/// (numpy's default): position q * (n - 1) in the sorted values. Throws std::invalid_argument
/// when `values` is empty or q is outside [0, 1].
double Percentile(std::vector<double> values, double q);
double Median(std::vector<double> values);

}  // namespace runx::base

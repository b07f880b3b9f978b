#pragma once
// Order statistics for step times.
#include <vector>

namespace runx::engine {

/// The q-quantile (0..1) of `v` with linear interpolation between order statistics (numpy's
/// default, "type 7"). NaN for an empty vector.
double Quantile(std::vector<double> v, double q);

}  // namespace runx::engine

#include "report/noise.h"

#include "report/table.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace runx::report {
namespace {

std::string Percent(double share) { return fmt::format("{:.0f}%", share * 100); }

}  // namespace

NoiseCheck CheckNoise(const std::vector<Repeat>& repeats, const NoiseLimits& limits) {
  NoiseCheck c;
  std::vector<double> all;
  std::vector<double> medians;
  for (const Repeat& r : repeats) {
    if (r.empty()) continue;
    std::vector<double> ms;
    for (const StepSample& s : r) ms.push_back(s.wall_ms);
    all.insert(all.end(), ms.begin(), ms.end());
    medians.push_back(Median(std::move(ms)));
  }
  c.repeats = static_cast<int>(medians.size());
  c.steps = static_cast<int>(all.size());
  if (all.empty()) return c;

  double mean = 0;
  for (double v : all) mean += v;
  mean /= static_cast<double>(all.size());
  double var = 0;
  for (double v : all) var += (v - mean) * (v - mean);
  if (all.size() > 1) var /= static_cast<double>(all.size() - 1);
  c.cv = mean > 0 ? std::sqrt(var) / mean : 0;

  const double q1 = Percentile(all, 0.25);
  const double q3 = Percentile(all, 0.75);
  const double iqr = std::max(q3 - q1, 0.01 * Median(all));
  const double low = q1 - limits.outlier_iqrs * iqr;
  const double high = q3 + limits.outlier_iqrs * iqr;
  c.outliers = static_cast<int>(std::count_if(all.begin(), all.end(), [&](double v) { return v < low || v > high; }));

  const auto [fastest, slowest] = std::minmax_element(medians.begin(), medians.end());
  c.fastest_repeat_ms = *fastest;
  c.slowest_repeat_ms = *slowest;
  c.repeat_spread = *fastest > 0 ? *slowest / *fastest - 1 : 0;

  if (c.cv > limits.max_cv) {
    c.reasons.push_back(fmt::format("step times vary (CV {} > {})", Percent(c.cv), Percent(limits.max_cv)));
  }
  const double share = static_cast<double>(c.outliers) / static_cast<double>(c.steps);
  if (share > limits.max_outlier_share) {
    c.reasons.push_back(fmt::format("{} outlier step{} ({} > {})", c.outliers, c.outliers == 1 ? "" : "s",
                                    Percent(share), Percent(limits.max_outlier_share)));
  }
  if (c.repeat_spread > limits.max_repeat_spread) {
    c.reasons.push_back(fmt::format("repeats disagree (medians {}-{} ms, {} apart > {})", FormatMs(c.fastest_repeat_ms),
                                    FormatMs(c.slowest_repeat_ms), Percent(c.repeat_spread),
                                    Percent(limits.max_repeat_spread)));
  }
  return c;
}

}  // namespace runx::report

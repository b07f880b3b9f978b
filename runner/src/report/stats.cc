#include "report/stats.h"

#include <fmt/format.h>
#include <boost/math/distributions/students_t.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace runx::report {

double Throughput(const std::vector<Repeat>& repeats) {
  double samples = 0;
  double wall_ms = 0;
  for (const Repeat& r : repeats) {
    for (const StepSample& s : r) {
      samples += s.samples;
      wall_ms += s.wall_ms;
    }
  }
  if (!(wall_ms > 0)) {
    throw std::invalid_argument("throughput of steps whose total wall time is not positive");
  }
  return samples / wall_ms * 1000.0;
}

bool Spread::known() const { return df >= kMinSpreadDf; }

Spread PoolLogSpread(const std::vector<std::vector<double>>& groups) {
  Spread s;
  double squares = 0;
  for (const std::vector<double>& group : groups) {
    s.values += static_cast<int>(group.size());
    if (group.size() < 2) continue;
    double mean = 0;
    for (const double l : group) mean += l;
    mean /= static_cast<double>(group.size());
    for (const double l : group) squares += (l - mean) * (l - mean);
    s.df += static_cast<int>(group.size()) - 1;
  }
  if (s.df > 0) s.sd = std::sqrt(squares / s.df);
  return s;
}

Spread PoolSpread(const std::vector<std::vector<double>>& groups) {
  std::vector<std::vector<double>> logs;
  for (const std::vector<double>& group : groups) {
    std::vector<double>& out = logs.emplace_back();
    for (const double x : group) {
      if (!(x > 0)) throw std::invalid_argument(fmt::format("spread of a throughput of {} samples/s", x));
      out.push_back(std::log(x));
    }
  }
  return PoolLogSpread(logs);
}

LogRatioError ErrorOfLogRatio(const SpreadEvidence& e, int processes_a, int processes_b, bool same_run) {
  if (processes_a < 1 || processes_b < 1) return {};
  const double inv = 1.0 / processes_a + 1.0 / processes_b;
  const double n = std::max(1.0, e.processes_per_run);
  const double w2 = e.within.sd * e.within.sd;
  const double b2 = e.between.sd * e.between.sd;
  LogRatioError out;
  if (same_run) {
    if (e.within.known()) return {std::sqrt(w2 * inv), e.within.df};
    if (e.between.known()) return {std::sqrt(n * b2 * inv), e.between.df};
    return {};
  }
  if (e.between.known()) {
    if (e.within.known()) {
      const double run2 = std::max(0.0, b2 - w2 / n);
      return {std::sqrt(2 * run2 + w2 * inv), std::min(e.between.df, e.within.df)};
    }
    return {std::sqrt(b2 * std::max(2.0, n * inv)), e.between.df};
  }
  if (e.within.known()) return {std::sqrt(w2 * inv), e.within.df};
  return out;
}

double StudentTQuantile(double p, double df) {
  return boost::math::quantile(boost::math::students_t_distribution<double>(df), p);
}

std::optional<RatioInterval> IntervalOfRatio(double estimate, const LogRatioError& error) {
  if (!error.known() || !(estimate > 0)) return std::nullopt;
  const double half = StudentTQuantile(0.975, error.df) * error.se;
  return RatioInterval{estimate * std::exp(-half), estimate * std::exp(half)};
}

std::optional<int> RepeatsToResolve(const SpreadEvidence& evidence, bool same_run, double threshold) {
  if (!(threshold > 0)) return std::nullopt;
  const double target = std::log1p(threshold);
  // Whether n processes a side resolve it; nullopt when the spread is not known.
  const auto resolves = [&](int n) -> std::optional<bool> {
    const LogRatioError e = ErrorOfLogRatio(evidence, n, n, same_run);
    if (!e.known()) return std::nullopt;
    return StudentTQuantile(0.975, e.df) * e.se <= target;
  };
  int low = 1;  // does not resolve (or is below the minimum of 2)
  for (int n = 2; n <= (1 << 20); n *= 2) {
    const auto r = resolves(n);
    if (!r) return std::nullopt;
    if (*r) {
      while (n - low > 1) {  // the first n that resolves, between low and n
        const int mid = low + (n - low) / 2;
        if (*resolves(mid)) {
          n = mid;
        } else {
          low = mid;
        }
      }
      return std::max(2, n);
    }
    low = n;
  }
  return std::nullopt;
}

}  // namespace runx::report

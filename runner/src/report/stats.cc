#include "report/stats.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>

namespace runx::report {
namespace {

void CheckSide(const std::vector<Repeat>& side, const char* name) {
  if (side.empty()) {
    throw std::invalid_argument(fmt::format("bootstrap: the {} has no repeat", name));
  }
  for (size_t r = 0; r < side.size(); ++r) {
    if (side[r].empty()) {
      throw std::invalid_argument(
          fmt::format("bootstrap: repeat {} of the {} has no measured step", r, name));
    }
    for (const StepSample& s : side[r]) {
      if (!(s.wall_ms > 0) || s.samples < 0) {
        throw std::invalid_argument(fmt::format(
            "bootstrap: a step of repeat {} of the {} has wall time {} ms and {} samples; "
            "expected a positive time and samples >= 0",
            r, name, s.wall_ms, s.samples));
      }
    }
  }
}

// The pooled throughput of one resample of `side`.
double ResampledThroughput(const std::vector<Repeat>& side, std::mt19937_64& rng) {
  double samples = 0;
  double wall_ms = 0;
  for (size_t i = 0; i < side.size(); ++i) {
    size_t pick = 0;
    if (side.size() > 1) pick = std::uniform_int_distribution<size_t>(0, side.size() - 1)(rng);
    const Repeat& repeat = side[pick];
    std::uniform_int_distribution<size_t> step(0, repeat.size() - 1);
    for (size_t j = 0; j < repeat.size(); ++j) {
      const StepSample& s = repeat[step(rng)];
      samples += s.samples;
      wall_ms += s.wall_ms;
    }
  }
  return samples / wall_ms * 1000.0;
}

}  // namespace

double Percentile(std::vector<double> values, double q) {
  if (values.empty()) throw std::invalid_argument("percentile of no values");
  if (!(q >= 0 && q <= 1)) {
    throw std::invalid_argument(fmt::format("percentile {} is outside [0, 1]", q));
  }
  std::sort(values.begin(), values.end());
  const double pos = q * static_cast<double>(values.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, values.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return values[lo] + (values[hi] - values[lo]) * frac;
}

double Median(std::vector<double> values) { return Percentile(std::move(values), 0.5); }

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

SpeedupInterval BootstrapSpeedup(const std::vector<Repeat>& baseline,
                                 const std::vector<Repeat>& variant, int resamples,
                                 uint64_t seed) {
  CheckSide(baseline, "baseline");
  CheckSide(variant, "variant");
  if (resamples < 1) {
    throw std::invalid_argument(fmt::format("bootstrap: {} resamples; expected 1 or more",
                                            resamples));
  }
  const double base = Throughput(baseline);
  if (!(base > 0)) throw std::invalid_argument("bootstrap: the baseline processed no samples");

  std::mt19937_64 rng(seed);
  std::vector<double> speedups;
  speedups.reserve(static_cast<size_t>(resamples));
  for (int i = 0; i < resamples; ++i) {
    const double b = ResampledThroughput(baseline, rng);
    const double v = ResampledThroughput(variant, rng);
    speedups.push_back(v / b);
  }
  SpeedupInterval out;
  out.estimate = Throughput(variant) / base;
  out.low = Percentile(speedups, 0.025);
  out.high = Percentile(std::move(speedups), 0.975);
  out.significant = out.low > 1.0 || out.high < 1.0;
  out.resamples = resamples;
  out.seed = seed;
  return out;
}

}  // namespace runx::report

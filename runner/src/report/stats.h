#pragma once
// Statistics of the end-of-sweep report: percentiles, pooled throughput and the hierarchical
// bootstrap of a speedup. Pure functions, no store, no LibTorch.
#include <cstdint>
#include <vector>

namespace runx::report {

/// One measured step: its wall time and the samples it processed (a count, held as a double
/// since only sums of it are ever taken).
struct StepSample {
  double wall_ms = 0;
  double samples = 0;
};
/// The measured steps of one trial (one repeat of a variant).
using Repeat = std::vector<StepSample>;

inline constexpr int kDefaultResamples = 2000;

/// A speedup with its 95% bootstrap confidence interval.
struct SpeedupInterval {
  double estimate = 0;  ///< from the full data
  double low = 0;       ///< 2.5th percentile of the resampled speedups
  double high = 0;      ///< 97.5th percentile
  bool significant = false;  ///< the interval excludes 1
  int resamples = 0;
  uint64_t seed = 0;
};

/// The q-quantile (0 <= q <= 1) of `values` with linear interpolation between the closest ranks
/// (numpy's default): position q * (n - 1) in the sorted values. Throws std::invalid_argument
/// when `values` is empty or q is outside [0, 1].
double Percentile(std::vector<double> values, double q);
double Median(std::vector<double> values);

/// Pooled throughput of all steps of all repeats: sum(samples) / sum(wall_ms) * 1000, samples
/// per second. Pooling (rather than averaging per-step rates) weighs each step by its time, and
/// stays right when the batch size varies. Throws std::invalid_argument when the total wall
/// time is not positive.
double Throughput(const std::vector<Repeat>& repeats);

/// Speedup of `variant` over `baseline` (throughput ratio) with a 95% hierarchical bootstrap
/// interval. Each of `resamples` rounds resamples both sides independently: as many repeats as
/// the side has, drawn with replacement (no draw when it has one), then, within each drawn
/// repeat, as many steps as it has, drawn with replacement; the round's speedup is the ratio of
/// the pooled throughputs. Draws use one std::mt19937_64 seeded with `seed` and
/// std::uniform_int_distribution, the baseline's draws of a round before the variant's, so the
/// result is deterministic for a seed (with one standard library).
/// Throws std::invalid_argument when a side has no repeat, a repeat has no step, a step's wall
/// time is not positive or its samples negative, the baseline processed no samples, or
/// resamples < 1.
SpeedupInterval BootstrapSpeedup(const std::vector<Repeat>& baseline,
                                 const std::vector<Repeat>& variant,
                                 int resamples = kDefaultResamples, uint64_t seed = 0);

}  // namespace runx::report

#pragma once
// Noise guards: whether a variant's measurement is too unstable to trust its figures. Pure
// functions, no store, no LibTorch.
// The rule and its limits are written down in docs/design.md ("Comparing runs").
#include <string>
#include <vector>

#include "report/stats.h"

namespace runx::report {

/// When a measurement counts as unstable. Each limit is checked on its own; any one crossed
/// makes the variant unstable.
struct NoiseLimits {
  /// Coefficient of variation (standard deviation / mean) of all measured step times.
  double max_cv = 0.10;
  /// A step is an outlier beyond `outlier_iqrs` interquartile ranges outside the quartiles
  /// (Tukey's far-out fence; the range is at least 1% of the median so identical steps are not
  /// all outliers of one another)...
  double outlier_iqrs = 3.0;
  /// ...and outliers may be at most this share of the steps.
  double max_outlier_share = 0.05;
  /// Repeats disagree when the slowest repeat's median step time exceeds the fastest's by more
  /// than this (relative), e.g. 2.20 ms and 3.79 ms: 72%.
  double max_repeat_spread = 0.10;
};

/// What CheckNoise found on one variant's repeats.
struct NoiseCheck {
  int repeats = 0;
  int steps = 0;
  double cv = 0;                 ///< of all measured step times
  int outliers = 0;              ///< steps beyond the fences
  double repeat_spread = 0;      ///< slowest repeat median / fastest - 1; 0 with one repeat
  double fastest_repeat_ms = 0;  ///< median step time of the fastest repeat
  double slowest_repeat_ms = 0;  ///< ... and of the slowest
  /// One short text per limit crossed, e.g. "step times vary (CV 14% > 10%)",
  /// "3 outlier steps (7% > 5%)", "repeats disagree (medians 2.20-3.79 ms)". Empty when stable.
  std::vector<std::string> reasons;
  bool unstable() const { return !reasons.empty(); }
};

/// Checks the measured steps of a variant's repeats (each non-empty, positive wall times).
/// No repeat, or no step, gives a stable, empty check.
NoiseCheck CheckNoise(const std::vector<Repeat>& repeats, const NoiseLimits& limits = {});

}  // namespace runx::report

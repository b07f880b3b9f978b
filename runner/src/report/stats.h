#pragma once
// Statistics behind runx's figures and verdicts: percentiles, pooled throughput, the run-to-run
// spread of a throughput, and the interval of a ratio of throughputs that the spread gives. Pure
// functions, no store, no LibTorch. Why a t-interval on processes and not a bootstrap over steps:
// docs/design.md ("Verdicts: evidence across processes").
#include <cstdint>
#include <optional>
#include <vector>

#include "base/statistics.h"

namespace runx::report {

/// One measured step: its wall time and the samples it processed (a count, held as a double
/// since only sums of it are ever taken).
struct StepSample {
  double wall_ms = 0;
  double samples = 0;
};
/// The measured steps of one trial (one repeat of a variant: one process).
using Repeat = std::vector<StepSample>;

/// The q-quantile of `values`, numpy's way, and the median (base/statistics.h).
using base::Median;
using base::Percentile;

/// Pooled throughput of all steps of all repeats: sum(samples) / sum(wall_ms) * 1000, samples
/// per second. Pooling (rather than averaging per-step rates) weighs each step by its time, and
/// stays right when the batch size varies. Throws std::invalid_argument when the total wall
/// time is not positive.
double Throughput(const std::vector<Repeat>& repeats);

/// How much a throughput moves when nothing about the work changes: the pooled standard
/// deviation of ln(samples/s) within groups of values that measured one thing. Steps of one
/// process cannot tell it (they share the process's memory layout, clocks and neighbours), so
/// every interval runx prints rests on spreads of whole processes and runs.
struct Spread {
  double sd = 0;       ///< e.g. 0.03: values differ by about 3%
  int df = 0;          ///< degrees of freedom: values in groups of two or more, less one per group
  int values = 0;      ///< every value offered, groups of one included
  bool known() const;  ///< df >= kMinSpreadDf
};

/// The fewest degrees of freedom a spread needs before runx draws an interval from it: with one,
/// Student's t quantile is 12.7 and the interval says nothing a user could act on.
inline constexpr int kMinSpreadDf = 2;

/// Pools `groups` of logarithms: sd = sqrt(sum over groups of sum (x - group mean)^2 / df),
/// df = sum (n_g - 1).
Spread PoolLogSpread(const std::vector<std::vector<double>>& groups);
/// The same on throughputs (samples/s, > 0), pooled on their logarithms. Throws
/// std::invalid_argument on a throughput that is not positive.
Spread PoolSpread(const std::vector<std::vector<double>>& groups);

/// The two levels of noise a comparison of throughputs meets: processes of one run (repeats,
/// run interleaved, see one machine state), and runs (a run's processes share its moment: other
/// load, clocks, temperature, memory placement). Runs of one configuration in one environment on
/// one host, measured earlier, tell the second.
struct SpreadEvidence {
  Spread within;                 ///< processes about the mean of their run (sweep): repeats
  Spread between;                ///< earlier runs' mean ln(samples/s) about their mean
  double processes_per_run = 1;  ///< behind `between`: the harmonic mean of its runs' processes
};

/// The standard error of ln(B/A) and its degrees of freedom.
struct LogRatioError {
  double se = 0;
  int df = 0;
  bool known() const { return df >= kMinSpreadDf; }
};

/// The standard error of ln(B/A) for `processes_a` and `processes_b` processes, with the model
/// ln rate = configuration + run + process (docs/design.md, "Verdicts"):
///   - within one run (the end-of-run table: a variant against its baseline, interleaved), the
///     run's part is shared: se^2 = w^2 (1/na + 1/nb) with the within-run spread w, df of w; with
///     no within-run spread known, the between-run one bounds it (w^2 <= n b^2);
///   - across runs (compare, history), each side has its own run: se^2 = 2 s_run^2 + w^2 (1/na +
///     1/nb), with s_run^2 = max(0, b^2 - w^2/n) from the between-run spread b of runs of n
///     processes, df the smaller of the two; without a within-run spread the largest se^2 that b
///     allows, b^2 max(2, n (1/na + 1/nb)); with no earlier runs, the within-run spread alone.
/// Unknown (df 0) when neither spread is known.
LogRatioError ErrorOfLogRatio(const SpreadEvidence& evidence, int processes_a, int processes_b, bool same_run);

/// The p-quantile of Student's t distribution with `df` degrees of freedom (Boost.Math).
double StudentTQuantile(double p, double df);

/// A 95% interval of a ratio B/A of throughputs.
struct RatioInterval {
  double low = 0;
  double high = 0;
};

/// The 95% interval of `estimate` (a ratio B/A of pooled throughputs): estimate * exp(± t(0.975,
/// df) * se). nullopt when the error is not known.
std::optional<RatioInterval> IntervalOfRatio(double estimate, const LogRatioError& error);

/// Processes per side that make the interval's half-width at most ln(1 + threshold): the
/// smallest n with t(0.975, df) * se(n, n) <= ln(1 + threshold), at least 2; nullopt when the
/// spread is not known, the threshold not positive, or no number of repeats gets there (runs
/// differ by more than the threshold: then only more runs help).
std::optional<int> RepeatsToResolve(const SpreadEvidence& evidence, bool same_run, double threshold);

}  // namespace runx::report

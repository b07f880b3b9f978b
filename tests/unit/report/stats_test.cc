// The statistics behind verdicts: throughput, the run-to-run spread and the interval of a ratio
// (percentiles: tests/unit/base/statistics_test.cc).
#include "report/stats.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>

namespace runx::report {
namespace {

TEST(ThroughputTest, PoolsSamplesOverTime) {
  // 10 samples in 10 ms and 30 in 10 ms: 40 samples in 20 ms, not the mean of 1000 and 3000.
  EXPECT_DOUBLE_EQ(Throughput({{{10, 10}}, {{10, 30}}}), 2000);
  EXPECT_DOUBLE_EQ(Throughput({{{4, 2}, {6, 3}}}), 500);
  EXPECT_THROW(Throughput({}), std::invalid_argument);
}

TEST(SpreadTest, PoolsTheLogDeviationsWithinGroups) {
  // Two groups: ln(100), ln(110) and ln(50), ln(50), ln(60). df = 1 + 2.
  const Spread s = PoolSpread({{100, 110}, {50, 50, 60}, {77}});
  const double g1 = std::log(110.0 / 100) / 2;  // each value's distance from the group's mean log
  const double m2 = (2 * std::log(50.0) + std::log(60.0)) / 3;
  const double squares = 2 * g1 * g1 + 2 * std::pow(std::log(50.0) - m2, 2) + std::pow(std::log(60.0) - m2, 2);
  EXPECT_EQ(s.df, 3);
  EXPECT_EQ(s.values, 6);  // the lone 77 counts as offered, adds no degree of freedom
  EXPECT_NEAR(s.sd, std::sqrt(squares / 3), 1e-12);
  EXPECT_TRUE(s.known());
  // A constant factor between groups (another configuration) changes nothing.
  EXPECT_NEAR(PoolSpread({{100, 110}, {1000, 1100}}).sd, PoolSpread({{100, 110}, {100, 110}}).sd, 1e-12);
  EXPECT_FALSE(PoolSpread({{100, 110}}).known());  // df 1: not enough
  EXPECT_EQ(PoolSpread({{5}, {6}}).df, 0);
  EXPECT_THROW(PoolSpread({{5, 0}}), std::invalid_argument);
  EXPECT_NEAR(PoolLogSpread({{0.0, 0.1}}).sd, std::sqrt(0.005), 1e-12);
}

TEST(SpreadTest, StudentsTQuantiles) {
  // Tables: t(0.975; 1) = 12.706, t(0.975; 2) = 4.303, t(0.975; 4) = 2.776, t(0.975; 30) = 2.042.
  EXPECT_NEAR(StudentTQuantile(0.975, 1), 12.7062, 1e-3);
  EXPECT_NEAR(StudentTQuantile(0.975, 2), 4.3027, 1e-3);
  EXPECT_NEAR(StudentTQuantile(0.975, 4), 2.7764, 1e-3);
  EXPECT_NEAR(StudentTQuantile(0.975, 30), 2.0423, 1e-3);
  EXPECT_NEAR(StudentTQuantile(0.025, 4), -2.7764, 1e-3);
}

Spread S(double sd, int df) {
  Spread s;
  s.sd = sd;
  s.df = df;
  return s;
}

TEST(SpreadTest, TheErrorOfARatioWithinOneRun) {
  SpreadEvidence e;
  e.within = S(0.05, 4);
  // The run's part is shared: processes alone.
  LogRatioError r = ErrorOfLogRatio(e, 3, 3, true);
  EXPECT_NEAR(r.se, 0.05 * std::sqrt(2.0 / 3), 1e-12);
  EXPECT_EQ(r.df, 4);
  // No within-run spread: runs of n processes bound it (w^2 <= n b^2).
  e.within = S(0, 0);
  e.between = S(0.02, 3);
  e.processes_per_run = 2;
  r = ErrorOfLogRatio(e, 1, 1, true);
  EXPECT_NEAR(r.se, std::sqrt(2 * 0.02 * 0.02 * 2), 1e-12);
  EXPECT_EQ(r.df, 3);
  EXPECT_FALSE(ErrorOfLogRatio(SpreadEvidence{}, 3, 3, true).known());
  EXPECT_FALSE(ErrorOfLogRatio(e, 0, 3, true).known());
}

TEST(SpreadTest, TheErrorOfARatioAcrossRuns) {
  SpreadEvidence e;
  e.within = S(0.03, 6);
  e.between = S(0.025, 4);
  e.processes_per_run = 3;
  // s_run^2 = b^2 - w^2 / n = 0.000625 - 0.0003 = 0.000325; se^2 = 2 s_run^2 + w^2 (1/3 + 1/3).
  LogRatioError r = ErrorOfLogRatio(e, 3, 3, false);
  EXPECT_NEAR(r.se * r.se, 2 * 0.000325 + 0.0009 * 2.0 / 3, 1e-15);
  EXPECT_EQ(r.df, 4);
  // With as many processes as the earlier runs had, that is 2 b^2: runs against runs.
  EXPECT_NEAR(r.se * r.se, 2 * 0.025 * 0.025, 1e-15);
  // More repeats shrink only the processes' part.
  EXPECT_NEAR(std::pow(ErrorOfLogRatio(e, 30, 30, false).se, 2), 2 * 0.000325 + 0.0009 * 2.0 / 30, 1e-15);
  // Runs that vary less than their processes would explain: no run part.
  e.between = S(0.01, 4);
  EXPECT_NEAR(std::pow(ErrorOfLogRatio(e, 3, 3, false).se, 2), 0.0009 * 2.0 / 3, 1e-15);
  // No within-run spread: the largest se^2 the runs allow, b^2 max(2, n (1/na + 1/nb)).
  e.within = S(0, 0);
  e.between = S(0.02, 2);
  e.processes_per_run = 1;
  EXPECT_NEAR(ErrorOfLogRatio(e, 1, 1, false).se, 0.02 * std::sqrt(2.0), 1e-12);
  e.processes_per_run = 6;
  EXPECT_NEAR(ErrorOfLogRatio(e, 1, 2, false).se, 0.02 * std::sqrt(6 * 1.5), 1e-12);
  // No earlier runs: the processes of the two runs alone.
  e.between = S(0, 0);
  e.within = S(0.03, 4);
  r = ErrorOfLogRatio(e, 3, 3, false);
  EXPECT_NEAR(r.se, 0.03 * std::sqrt(2.0 / 3), 1e-12);
  EXPECT_EQ(r.df, 4);
}

TEST(SpreadTest, TheIntervalOfARatioIsATIntervalOnItsLog) {
  const LogRatioError error{0.04, 4};
  const auto i = IntervalOfRatio(1.2, error);
  ASSERT_TRUE(i);
  const double half = StudentTQuantile(0.975, 4) * 0.04;
  EXPECT_NEAR(i->low, 1.2 * std::exp(-half), 1e-12);
  EXPECT_NEAR(i->high, 1.2 * std::exp(half), 1e-12);
  EXPECT_NEAR(std::log(i->high / 1.2), -std::log(i->low / 1.2), 1e-12);  // symmetric on the log scale
  EXPECT_FALSE(IntervalOfRatio(1.2, {0.04, 1}));
  EXPECT_FALSE(IntervalOfRatio(0, error));
  // Processes that agree exactly: the interval is the estimate.
  EXPECT_DOUBLE_EQ(IntervalOfRatio(0.8, {0, 4})->low, 0.8);
}

TEST(SpreadTest, RepeatsToResolveAThreshold) {
  SpreadEvidence e;
  e.within = S(0.05, 4);
  // Within a run: t(0.975, 4) * 0.05 * sqrt(2 / n) <= ln(1.02) first at n = 99 (2 * 7.01^2 = 98.3).
  EXPECT_EQ(RepeatsToResolve(e, true, 0.02), 99);
  EXPECT_LE(IntervalOfRatio(1.0, ErrorOfLogRatio(e, 99, 99, true))->high, 1.02 + 1e-12);
  EXPECT_GT(IntervalOfRatio(1.0, ErrorOfLogRatio(e, 98, 98, true))->high, 1.02);
  EXPECT_EQ(RepeatsToResolve(e, true, 0.5), 2);  // never fewer than 2
  // Across runs that differ by more than the threshold, no number of repeats resolves it.
  e.between = S(0.05, 4);
  e.processes_per_run = 3;
  EXPECT_FALSE(RepeatsToResolve(e, false, 0.02));
  EXPECT_FALSE(RepeatsToResolve(SpreadEvidence{}, true, 0.02));
}

// The interval's promise, checked by simulation: processes whose throughput varies by a
// log-normal factor (sd 4%), with steps inside each process that are autocorrelated (an AR(1)
// drift, as real steps are), compared A against A with 3 repeats a side in one run. A 95%
// interval must exclude 1 in about 5% of such comparisons (an interval from the steps of the
// processes, which cannot see the process-to-process factor, excludes it far more often).
TEST(SpreadTest, IntervalsCoverAnAAComparisonNinetyFivePercentOfTheTime) {
  std::mt19937_64 rng(2026);
  std::normal_distribution<double> process(0, 0.04), innovation(0, 0.02);
  const auto one_process = [&]() {
    const double factor = std::exp(process(rng));
    Repeat r;
    double drift = 0;
    for (int i = 0; i < 40; ++i) {
      drift = 0.8 * drift + innovation(rng);
      r.push_back({10.0 * factor * std::exp(drift), 64});
    }
    return r;
  };
  int excluded = 0;
  const int comparisons = 4000;
  for (int k = 0; k < comparisons; ++k) {
    std::vector<Repeat> a, b;
    std::vector<double> rates_a, rates_b;
    for (int i = 0; i < 3; ++i) {
      a.push_back(one_process());
      b.push_back(one_process());
      rates_a.push_back(Throughput({a.back()}));
      rates_b.push_back(Throughput({b.back()}));
    }
    SpreadEvidence e;
    e.within = PoolSpread({rates_a, rates_b});
    const auto i = IntervalOfRatio(Throughput(b) / Throughput(a), ErrorOfLogRatio(e, 3, 3, true));
    ASSERT_TRUE(i);
    if (i->low > 1 || i->high < 1) ++excluded;
  }
  const double rate = static_cast<double>(excluded) / comparisons;
  EXPECT_GT(rate, 0.03);  // a check that could never exclude 1 would pass the next line, not this one
  EXPECT_LT(rate, 0.07);
}

}  // namespace
}  // namespace runx::report

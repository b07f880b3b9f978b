// BootstrapSpeedup against a reference written out in the test, and its properties.
#include "report/stats.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <stdexcept>

namespace runx::report {
namespace {

// Reference: the hierarchical bootstrap written out step by step, without the library's code.
double ReferenceInterval(const std::vector<Repeat>& baseline, const std::vector<Repeat>& variant,
                         int resamples, uint64_t seed, double* low, double* high) {
  std::mt19937_64 rng(seed);
  std::vector<double> ratios;
  for (int round = 0; round < resamples; ++round) {
    double throughput[2] = {0, 0};
    const std::vector<Repeat>* sides[2] = {&baseline, &variant};
    for (int side = 0; side < 2; ++side) {
      const std::vector<Repeat>& repeats = *sides[side];
      double samples = 0;
      double ms = 0;
      for (size_t k = 0; k < repeats.size(); ++k) {
        size_t r = 0;
        if (repeats.size() != 1) {
          std::uniform_int_distribution<size_t> pick_repeat(0, repeats.size() - 1);
          r = pick_repeat(rng);
        }
        for (size_t k2 = 0; k2 < repeats[r].size(); ++k2) {
          std::uniform_int_distribution<size_t> pick_step(0, repeats[r].size() - 1);
          const StepSample& s = repeats[r][pick_step(rng)];
          samples += s.samples;
          ms += s.wall_ms;
        }
      }
      throughput[side] = samples / ms * 1000;  // same rounding as the library's
    }
    ratios.push_back(throughput[1] / throughput[0]);
  }
  std::sort(ratios.begin(), ratios.end());
  const auto quantile = [&](double q) {
    const double h = (ratios.size() - 1) * q;
    const size_t below = static_cast<size_t>(h);
    if (below + 1 >= ratios.size()) return ratios.back();
    return ratios[below] + (ratios[below + 1] - ratios[below]) * (h - below);
  };
  *low = quantile(0.025);
  *high = quantile(0.975);
  double base_samples = 0, base_ms = 0, var_samples = 0, var_ms = 0;
  for (const Repeat& r : baseline) {
    for (const StepSample& s : r) base_samples += s.samples, base_ms += s.wall_ms;
  }
  for (const Repeat& r : variant) {
    for (const StepSample& s : r) var_samples += s.samples, var_ms += s.wall_ms;
  }
  return (var_samples / var_ms) / (base_samples / base_ms);
}

// `n` steps of about `ms` each (uniform noise of +-`noise` ms), `samples` samples per step.
Repeat NoisySteps(size_t n, double ms, double noise, double samples, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> jitter(-noise, noise);
  Repeat r;
  for (size_t i = 0; i < n; ++i) r.push_back({ms + jitter(rng), samples});
  return r;
}

std::vector<Repeat> Repeats(size_t repeats, size_t steps, double ms, double noise,
                            double samples, uint64_t seed) {
  std::vector<Repeat> out;
  for (size_t i = 0; i < repeats; ++i) out.push_back(NoisySteps(steps, ms, noise, samples, seed + i));
  return out;
}

TEST(PercentileTest, InterpolatesLinearlyBetweenRanks) {
  EXPECT_DOUBLE_EQ(Percentile({4, 1, 3, 2}, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(Percentile({4, 1, 3, 2}, 0.1), 1.3);
  EXPECT_DOUBLE_EQ(Percentile({4, 1, 3, 2}, 0.9), 3.7);
  EXPECT_DOUBLE_EQ(Percentile({4, 1, 3, 2}, 0), 1);
  EXPECT_DOUBLE_EQ(Percentile({4, 1, 3, 2}, 1), 4);
  EXPECT_DOUBLE_EQ(Percentile({7}, 0.975), 7);
  EXPECT_DOUBLE_EQ(Median({5, 1, 3}), 3);
  EXPECT_THROW(Percentile({}, 0.5), std::invalid_argument);
  EXPECT_THROW(Percentile({1}, 1.5), std::invalid_argument);
}

TEST(PercentileTest, InterpolatesLikeNumpy) {
  // numpy.quantile([1, 2, 3, 4, 10], [0.1, 0.5, 0.9]) == [1.4, 3.0, 7.6]; the trial's step-time
  // metrics (median, p10, p90, p99) are these.
  const std::vector<double> v{10, 2, 4, 1, 3};
  EXPECT_DOUBLE_EQ(Percentile(v, 0.5), 3.0);
  EXPECT_NEAR(Percentile(v, 0.1), 1.4, 1e-12);
  EXPECT_NEAR(Percentile(v, 0.9), 7.6, 1e-12);
  EXPECT_DOUBLE_EQ(Percentile({5}, 0.9), 5.0);
}

TEST(ThroughputTest, PoolsSamplesOverTime) {
  // 10 samples in 10 ms and 30 in 10 ms: 40 samples in 20 ms, not the mean of 1000 and 3000.
  EXPECT_DOUBLE_EQ(Throughput({{{10, 10}}, {{10, 30}}}), 2000);
  EXPECT_DOUBLE_EQ(Throughput({{{4, 2}, {6, 3}}}), 500);
  EXPECT_THROW(Throughput({}), std::invalid_argument);
}

TEST(BootstrapTest, MatchesTheReferenceExactly) {
  const std::vector<Repeat> baseline = Repeats(3, 40, 117.2, 3.0, 256, 1);
  const std::vector<Repeat> variant = Repeats(3, 35, 55.7, 2.0, 256, 100);
  for (const uint64_t seed : {uint64_t{0}, uint64_t{42}, ~uint64_t{0}}) {
    double low = 0, high = 0;
    const double estimate = ReferenceInterval(baseline, variant, 2000, seed, &low, &high);
    const SpeedupInterval got = BootstrapSpeedup(baseline, variant, 2000, seed);
    EXPECT_DOUBLE_EQ(got.estimate, estimate);
    EXPECT_EQ(got.low, low) << "seed " << seed;
    EXPECT_EQ(got.high, high) << "seed " << seed;
    EXPECT_EQ(got.resamples, 2000);
    EXPECT_EQ(got.seed, seed);
    EXPECT_TRUE(got.significant);
  }
}

TEST(BootstrapTest, MatchesTheReferenceWithOneRepeatAndUnequalRepeats) {
  const std::vector<Repeat> one = Repeats(1, 25, 10, 1.0, 32, 7);
  std::vector<Repeat> uneven = Repeats(2, 30, 9.9, 1.0, 32, 9);
  uneven.push_back(NoisySteps(5, 10.2, 0.5, 64, 11));  // a short repeat, twice the batch
  double low = 0, high = 0;
  const double estimate = ReferenceInterval(one, uneven, 500, 3, &low, &high);
  const SpeedupInterval got = BootstrapSpeedup(one, uneven, 500, 3);
  EXPECT_DOUBLE_EQ(got.estimate, estimate);
  EXPECT_EQ(got.low, low);
  EXPECT_EQ(got.high, high);
  EXPECT_EQ(got.significant, low > 1 || high < 1);
}

TEST(BootstrapTest, IdenticalInputsGiveOneAndAnIntervalAroundIt) {
  const std::vector<Repeat> side = Repeats(3, 50, 20, 2.0, 64, 5);
  const SpeedupInterval s = BootstrapSpeedup(side, side, 2000, 1);
  EXPECT_DOUBLE_EQ(s.estimate, 1.0);
  EXPECT_LT(s.low, 1.0);
  EXPECT_GT(s.high, 1.0);
  EXPECT_FALSE(s.significant);
}

TEST(BootstrapTest, TwiceAsFastIsTwoAndSignificant) {
  const std::vector<Repeat> baseline = Repeats(3, 50, 20, 2.0, 64, 5);
  std::vector<Repeat> fast = baseline;
  for (Repeat& r : fast) {
    for (StepSample& s : r) s.wall_ms /= 2;
  }
  const SpeedupInterval s = BootstrapSpeedup(baseline, fast, 2000, 1);
  EXPECT_NEAR(s.estimate, 2.0, 1e-12);
  EXPECT_GT(s.low, 1.0);
  EXPECT_LE(s.low, s.estimate);
  EXPECT_GE(s.high, s.estimate);
  EXPECT_TRUE(s.significant);
  // Slower is significant too, the interval below 1.
  const SpeedupInterval slow = BootstrapSpeedup(fast, baseline, 2000, 1);
  EXPECT_NEAR(slow.estimate, 0.5, 1e-12);
  EXPECT_LT(slow.high, 1.0);
  EXPECT_TRUE(slow.significant);
}

TEST(BootstrapTest, DifferentBatchSizesCompareThroughput) {
  // Twice the batch in 1.5x the time: 4/3 the throughput.
  const std::vector<Repeat> baseline = {Repeat(20, {10, 32}), Repeat(20, {10, 32})};
  const std::vector<Repeat> variant = {Repeat(20, {15, 64}), Repeat(20, {15, 64})};
  const SpeedupInterval s = BootstrapSpeedup(baseline, variant, 200, 0);
  EXPECT_DOUBLE_EQ(s.estimate, 4.0 / 3);
  EXPECT_DOUBLE_EQ(s.low, 4.0 / 3);  // no noise, no spread
  EXPECT_DOUBLE_EQ(s.high, 4.0 / 3);
  EXPECT_TRUE(s.significant);
}

TEST(BootstrapTest, IntervalNarrowsWithMoreSteps) {
  const auto width = [](size_t steps) {
    const SpeedupInterval s = BootstrapSpeedup(Repeats(1, steps, 20, 4.0, 64, 1),
                                               Repeats(1, steps, 19, 4.0, 64, 2), 1000, 9);
    return s.high - s.low;
  };
  const double w10 = width(10);
  const double w100 = width(100);
  const double w1000 = width(1000);
  EXPECT_GT(w10, w100);
  EXPECT_GT(w100, w1000);
  EXPECT_GT(w10, 2 * w1000);
}

TEST(BootstrapTest, RepeatsThatDisagreeWidenTheInterval) {
  // Within each repeat the steps are steady, but the baseline's repeats differ by 10%: only
  // resampling repeats shows that drift.
  const std::vector<Repeat> drifting = {Repeat(50, {20, 64}), Repeat(50, {22, 64}),
                                        Repeat(50, {18, 64})};
  const std::vector<Repeat> steady = {Repeat(50, {20, 64}), Repeat(50, {20, 64}),
                                      Repeat(50, {20, 64})};
  const std::vector<Repeat> variant = {Repeat(50, {19, 64}), Repeat(50, {19, 64}),
                                       Repeat(50, {19, 64})};
  const SpeedupInterval wide = BootstrapSpeedup(drifting, variant, 2000, 4);
  const SpeedupInterval narrow = BootstrapSpeedup(steady, variant, 2000, 4);
  EXPECT_DOUBLE_EQ(narrow.low, narrow.high);
  EXPECT_GT(wide.high - wide.low, 0.05);
  EXPECT_FALSE(wide.significant);
  EXPECT_TRUE(narrow.significant);
}

TEST(BootstrapTest, DeterministicForASeed) {
  const std::vector<Repeat> a = Repeats(2, 30, 10, 1.0, 8, 1);
  const std::vector<Repeat> b = Repeats(2, 30, 10, 1.0, 8, 2);
  const SpeedupInterval x = BootstrapSpeedup(a, b, 300, 77);
  const SpeedupInterval y = BootstrapSpeedup(a, b, 300, 77);
  const SpeedupInterval z = BootstrapSpeedup(a, b, 300, 78);
  EXPECT_EQ(x.low, y.low);
  EXPECT_EQ(x.high, y.high);
  EXPECT_TRUE(x.low != z.low || x.high != z.high);
}

TEST(BootstrapTest, RefusesInputsItCannotResample) {
  const std::vector<Repeat> ok = {Repeat(3, {10, 8})};
  EXPECT_THROW(BootstrapSpeedup({}, ok), std::invalid_argument);
  EXPECT_THROW(BootstrapSpeedup(ok, {}), std::invalid_argument);
  EXPECT_THROW(BootstrapSpeedup(ok, {Repeat{}}), std::invalid_argument);
  EXPECT_THROW(BootstrapSpeedup(ok, {Repeat{{0, 8}}}), std::invalid_argument);
  EXPECT_THROW(BootstrapSpeedup({Repeat{{10, 0}}}, ok), std::invalid_argument);
  EXPECT_THROW(BootstrapSpeedup(ok, ok, 0), std::invalid_argument);
  try {
    BootstrapSpeedup(ok, {Repeat(2, {10, 8}), Repeat{}});
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "bootstrap: repeat 1 of the variant has no measured step");
  }
}

}  // namespace
}  // namespace runx::report

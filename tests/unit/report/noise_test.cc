// The noise guards: coefficient of variation, outliers, repeats that disagree, repeats needed.
#include "report/noise.h"

#include <gtest/gtest.h>

namespace runx::report {
namespace {

Repeat Steps(const std::vector<double>& ms, double samples = 32) {
  Repeat r;
  for (double m : ms) r.push_back({m, samples});
  return r;
}

TEST(Noise, SteadyStepsAreStable) {
  const NoiseCheck c = CheckNoise({Steps({10, 10.1, 9.9, 10, 10.2, 9.8}), Steps({10.1, 10, 9.9, 10, 10.1, 10})});
  EXPECT_FALSE(c.unstable());
  EXPECT_EQ(c.repeats, 2);
  EXPECT_EQ(c.steps, 12);
  EXPECT_LT(c.cv, 0.02);
  EXPECT_EQ(c.outliers, 0);
  EXPECT_LT(c.repeat_spread, 0.02);
}

TEST(Noise, NothingMeasuredIsNotUnstable) {
  EXPECT_FALSE(CheckNoise({}).unstable());
  EXPECT_EQ(CheckNoise({}).steps, 0);
}

// The repeats of docs/benchmarks.md that disagree: 2.20 ms and 3.79 ms.
TEST(Noise, RepeatsThatDisagreeAreNamed) {
  const NoiseCheck c = CheckNoise({Steps({2.2, 2.21, 2.19, 2.2}), Steps({3.79, 3.8, 3.78, 3.79})});
  ASSERT_TRUE(c.unstable());
  EXPECT_DOUBLE_EQ(c.fastest_repeat_ms, 2.2);
  EXPECT_DOUBLE_EQ(c.slowest_repeat_ms, 3.79);
  EXPECT_NEAR(c.repeat_spread, 3.79 / 2.2 - 1, 1e-12);
  EXPECT_EQ(c.reasons.back(), "repeats disagree (medians 2.20-3.79 ms, 72% apart > 10%)");
  // The step times of the two repeats pooled vary too (CV about 28%).
  EXPECT_EQ(c.reasons.front(), "step times vary (CV 28% > 10%)");
}

TEST(Noise, OutliersBeyondTheFencesCount) {
  std::vector<double> ms(40, 10.0);
  for (size_t i = 0; i < ms.size(); ++i) ms[i] += 0.01 * static_cast<double>(i % 5);
  ms[3] = 30;  // one outlier of 40: 2.5%, under the 5% limit
  const NoiseCheck one = CheckNoise({Steps(ms)});
  EXPECT_EQ(one.outliers, 1);
  EXPECT_EQ(one.reasons.size(), 1u);  // its CV crosses 10%; the outlier share does not
  ms[7] = 31;
  ms[11] = 29;  // three of 40: 7.5%
  const NoiseCheck c = CheckNoise({Steps(ms)});
  EXPECT_EQ(c.outliers, 3);
  EXPECT_NE(std::find(c.reasons.begin(), c.reasons.end(), "3 outlier steps (8% > 5%)"), c.reasons.end())
      << ::testing::PrintToString(c.reasons);
}

TEST(Noise, LimitsAreParameters) {
  NoiseLimits strict;
  strict.max_cv = 0.001;
  const NoiseCheck c = CheckNoise({Steps({10, 10.1, 9.9, 10})}, strict);
  ASSERT_TRUE(c.unstable());
  EXPECT_EQ(c.reasons.front().rfind("step times vary (CV 1% > 0%)", 0), 0u) << c.reasons.front();
}

}  // namespace
}  // namespace runx::report

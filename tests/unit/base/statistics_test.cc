#include "base/statistics.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

namespace runx::base {
namespace {

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

}  // namespace
}  // namespace runx::base

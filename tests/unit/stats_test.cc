#include "engine/stats.h"

#include <cmath>

#include <gtest/gtest.h>

namespace runx::engine {

TEST(Quantile, InterpolatesLikeNumpy) {
  // numpy.quantile([1, 2, 3, 4, 10], [0.1, 0.5, 0.9]) == [1.4, 3.0, 7.6]
  const std::vector<double> v{10, 2, 4, 1, 3};
  EXPECT_DOUBLE_EQ(Quantile(v, 0.5), 3.0);
  EXPECT_NEAR(Quantile(v, 0.1), 1.4, 1e-12);
  EXPECT_NEAR(Quantile(v, 0.9), 7.6, 1e-12);
  EXPECT_DOUBLE_EQ(Quantile({5}, 0.9), 5.0);
  EXPECT_TRUE(std::isnan(Quantile({}, 0.5)));
}

}  // namespace runx::engine

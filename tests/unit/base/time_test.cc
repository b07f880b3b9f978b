#include "base/time.h"

#include <gtest/gtest.h>

#include <regex>

namespace runx::base {
namespace {

TEST(Time, UtcNowIsIso8601) {
  EXPECT_TRUE(std::regex_match(UtcNow(), std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)"))) << UtcNow();
}

TEST(Time, UtcNowInAFormat) {
  EXPECT_TRUE(std::regex_match(UtcNow("%Y%m%dT%H%M%SZ"), std::regex(R"(\d{8}T\d{6}Z)"))) << UtcNow("%Y%m%dT%H%M%SZ");
  EXPECT_EQ(UtcNow("%Y-%m-%dT%H:%M:%SZ").size(), UtcNow().size());
}

}  // namespace
}  // namespace runx::base

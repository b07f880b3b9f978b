// The text of `runx plan`.
#include <gtest/gtest.h>

#include "spec/sweep.h"
#include "test_util.h"

namespace runx::spec::test {
namespace {

using nlohmann::json;
using Strings = std::vector<std::string>;

const std::string kThree = "sweep: {axes: {data.batch_size: [4, 8, 16]}}\n";

TEST(RenderPlanTest, SmallAblation) {
  const Plan plan = PlanOf(
      "repeats: 3\n"
      "sweep:\n"
      "  mode: ablation\n"
      "  axes:\n"
      "    precision: [fp32, bf16]\n"
      "    optimizations: [channels_last]\n");
  EXPECT_EQ(RenderPlan(plan),
            "ablation sweep: 4 variants x 3 repeats = 12 trials\n"
            "\n"
            "  #  label               differs                         trials\n"
            "  0  baseline            (baseline)                           3\n"
            "  1  bf16                precision=bf16                       3\n"
            "  2  channels_last       +channels_last                       3\n"
            "  3  bf16+channels_last  precision=bf16, +channels_last       3\n"
            "\n"
            "order: interleaved: 0 1 2 3 | 0 1 2 3 | 0 1 2 3\n"
            "timeout: 3600 s per trial\n");
  EXPECT_EQ(RenderPlan(Shard(plan, "1/2")),
            "ablation sweep: 4 variants x 3 repeats = 12 trials\n"
            "shard 1/2: 6 of the 12 trials\n"
            "\n"
            "  #  label               differs                         trials\n"
            "  1  bf16                precision=bf16                       3\n"
            "  3  bf16+channels_last  precision=bf16, +channels_last       3\n"
            "\n"
            "order: interleaved: 1 3 | 1 3 | 1 3\n"
            "timeout: 3600 s per trial\n");
}

TEST(RenderPlanTest, SingleAndShuffled) {
  EXPECT_EQ(RenderPlan(PlanOf("trial_timeout_s: 90.5\n")),
            "no sweep: 1 variant x 1 repeat = 1 trial\n"
            "\n"
            "  #  label     differs     trials\n"
            "  0  baseline  (baseline)       1\n"
            "\n"
            "order: interleaved: 0\n"
            "timeout: 90.5 s per trial\n");
  const std::string text = RenderPlan(PlanOf("repeats: 2\norder: shuffled\norder_seed: 5\n" + kThree));
  EXPECT_NE(text.find("\norder: shuffled (seed 5): "), std::string::npos) << text;
}

TEST(RenderPlanTest, LongOrdersAreCut) {
  const std::string text = RenderPlan(PlanOf("repeats: 30\norder: sequential\n" + kThree));
  EXPECT_EQ(text.find("sequential sweep"), std::string::npos);  // the mode is grid; the order sequential
  EXPECT_NE(text.find("grid sweep: 3 variants x 30 repeats = 90 trials\n"), std::string::npos) << text;
  EXPECT_NE(text.find("order: sequential: 0 0 0"), std::string::npos) << text;
  EXPECT_NE(text.find(" | 1 1 1"), std::string::npos) << text;
  EXPECT_NE(text.find(" ... (26 more)\n"), std::string::npos) << text;
}

}  // namespace
}  // namespace runx::spec::test

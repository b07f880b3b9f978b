// The step check's verdict (engine::JudgeStep): bounds from the tolerance and the floor, and the
// cases that are never ok. The runs themselves are tested through the runx binary
// (tests/integration/verify_test.cc).
#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "worker/step_check.h"

namespace runx::engine {
namespace {

const std::vector<double> kReference = {2.0, 1.9, 1.8};

TEST(JudgeStep, WithinTheToleranceWithoutAFloor) {
  const auto v = JudgeStep(true, kReference, {2.0, 1.9001, 1.8}, 4e-4, "", std::nullopt, std::nullopt);
  EXPECT_TRUE(v.ok) << v.reason;
  EXPECT_TRUE(v.floor_name.empty());
  EXPECT_DOUBLE_EQ(*v.loss_bound, 1e-3);
  EXPECT_DOUBLE_EQ(*v.weight_bound, 1e-3);
  EXPECT_NEAR(*v.loss_diff, 1e-4 / 1.9, 1e-12);
}

TEST(JudgeStep, AWrongUpdateFailsOnTheWeightsEvenWhenTheLossesAgree) {
  // A 10% error in every gradient: the first loss is computed before any update, the next ones
  // barely move, the weights are off by a tenth of the update.
  const auto v = JudgeStep(true, kReference, {2.0, 1.9002, 1.8004}, 0.1, "the step in the other memory format",
                           std::vector<double>{2.0, 1.9, 1.8000001}, 3e-6);
  EXPECT_FALSE(v.ok);
  EXPECT_FALSE(v.could_not_tell);
  EXPECT_EQ(v.reason, "its weights differ from the reference's by 1.00e-01 of the update, over the bound 1.00e-03");
}

TEST(JudgeStep, TheFloorWidensTheBound) {
  // bf16: eager bf16 is 0.3 of the update from fp32; the candidate 0.5 is within 2x that.
  const auto v = JudgeStep(false, kReference, {2.01, 1.91, 1.81}, 0.5, "the step without x, bf16",
                           std::vector<double>{2.005, 1.905, 1.81}, 0.3);
  EXPECT_TRUE(v.ok) << v.reason;
  EXPECT_DOUBLE_EQ(*v.weight_bound, 0.6);
  EXPECT_DOUBLE_EQ(*v.loss_bound, 2e-2);  // the floor's 2.5e-3 x 2 is under the bf16 tolerance
  const auto far = JudgeStep(false, kReference, {2.01, 1.91, 1.81}, 0.7, "the step without x, bf16",
                             std::vector<double>{2.005, 1.905, 1.81}, 0.3);
  EXPECT_FALSE(far.ok);
}

TEST(JudgeStep, LossesOutsideTheBoundFail) {
  const auto v = JudgeStep(true, kReference, {2.1, 1.9, 1.8}, 0.0, "", std::nullopt, std::nullopt);
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.reason, "its losses differ from the reference's by up to 5.00e-02 (relative), over the bound 1.00e-03");
}

TEST(JudgeStep, NotFiniteMissingOrShortIsNeverOk) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_FALSE(JudgeStep(true, kReference, {2.0, nan, 1.8}, 0.0, "", std::nullopt, std::nullopt).ok);
  EXPECT_FALSE(JudgeStep(true, kReference, {2.0, 1.9}, 0.0, "", std::nullopt, std::nullopt).ok);
  EXPECT_FALSE(JudgeStep(true, kReference, kReference, std::nullopt, "", std::nullopt, std::nullopt).ok);
  const auto v = JudgeStep(true, {2.0, nan, 1.8}, kReference, 0.0, "", std::nullopt, std::nullopt);
  EXPECT_FALSE(v.ok);
  EXPECT_TRUE(v.could_not_tell);
}

}  // namespace
}  // namespace runx::engine

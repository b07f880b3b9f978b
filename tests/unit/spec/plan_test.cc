// Plan's enums and SharedConfig (a variant's config, shared by its repeats, read like a json).
#include <gtest/gtest.h>

#include "spec/plan.h"
#include "test_util.h"

namespace runx::spec::test {
namespace {

using nlohmann::json;

TEST(Plan, ModeAndOrderNames) {
  for (const auto m : {SweepMode::kSingle, SweepMode::kGrid, SweepMode::kAblation, SweepMode::kAllSubsets})
    EXPECT_EQ(ParseSweepMode(Name(m)), m);
  for (const auto o : {TrialOrder::kInterleaved, TrialOrder::kShuffled, TrialOrder::kSequential})
    EXPECT_EQ(ParseTrialOrder(Name(o)), o);
  EXPECT_EQ(Name(SweepMode::kAllSubsets), "all_subsets");
  EXPECT_EQ(Name(TrialOrder::kShuffled), "shuffled");
}

// The engine's calls, as written there (engine/runner.cc, engine/sweep.cc), compile and read
// the config.
std::string TakesJson(const json& config) { return config.value("device", "auto"); }

TEST(SharedConfig, ReadsLikeTheJsonItHolds) {
  PlannedTrial t;
  t.config = SharedConfig(json::parse(R"({"device": "cuda:1", "data": {"batch_size": 8}})"));
  const std::string device;
  EXPECT_EQ(device.empty() ? t.config.value("device", "auto") : device, "cuda:1");
  EXPECT_EQ(t.config.value("seed", 3), 3);
  EXPECT_EQ(TakesJson(t.config), "cuda:1");
  EXPECT_EQ(t.config.dump(), R"({"data":{"batch_size":8},"device":"cuda:1"})");
  EXPECT_TRUE(t.config.contains("data"));
  EXPECT_EQ(t.config["data"]["batch_size"], json(8));
  EXPECT_EQ(t.config.at("data").at("batch_size"), json(8));
  EXPECT_EQ(t.config->size(), 2u);
  EXPECT_EQ(t.config, json::parse(R"({"device": "cuda:1", "data": {"batch_size": 8}})"));
  const json copy = t.config;  // a copy, when one is wanted
  EXPECT_EQ(copy["device"], json("cuda:1"));
  EXPECT_TRUE(SharedConfig().get().is_null());
}

TEST(SharedConfig, RepeatsShareTheirVariantsConfig) {
  const Plan plan = PlanOf("repeats: 3\nsweep: {axes: {data.batch_size: [4, 8]}}\n");
  ASSERT_EQ(plan.trials.size(), 6u);
  for (const auto& a : plan.trials)
    for (const auto& b : plan.trials) EXPECT_EQ(a.config.SharedWith(b.config), a.variant_index == b.variant_index);
}

}  // namespace
}  // namespace runx::spec::test

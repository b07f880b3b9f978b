// The setup phase: techniques created, configured and checked; seed and numerics.
#include "trial/setup.h"

#include <gtest/gtest.h>

#include "trial_support.h"

namespace runx::engine {
namespace {

using testing::TestPlugins;
using testing::TinyConfig;

TEST(TrialSetup, CreatesTheListedTechniquesAndRecordsTheirVersions) {
  const auto config = TinyConfig({{"optimizations", {{"test_good", nlohmann::json::object()}}}});
  std::vector<ActiveTechnique> active;
  std::map<std::string, std::string> env;
  EXPECT_FALSE(CreateTechniques(config, TestPlugins(), torch::kCPU, active, env).has_value());
  ASSERT_EQ(active.size(), 1u);
  EXPECT_EQ(active[0].name, "test_good");
  EXPECT_EQ(env.at("plugin.test_good"), "0.1.2");
}

TEST(TrialSetup, Bf16AddsAmp) {
  const auto config = TinyConfig({{"precision", "bf16"}});
  std::vector<ActiveTechnique> active;
  std::map<std::string, std::string> env;
  EXPECT_FALSE(CreateTechniques(config, TestPlugins(), torch::kCPU, active, env).has_value());
  ASSERT_EQ(active.size(), 1u);
  EXPECT_EQ(active[0].name, "amp");
  EXPECT_EQ(env.count("plugin.amp"), 1u);
}

// Each technique's resolved settings are what the trial records: amp's `auto` loss scale is
// decided by amp (none for bf16), and the parent's check plans the same techniques.
TEST(TrialSetup, RecordsWhatEachTechniqueResolved) {
  const auto config = TinyConfig({{"precision", "bf16"}, {"optimizations", {{"amp", {{"growth_interval", 7}}}}}});
  std::vector<ActiveTechnique> active;
  std::map<std::string, std::string> env;
  ASSERT_FALSE(CreateTechniques(config, TestPlugins(), torch::kCPU, active, env).has_value());
  EXPECT_EQ(nlohmann::json::parse(env.at("technique.amp")),
            (nlohmann::json{{"dtype", "bf16"}, {"loss_scale", "none"}, {"growth_interval", 7}}));

  const TrialTechniques planned = PlanTechniques(config, TestPlugins(), torch::kCPU);
  EXPECT_EQ(*planned.plan->technique("amp"), nlohmann::json::parse(env.at("technique.amp")));
  EXPECT_EQ(planned.plan->technique("cuda_graphs"), nullptr);
  EXPECT_EQ(planned.plan->task(), Task::kTrain);
  EXPECT_FALSE(CheckTechniques(planned).has_value());
}

TEST(TrialSetup, ARefusalNamesTheTechniqueAndItsReason) {
  const auto config = TinyConfig({{"model", {{"name", "mlp"}}},
                                  {"data", {{"shape", {12}}}},
                                  {"optimizations", {{"channels_last", nlohmann::json::object()}}}});
  std::vector<ActiveTechnique> active;
  std::map<std::string, std::string> env;
  EXPECT_EQ(
      CreateTechniques(config, TestPlugins(), torch::kCPU, active, env).value_or(""),
      "channels_last: channels_last needs image samples [channels, height, width]; data.shape has 1 dimension(s)");
  EXPECT_EQ(env.count("plugin.channels_last"), 0u);
}

TEST(TrialSetup, AnUnknownTechniqueIsATechniqueFailure) {
  const auto config = TinyConfig({{"optimizations", {{"no_such_technique", nlohmann::json::object()}}}});
  std::vector<ActiveTechnique> active;
  std::map<std::string, std::string> env;
  try {
    CreateTechniques(config, TestPlugins(), torch::kCPU, active, env);
    FAIL() << "no exception";
  } catch (const TechniqueFailure& e) {
    EXPECT_EQ(std::string(e.what()), "technique 'no_such_technique': no plugin provides technique 'no_such_technique'");
  }
}

TEST(TrialSetup, SeedIsDeterminismsOwnElseTheExperiments) {
  const auto seed = [](const nlohmann::json& config) { return spec::TrialConfig::From(config).trial_seed(); };
  EXPECT_EQ(seed(TinyConfig()), 3u);
  auto unseeded = TinyConfig();
  unseeded.erase("seed");
  EXPECT_EQ(seed(unseeded), 0u);
  EXPECT_EQ(seed(TinyConfig({{"optimizations", {{"determinism", {{"seed", 11}}}}}})), 11u);
}

TEST(TrialSetup, NumericsSeedTorch) {
  SetNumerics(spec::TrialConfig::From(TinyConfig()), torch::kCPU, 7);
  const auto a = torch::rand({4});
  torch::manual_seed(7);
  EXPECT_TRUE(torch::equal(a, torch::rand({4})));
}

}  // namespace
}  // namespace runx::engine

// Expand: an experiment without a sweep, config hashes, axes given as nested mappings and
// overrides, and errors located by the experiment's source map.
#include <set>

#include <gtest/gtest.h>

#include "spec/sweep.h"
#include "test_util.h"

namespace runx::spec::test {
namespace {

using nlohmann::json;
using Strings = std::vector<std::string>;

TEST(Sweep, NoSweepIsOneBaselineTrialNamedByWhatItRuns) {
  const Experiment e = LoadText("x.yaml", kBase + "precision: bf16\noptimizations: [channels_last]\n", {}, Schemas());
  const Plan plan = Expand(e, Schemas());
  ASSERT_EQ(plan.trials.size(), 1u);
  EXPECT_EQ(plan.mode, "single");
  EXPECT_EQ(plan.variants, 1);
  const PlannedTrial& t = plan.trials[0];
  EXPECT_TRUE(t.is_baseline);
  EXPECT_EQ(t.label, "bf16+channels_last");  // as the trial is labelled; "baseline" only with no changes
  EXPECT_EQ(t.differs, "");
  EXPECT_EQ(t.config["precision"], json("bf16"));
  EXPECT_EQ(t.config["optimizations"]["channels_last"], json::parse(R"({"inputs": true})"));
  for (const char* key : {"sweep", "repeats", "order", "order_seed", "trial_timeout_s"})
    EXPECT_FALSE(t.config.contains(key)) << key;
  EXPECT_EQ(t.config_hash, Sha256Hex(t.config.dump()));
  EXPECT_EQ(e.config["repeats"], json(1));  // the experiment keeps them, with defaults
  EXPECT_EQ(e.config["order"], json("interleaved"));
  EXPECT_EQ(e.config["trial_timeout_s"], json(3600));
}

TEST(Sweep, ConfigHashIgnoresHowTrialsRun) {
  const std::string yaml = "sweep: {mode: ablation, axes: {precision: [fp32, bf16], optimizations: [channels_last]}}\n";
  const Plan a = PlanOf(yaml);
  const Plan b = PlanOf(yaml, {"repeats=5", "order=shuffled", "order_seed=3", "trial_timeout_s=10"});
  ASSERT_EQ(b.trials.size(), 20u);
  std::set<std::string> hashes;
  for (const auto& t : a.trials) {
    hashes.insert(t.config_hash);
    EXPECT_EQ(t.config_hash, Sha256Hex(t.config.dump()));
    for (const auto& u : b.trials)
      if (u.label == t.label) EXPECT_EQ(u.config_hash, t.config_hash) << t.label;
  }
  EXPECT_EQ(hashes.size(), 4u);  // one per variant
  EXPECT_EQ(b.trial_timeout_s, 10);
  // The same for a single trial; and the hash does not depend on the sweep around it.
  EXPECT_EQ(PlanOf("").trials[0].config_hash, PlanOf("repeats: 2\ntrial_timeout_s: 5\n").trials[0].config_hash);
  EXPECT_EQ(PlanOf("").trials[0].config, a.trials[0].config);
  EXPECT_EQ(PlanOf("").trials[0].config_hash, a.trials[0].config_hash);
}

TEST(Sweep, NestedAxesAndOverrides) {
  const std::string yaml = "sweep:\n  axes:\n    data:\n      batch_size: [4, 8]\n";
  EXPECT_EQ(Labels(PlanOf(yaml)), (Strings{"baseline", "batch_size=8"}));
  EXPECT_EQ(Labels(PlanOf(yaml, {"sweep.axes.data.batch_size=[4, 16]"})), (Strings{"baseline", "batch_size=16"}));
  EXPECT_EQ(Labels(PlanOf("sweep: {axes: {data.batch_size: [4, 8]}}\n", {"sweep.axes.data.batch_size=[2, 4]"})),
            (Strings{"baseline", "batch_size=4"}));
  EXPECT_EQ(PlanOf(yaml, {"sweep.mode=ablation"}).mode, "ablation");
}

TEST(Expand, ErrorsAreLocatedByTheExperimentsSourceMap) {
  // Expand's own checks (the same as Load's) point into the file through exp.origins: the text
  // is not parsed again (here it is not even YAML any more, but its lines are still shown).
  Experiment e = LoadText("x.yaml", kBase + "sweep:\n  axes:\n    data.batch_size: [4, 8]\n", {}, Schemas());
  e.config["sweep"]["axes"]["data.batchsize"] = e.config["sweep"]["axes"]["data.batch_size"];
  e.text += "{{{ not yaml\n";
  try {
    Expand(e, Schemas());
    FAIL() << "no error";
  } catch (const SpecError& error) {
    EXPECT_EQ(error.Render(),
              "x.yaml:6:3: error: unknown axis 'data.batchsize' in 'sweep.axes'\n"
              "    6 |   axes:\n"
              "      |   ^\n"
              "note: expected a config path such as 'precision', 'data.batch_size' or 'train.optimizer.lr', or "
              "'optimizations'; did you mean 'data.batch_size'?\n"
              "1 error in x.yaml\n");
  }
}

TEST(Expand, ErrorsOfOverriddenValuesNameTheOverride) {
  Experiment e = LoadText("x.yaml", kBase + "sweep:\n  axes:\n    data.batch_size: [4, 8]\n",
                          Sets({"repeats=50", "sweep.axes.seed=[1, 2, 3, 4, 5, 6, 7, 8]"}), Schemas());
  e.config["sweep"]["axes"]["data.num_classes"] = json::parse("[2, 3, 4, 5, 6, 7, 8, 9]");
  e.config["sweep"]["axes"]["model.hidden"] = json::parse("[[1], [2], [3], [4], [5], [6], [7], [8]]");
  e.config["sweep"]["axes"]["precision"] = json::parse(R"(["fp32", "fp16"])");
  try {
    Expand(e, Schemas());
    FAIL() << "no error";
  } catch (const SpecError& error) {
    EXPECT_EQ(error.diagnostics().size(), 1u);
    EXPECT_EQ(error.diagnostics()[0].file, "--set repeats=50");
    EXPECT_EQ(error.diagnostics()[0].message,
              "the sweep makes 2048 variants x 50 repeats = 102400 trials; at most 100000");
  }
}

TEST(Expand, TheLargestAllowedPlan) {
  // 4096 variants x 24 repeats = 98304 trials, the most kMaxTrials allows with kMaxVariants; the
  // trials of a variant share one config (/usr/bin/time -v on this test alone: about 90 MB peak,
  // with validation; a json copy per trial, as before, about 380 MB).
  const std::string yaml =
      "repeats: 24\nsweep:\n  axes:\n    precision: [fp32, fp16]\n    data.batch_size: [1, 2, 3, 4, 5, 6, 7, 8]\n"
      "    data.num_classes: [2, 3, 4, 5, 6, 7, 8, 9]\n    seed: [1, 2, 3, 4, 5, 6, 7, 8]\n"
      "    model.hidden: [[1], [2], [3], [4]]\n";
  Plan plan;
  const double seconds = Seconds([&] { plan = PlanOf(yaml); });
  EXPECT_EQ(plan.variants, 4096);
  ASSERT_EQ(plan.trials.size(), 4096u * 24u);
  EXPECT_TRUE(plan.trials[0].config.SharedWith(plan.trials[4096].config));
  EXPECT_EQ(plan.trials[0].variant_index, plan.trials[4096].variant_index);
  EXPECT_LT(seconds, 30) << "expanding the largest plan took " << seconds << " s";
  const Plan shard = Shard(plan, "1/4");
  EXPECT_EQ(shard.trials.size(), plan.trials.size() / 4);
}

}  // namespace
}  // namespace runx::spec::test

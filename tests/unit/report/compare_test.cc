// runx compare's rule: the verdict against a threshold, matching variants by config identity,
// the regressions a gate fails on, and the outputs (table, markdown, CSV, JSON).
#include "report/compare.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace runx::report {
namespace {

Change J(double low, double high, double threshold) { return JudgeInterval({low, high}, threshold); }

TEST(Verdict, TheWholeIntervalMustClearTheThreshold) {
  EXPECT_EQ(J(1.05, 1.15, 0.02), Change::kFaster);
  EXPECT_EQ(J(0.85, 0.95, 0.02), Change::kSlower);
  // Reaching into the band and beyond it on either side: the evidence cannot tell.
  EXPECT_EQ(J(1.01, 1.09, 0.02), Change::kInconclusive);
  EXPECT_EQ(J(0.91, 0.99, 0.02), Change::kInconclusive);
  // Significant (excludes 1) but smaller than the threshold: no change, not a speedup.
  EXPECT_EQ(J(1.01, 1.01, 0.02), Change::kNoChange);
  // A threshold of 0 calls any interval that excludes 1 a change.
  EXPECT_EQ(J(1.005, 1.015, 0), Change::kFaster);
  EXPECT_EQ(J(1.005, 1.015, 0.005), Change::kInconclusive);
  // The edges belong to the band.
  EXPECT_EQ(J(1.02, 1.04, 0.02), Change::kInconclusive);
  EXPECT_EQ(J(0.96, 0.98, 0.02), Change::kInconclusive);
  EXPECT_EQ(J(0.98, 1.02, 0.02), Change::kNoChange);
  Ratio r;
  r.change = Change::kNoChange;
  EXPECT_EQ(VerdictText(r, 0.02), "no change (below the 2% threshold)");
  r.change = Change::kInconclusive;
  r.why = "the interval reaches beyond ±2%";
  EXPECT_EQ(VerdictText(r, 0.02), "inconclusive (the interval reaches beyond ±2%)");
  r.change = Change::kFaster;
  EXPECT_EQ(VerdictText(r, 0.02), "faster");
  r.change = Change::kSlower;
  EXPECT_EQ(VerdictText(r, 0.02), "slower");
}

// A trial of a run with `repeats` repeats x 20 steps of about `ms` each (+-0.5%).
void AddVariant(CompareSide& side, const std::string& label, const std::string& config, double ms, int repeats = 3,
                const std::string& status = "ok") {
  for (int r = 0; r < repeats; ++r) {
    store::RunTrial t;
    t.trial_id = static_cast<int64_t>(side.trials.size()) + 1 + side.run_id * 1000;
    t.label = label;
    t.repeat_index = r;
    t.status = *ParseTrialStatus(status);
    t.config_hash = config;
    t.env_hash = "env";
    t.platform_hash = "platform";
    t.host = "box";
    t.sweep = "sweep" + std::to_string(side.run_id);
    if (status == "ok") {
      for (int i = 0; i < 20; ++i) t.measured_steps.emplace_back(ms * (1 + 0.005 * ((i * 7 + r) % 5 - 2)), 64.0);
    }
    side.trials.push_back(t);
  }
}

class CompareTest : public ::testing::Test {
 protected:
  void SetUp() override {
    a_.run_id = 1;
    b_.run_id = 2;
    AddVariant(a_, "baseline", "c-base", 10.0);
    AddVariant(b_, "baseline", "c-base", 10.0);  // same
    AddVariant(a_, "bf16", "c-bf16", 5.0);
    AddVariant(b_, "bf16", "c-bf16", 6.0);  // 20% slower: a regression
    AddVariant(a_, "cl", "c-cl", 8.0);
    AddVariant(b_, "cl", "c-cl", 6.0);            // faster
    AddVariant(a_, "fp16", "c-fp16", 4.0);        // only in A
    AddVariant(b_, "graphs", "c-graphs", 3.0);    // only in B
    AddVariant(b_, "fp16", "c-fp16-other", 4.0);  // same label, another configuration
  }
  CompareSide a_, b_;
};

TEST_F(CompareTest, VariantsMatchOnTheirConfigIdentity) {
  const Comparison c = Compare(a_, b_, {});
  ASSERT_EQ(c.variants.size(), 3u);
  EXPECT_EQ(c.variants[0].label(), "baseline");
  EXPECT_EQ(c.variants[0].ratio->change, Change::kNoChange);
  EXPECT_NEAR(c.variants[0].ratio->estimate, 1.0, 1e-9);
  // 3 + 3 processes, each side's about its own run's mean: 4 degrees of freedom.
  EXPECT_EQ(c.variants[0].ratio->error.df, 4);
  EXPECT_FALSE(c.variants[0].ratio->same_run);
  EXPECT_EQ(c.variants[1].label(), "bf16");
  EXPECT_EQ(c.variants[1].ratio->change, Change::kSlower);
  EXPECT_NEAR(c.variants[1].ratio->estimate, 5.0 / 6.0, 1e-3);
  EXPECT_EQ(c.variants[2].ratio->change, Change::kFaster);
  EXPECT_EQ(c.only_in_a, std::vector<std::string>{"fp16"});
  EXPECT_EQ(c.only_in_b, (std::vector<std::string>{"graphs", "fp16"}));
  EXPECT_EQ(c.Regressions(), std::vector<std::string>{"bf16"});
}

TEST_F(CompareTest, ALargeThresholdHidesTheChanges) {
  CompareOptions options;
  options.threshold = 0.5;
  const Comparison c = Compare(a_, b_, options);
  for (const ComparedVariant& v : c.variants) EXPECT_EQ(v.ratio->change, Change::kNoChange) << v.label();
  EXPECT_TRUE(c.Regressions().empty());
}

TEST_F(CompareTest, TwoVariantsByLabel) {
  CompareSide a = a_, b = a_;
  a.label = "baseline";
  b.label = "cl";
  const Comparison c = Compare(a, b, {});
  ASSERT_EQ(c.variants.size(), 1u);
  EXPECT_EQ(c.variants[0].label(), "baseline -> cl");
  EXPECT_NEAR(c.variants[0].ratio->estimate, 10.0 / 8.0, 1e-3);
  EXPECT_EQ(c.variants[0].ratio->change, Change::kFaster);
  b.label = "nope";
  EXPECT_THROW(
      {
        try {
          Compare(a, b, {});
        } catch (const store::StoreError& e) {
          EXPECT_STREQ(e.what(), "run 1 has no variant 'nope'");
          throw;
        }
      },
      store::StoreError);
}

TEST_F(CompareTest, EnergyPerSampleBesideTheRatioWhereASideWasMetered) {
  const TextTable plain = CompareTextTable(Compare(a_, b_, {}));
  EXPECT_EQ(plain.headers[3], "B/A (95% CI)");  // nothing metered: no energy columns
  // bf16 metered in both runs, median over its ok trials: 0.02 J/sample in A; 0.03 in B
  for (auto* side : {&a_, &b_}) {
    int i = 0;
    for (store::RunTrial& t : side->trials) {
      if (t.label != "bf16") continue;
      t.joules_per_sample = (side == &a_ ? 0.02 : 0.03) + 0.001 * (i++ - 1);
      t.power_w = 400;
    }
  }
  const Comparison c = Compare(a_, b_, {});
  EXPECT_DOUBLE_EQ(*c.variants[1].joules_per_sample_a, 0.02);
  EXPECT_DOUBLE_EQ(*c.variants[1].joules_per_sample_b, 0.03);
  EXPECT_FALSE(c.variants[0].joules_per_sample_a);
  const TextTable t = CompareTextTable(c);
  ASSERT_EQ(t.headers.size(), 9u);
  EXPECT_EQ(t.headers[3], "A J/sample");
  EXPECT_EQ(t.headers[4], "B J/sample");
  EXPECT_EQ(t.rows[0][3], "-");
  EXPECT_EQ(t.rows[1][3], "0.02");
  EXPECT_EQ(t.rows[1][4], "0.03");
  const DataTable d = CompareDataTable(c);
  EXPECT_EQ(d.columns[d.columns.size() - 4], "joules_per_sample_a");
  EXPECT_EQ(std::get<double>(d.rows[1][d.columns.size() - 1]), 400.0);
}

TEST_F(CompareTest, TheSameTrialsInBothRunsAreNamed) {
  const Comparison c = Compare(a_, a_, {});
  ASSERT_EQ(c.variants.size(), 4u);
  EXPECT_EQ(c.variants[0].ratio->why, "the same trials: one run reused the other's results; --force measures again");
  EXPECT_EQ(c.variants[0].ratio->change, Change::kInconclusive);
}

TEST_F(CompareTest, AVariantWithoutOkTrialsHasNoRatio) {
  AddVariant(a_, "oom", "c-oom", 1.0, 2, "oom");
  AddVariant(b_, "oom", "c-oom", 1.0);
  const Comparison c = Compare(a_, b_, {});
  ASSERT_EQ(c.variants.size(), 4u);
  EXPECT_FALSE(c.variants[3].ratio);
  EXPECT_EQ(c.variants[3].note, "no ok trial in A");
  EXPECT_TRUE(c.Regressions().empty() || c.Regressions() == std::vector<std::string>{"bf16"});
}

TEST_F(CompareTest, NoisyRepeatsAskForMoreRepeats) {
  CompareSide a, b;
  a.run_id = 1;
  b.run_id = 2;
  // Two repeats that disagree (2.20 and 3.79 ms) on both sides: the interval is wide.
  AddVariant(a, "x", "c-x", 2.20, 1);
  AddVariant(a, "x", "c-x", 3.79, 1);
  a.trials[1].repeat_index = 1;
  AddVariant(b, "x", "c-x", 2.25, 1);
  AddVariant(b, "x", "c-x", 3.70, 1);
  b.trials[1].repeat_index = 1;
  const Comparison c = Compare(a, b, {});
  ASSERT_EQ(c.variants.size(), 1u);
  const ComparedVariant& v = c.variants[0];
  EXPECT_TRUE(v.noise_a.unstable());
  EXPECT_TRUE(v.noise_b.unstable());
  EXPECT_EQ(v.ratio->change, Change::kInconclusive);
  EXPECT_EQ(v.ratio->why, "the interval reaches beyond ±2%");
  ASSERT_TRUE(v.ratio->repeats_needed);
  EXPECT_GT(*v.ratio->repeats_needed, 100);  // processes 40% apart: a 2% verdict needs very many
}

store::RunOverview MakeRun(int64_t id, const std::string& sha, const std::string& build) {
  store::RunOverview r;
  r.id = id;
  r.experiment = "tiny";
  r.status = "ok";
  r.started_at = "2026-12-0" + std::to_string(id) + "T10:00:00Z";
  r.host = "box";
  r.git_sha = sha;
  r.git_dirty = id == 2;
  r.build_type = "Release";
  r.runx_build = build;
  r.devices = {"cpu"};
  r.platforms = {"p1"};
  r.environment = {{"libtorch_version", "1.13.0"}, {"noise.cpu_governor", id == 1 ? "performance" : "powersave"}};
  return r;
}

TEST(CompareHeader, EnvironmentDifferencesAreNamed) {
  const store::RunOverview a = MakeRun(1, "aaaa1111", "b1b1b1b1b1b1b1b1");
  store::RunOverview b = MakeRun(2, "bbbb2222", "b2b2b2b2b2b2b2b2");
  EXPECT_EQ(EnvironmentDifferences(a, b),
            (std::vector<std::string>{"runx build: b1b1b1b1b1b1 (git aaaa111) vs b2b2b2b2b2b2 (git bbbb222-dirty)",
                                      "noise.cpu_governor: performance vs powersave"}));
  b.runx_build = a.runx_build;
  b.environment = a.environment;
  b.platforms = {"p2"};
  EXPECT_EQ(EnvironmentDifferences(a, b),
            std::vector<std::string>{"platform (LibTorch, CUDA, cuDNN, device): p1 vs p2"});
  EXPECT_EQ(DescribeRun(a), "run 1 of tiny: runx aaaa111 Release, 2026-12-01 10:00, box, cpu, ok");
  b = a;
  b.id = 7;
  b.runs = {7, 8};
  b.tag = "before-fix";
  b.user_git_sha = "1234567890abcdef";
  b.user_git_dirty = true;
  b.note = "new loader";
  b.measured = false;
  EXPECT_EQ(DescribeRun(b),
            "run 7 (a sweep of 2 runs: 7, 8) 'before-fix' of tiny at commit 1234567-dirty: runx aaaa111 Release, "
            "2026-12-01 10:00, box, cpu, ok (measured nothing: every trial reused); note: new loader");
  EXPECT_EQ(EnvironmentDifferences(a, b), std::vector<std::string>{"your commit: - vs 1234567-dirty"});
}

TEST_F(CompareTest, OutputsInEveryFormat) {
  const Comparison c = Compare(a_, b_, {});
  const store::RunOverview a = MakeRun(1, "aaaa1111", "b1");
  const store::RunOverview b = MakeRun(2, "bbbb2222", "b1");
  const std::string table = RenderComparison(c, a, b, OutputFormat::kTable, Gate::kRegressions);
  EXPECT_NE(table.find("A: run 1 of tiny"), std::string::npos) << table;
  EXPECT_NE(table.find("environment differs: noise.cpu_governor: performance vs powersave"), std::string::npos)
      << table;
  EXPECT_NE(table.find("variant   A samples/s  B samples/s  B/A (95% CI)"), std::string::npos) << table;
  EXPECT_NE(table.find("only in A: fp16\n"), std::string::npos) << table;
  EXPECT_NE(table.find("only in B: graphs, fp16\n"), std::string::npos) << table;
  EXPECT_NE(table.find("regression gate: failed: 1 slower beyond 2%: bf16\n"), std::string::npos) << table;
  EXPECT_NE(table.find("-16.7%"), std::string::npos) << table;
  const std::string md = RenderComparison(c, a, b, OutputFormat::kMarkdown, Gate::kOff);
  EXPECT_NE(md.find("| variant | A samples/s | B samples/s |"), std::string::npos) << md;
  EXPECT_NE(md.find("| --- | --: | --: |"), std::string::npos) << md;
  EXPECT_EQ(md.find("regression gate"), std::string::npos) << md;
  const std::string csv = RenderComparison(c, a, b, OutputFormat::kCsv, Gate::kOff);
  EXPECT_EQ(csv.rfind("label_a,label_b,samples_per_s_a,", 0), 0u) << csv;
  EXPECT_NE(csv.find("\r\nbf16,bf16,"), std::string::npos) << csv;
  const auto json = nlohmann::json::parse(RenderComparison(c, a, b, OutputFormat::kJson, Gate::kRegressions));
  EXPECT_EQ(json["a"]["run_id"], 1);
  EXPECT_EQ(json["threshold"], 0.02);
  ASSERT_EQ(json["variants"].size(), 3u);
  EXPECT_EQ(json["variants"][1]["verdict"], "slower");
  EXPECT_EQ(json["variants"][1]["ratio_df"], 4);
  EXPECT_EQ(json["regressions"], nlohmann::json::array({"bf16"}));
  EXPECT_EQ(json["gate_failures"], nlohmann::json::array({"bf16"}));
  EXPECT_EQ(json["only_in_b"], nlohmann::json::array({"graphs", "fp16"}));
}

// One process a side and nothing earlier: every ratio is inconclusive, the gate passes unless
// asked to fail on inconclusive comparisons, and the text says what would settle it.
TEST(CompareGate, OneProcessEachIsInconclusiveAndOnlyTheStrictGateFails) {
  CompareSide a, b;
  a.run_id = 1;
  b.run_id = 2;
  AddVariant(a, "baseline", "c-base", 10.0, 1);
  AddVariant(b, "baseline", "c-base", 13.0, 1);  // 23% slower, but one process each
  const Comparison c = Compare(a, b, {});
  ASSERT_EQ(c.variants.size(), 1u);
  const Ratio& r = *c.variants[0].ratio;
  EXPECT_EQ(r.change, Change::kInconclusive);
  EXPECT_FALSE(r.interval);
  EXPECT_EQ(r.evidence.within.df, 0);  // one process a run
  EXPECT_FALSE(r.error.known());
  EXPECT_EQ(r.why, "1 process each: run-to-run spread unknown; repeats: 3 would measure it");
  EXPECT_TRUE(c.Regressions().empty());
  EXPECT_TRUE(c.GateFailures(Gate::kRegressions).empty());
  EXPECT_EQ(c.GateFailures(Gate::kRegressionsOrInconclusive), std::vector<std::string>{"baseline"});
  const std::string text = RenderComparison(c, MakeRun(1, "aaaa1111", "b1"), MakeRun(2, "aaaa1111", "b1"),
                                            OutputFormat::kTable, Gate::kRegressionsOrInconclusive);
  EXPECT_NE(text.find("0.769 (no interval)  -23.1%"), std::string::npos) << text;
  EXPECT_NE(text.find("inconclusive: baseline: 1 process each: run-to-run spread unknown; repeats: 3 would measure "
                      "it\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("regression gate: failed: 1 slower beyond 2% or inconclusive: baseline\n"), std::string::npos)
      << text;
}

// Earlier runs of the same configuration on the same host tell the run-to-run spread a single
// run cannot: the same one-process comparison becomes a verdict when earlier runs agree with
// each other, and stays inconclusive when they do not.
TEST(CompareGate, EarlierRunsOfTheConfigurationTellTheSpread) {
  CompareSide a, b;
  a.run_id = 1;
  b.run_id = 2;
  AddVariant(a, "baseline", "c-base", 10.0, 1);
  AddVariant(b, "baseline", "c-base", 13.0, 1);  // 23% slower
  const auto earlier = [](std::vector<double> factors) {
    std::vector<store::ProcessRate> out;
    for (size_t i = 0; i < factors.size(); ++i) {
      out.push_back({static_cast<int64_t>(100 + i), "c-base", "env", "box", "earlier" + std::to_string(i),
                     6400.0 * factors[i], std::nullopt, std::nullopt});
    }
    out.push_back({200, "c-base", "env", "other-host", "x", 100.0, std::nullopt, std::nullopt});  // not this host
    out.push_back({201, "c-other", "env", "box", "y", 50.0, std::nullopt, std::nullopt});         // another config
    return out;
  };
  // Runs that moved by up to 25%: a 23% drop is within what runs do.
  const Ratio noisy = *Compare(a, b, {}, SpreadBook(earlier({1, 1.25, 0.8, 1.1}))).variants[0].ratio;
  EXPECT_EQ(noisy.evidence.between.df, 3);  // 4 earlier runs of this configuration on this host
  EXPECT_EQ(noisy.evidence.between.values, 4);
  ASSERT_TRUE(noisy.interval);
  EXPECT_EQ(noisy.change, Change::kInconclusive);
  // Runs that agree within 1%: the drop is a regression.
  const Ratio quiet = *Compare(a, b, {}, SpreadBook(earlier({1, 1.01, 1, 1.01}))).variants[0].ratio;
  ASSERT_TRUE(quiet.interval);
  EXPECT_EQ(quiet.error.df, 3);
  EXPECT_EQ(quiet.change, Change::kSlower);
  EXPECT_LT(quiet.interval->high, 0.98);
}

// A run compared with itself, and runs whose --set values leave no configuration in common,
// say what would answer the question.
TEST_F(CompareTest, HintsForComparisonsThatCannotAnswer) {
  store::RunOverview a = MakeRun(1, "aaaa1111", "b1");
  std::string text = RenderComparison(Compare(a_, a_, {}), a, a, OutputFormat::kTable, Gate::kOff);
  EXPECT_NE(text.find("A and B are both run 1: a run compared with itself measures nothing; name two runs, or two "
                      "variants of it (e.g. 1:baseline 1:<label>)"),
            std::string::npos)
      << text;
  CompareSide other;
  other.run_id = 2;
  AddVariant(other, "baseline", "c-base-128", 10.0);
  store::RunOverview b = MakeRun(2, "aaaa1111", "b1");
  b.overrides_json = R"(["data.batch_size=128"])";
  text = RenderComparison(Compare(a_, other, {}), a, b, OutputFormat::kTable, Gate::kOff);
  EXPECT_NE(text.find("no variant with the same configuration in both runs"), std::string::npos) << text;
  EXPECT_NE(text.find("the runs' --set values differ (A: [], B: [\"data.batch_size=128\"]), so no configuration is in "
                      "both; to put two variants side by side anyway: runx compare 1:baseline 2:baseline"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace runx::report

// runx compare's rule: the verdict against a threshold, matching variants by config identity,
// the regressions a gate fails on, and the outputs (table, markdown, CSV, JSON).
#include "report/compare.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace runx::report {
namespace {

SpeedupInterval Interval(double estimate, double low, double high) {
  SpeedupInterval i;
  i.estimate = estimate;
  i.low = low;
  i.high = high;
  return i;
}

TEST(Verdict, TheWholeIntervalMustClearTheThreshold) {
  EXPECT_EQ(Judge(Interval(1.10, 1.05, 1.15), 0.02).change, Change::kFaster);
  EXPECT_EQ(Judge(Interval(0.90, 0.85, 0.95), 0.02).change, Change::kSlower);
  // Overlapping the band on either side: no change, and not within it.
  EXPECT_EQ(Judge(Interval(1.05, 1.01, 1.09), 0.02).change, Change::kNoChange);
  EXPECT_FALSE(Judge(Interval(1.05, 1.01, 1.09), 0.02).within_threshold);
  EXPECT_EQ(Judge(Interval(0.95, 0.91, 0.99), 0.02).change, Change::kNoChange);
  // Significant (excludes 1) but smaller than the threshold: below the threshold, not a speedup.
  const Verdict tiny = Judge(Interval(1.01, 1.01, 1.01), 0.02);
  EXPECT_EQ(tiny.change, Change::kNoChange);
  EXPECT_TRUE(tiny.within_threshold);
  EXPECT_EQ(VerdictText(tiny, 0.02), "no change (below the 2% threshold)");
  EXPECT_EQ(VerdictText(Judge(Interval(1.05, 1.01, 1.09), 0.02), 0.02), "no change (inconclusive)");
  EXPECT_EQ(VerdictText(Judge(Interval(1.10, 1.05, 1.15), 0.02), 0.02), "faster");
  EXPECT_EQ(VerdictText(Judge(Interval(0.9, 0.85, 0.95), 0.02), 0.02), "slower");
  // A threshold of 0 calls any interval that excludes 1 a change.
  EXPECT_EQ(Judge(Interval(1.01, 1.005, 1.015), 0).change, Change::kFaster);
  EXPECT_EQ(Judge(Interval(1.01, 1.005, 1.015), 0.005).change, Change::kNoChange);
  // The edges belong to the band.
  EXPECT_EQ(Judge(Interval(1.03, 1.02, 1.04), 0.02).change, Change::kNoChange);
  EXPECT_EQ(Judge(Interval(0.97, 0.96, 0.98), 0.02).change, Change::kNoChange);
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
    if (status == "ok") {
      for (int i = 0; i < 20; ++i) t.measured_steps.emplace_back(ms * (1 + 0.005 * ((i * 7 + r) % 5 - 2)), 64.0);
    }
    side.identities[t.trial_id] = {config, "platform"};
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
  EXPECT_EQ(c.variants[0].verdict.change, Change::kNoChange);
  EXPECT_TRUE(c.variants[0].verdict.within_threshold);
  EXPECT_NEAR(c.variants[0].ratio->estimate, 1.0, 1e-9);
  EXPECT_EQ(c.variants[1].label(), "bf16");
  EXPECT_EQ(c.variants[1].verdict.change, Change::kSlower);
  EXPECT_NEAR(c.variants[1].ratio->estimate, 5.0 / 6.0, 1e-3);
  EXPECT_EQ(c.variants[2].verdict.change, Change::kFaster);
  EXPECT_EQ(c.only_in_a, std::vector<std::string>{"fp16"});
  EXPECT_EQ(c.only_in_b, (std::vector<std::string>{"graphs", "fp16"}));
  EXPECT_EQ(c.Regressions(), std::vector<std::string>{"bf16"});
}

TEST_F(CompareTest, ALargeThresholdHidesTheChanges) {
  CompareOptions options;
  options.threshold = 0.5;
  const Comparison c = Compare(a_, b_, options);
  for (const ComparedVariant& v : c.variants) EXPECT_EQ(v.verdict.change, Change::kNoChange) << v.label();
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
  EXPECT_EQ(c.variants[0].verdict.change, Change::kFaster);
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

TEST_F(CompareTest, TheSameTrialsInBothRunsAreNamed) {
  const Comparison c = Compare(a_, a_, {});
  ASSERT_EQ(c.variants.size(), 4u);
  EXPECT_EQ(c.variants[0].note, "the same trials (a run reused the other's results; --force measures again)");
  EXPECT_EQ(c.variants[0].verdict.change, Change::kNoChange);
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
  EXPECT_EQ(v.verdict.change, Change::kNoChange);
  EXPECT_FALSE(v.verdict.within_threshold);
  ASSERT_TRUE(v.repeats_needed);
  EXPECT_GT(*v.repeats_needed, 2);
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
  EXPECT_EQ(DescribeRun(a), "run 1 of tiny: aaaa111 Release, 2026-12-01 10:00, box, cpu, ok");
}

TEST_F(CompareTest, OutputsInEveryFormat) {
  const Comparison c = Compare(a_, b_, {});
  const store::RunOverview a = MakeRun(1, "aaaa1111", "b1");
  const store::RunOverview b = MakeRun(2, "bbbb2222", "b1");
  const std::string table = RenderComparison(c, a, b, OutputFormat::kTable, true);
  EXPECT_NE(table.find("A: run 1 of tiny"), std::string::npos) << table;
  EXPECT_NE(table.find("environment differs: noise.cpu_governor: performance vs powersave"), std::string::npos)
      << table;
  EXPECT_NE(table.find("variant   A samples/s  B samples/s  B/A (95% CI)"), std::string::npos) << table;
  EXPECT_NE(table.find("only in A: fp16\n"), std::string::npos) << table;
  EXPECT_NE(table.find("only in B: graphs, fp16\n"), std::string::npos) << table;
  EXPECT_NE(table.find("regression gate: failed: 1 slower beyond 2%: bf16\n"), std::string::npos) << table;
  EXPECT_NE(table.find("-16.7%"), std::string::npos) << table;
  const std::string md = RenderComparison(c, a, b, OutputFormat::kMarkdown, false);
  EXPECT_NE(md.find("| variant | A samples/s | B samples/s |"), std::string::npos) << md;
  EXPECT_NE(md.find("| --- | --: | --: |"), std::string::npos) << md;
  EXPECT_EQ(md.find("regression gate"), std::string::npos) << md;
  const std::string csv = RenderComparison(c, a, b, OutputFormat::kCsv, false);
  EXPECT_EQ(csv.rfind("label_a,label_b,samples_per_s_a,", 0), 0u) << csv;
  EXPECT_NE(csv.find("\r\nbf16,bf16,"), std::string::npos) << csv;
  const auto json = nlohmann::json::parse(RenderComparison(c, a, b, OutputFormat::kJson, true));
  EXPECT_EQ(json["a"]["run_id"], 1);
  EXPECT_EQ(json["threshold"], 0.02);
  ASSERT_EQ(json["variants"].size(), 3u);
  EXPECT_EQ(json["variants"][1]["verdict"], "slower");
  EXPECT_EQ(json["regressions"], nlohmann::json::array({"bf16"}));
  EXPECT_EQ(json["only_in_b"], nlohmann::json::array({"graphs", "fp16"}));
}

}  // namespace
}  // namespace runx::report

// runx history on the example store: runs newest first, each variant against the latest earlier
// run that measured the same configuration, and marked where that run's platform was another.
#include "report/history.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "test_support.h"

namespace runx::report {
namespace {

class HistoryTest : public store::testing::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    db_ = PathOf("runx.db");
    store::testing::FillExampleStore(db_);
  }
  std::string db_;
};

// mlp_amp: run 1 (baseline x2 at 64 and 58 ms, bf16 at 42 ms, fp16 incompatible), run 2
// (baseline at 61 ms, bf16 at 35 ms): bf16 moved +18.9%, the baseline not at all, but with one
// process a side and no other run of these configurations the spread between runs is unknown:
// no arrow, "inconclusive" in the notes.
TEST_F(HistoryTest, EachRunAgainstTheRunBefore) {
  store::Store store = store::Store::Open(db_);
  const std::vector<HistoryRun> runs = BuildHistory(store, store::ListRuns(store, "mlp_amp", 0), 2, {});
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].run.id, 2);
  EXPECT_EQ(runs[0].run_below, 1);
  ASSERT_EQ(runs[0].variants.size(), 2u);
  const HistoryVariant& base = runs[0].variants[0];
  EXPECT_EQ(base.figures.label, "baseline");
  ASSERT_TRUE(base.vs_previous && base.vs_previous->ratio);
  EXPECT_EQ(base.vs_previous->ratio->change, Change::kInconclusive);
  EXPECT_EQ(ChangeCell(base, runs[0].run_below), "+0.0%");
  EXPECT_EQ(base.previous_run, 1);
  const HistoryVariant& bf16 = runs[0].variants[1];
  EXPECT_EQ(bf16.vs_previous->ratio->change, Change::kInconclusive);
  EXPECT_EQ(ChangeCell(bf16), "+18.9%");
  const std::string text = RenderHistory(runs, "mlp_amp", OutputFormat::kTable, 0.02);
  EXPECT_NE(text.find("+18.9%       inconclusive: spread unknown"), std::string::npos) << text;
  EXPECT_EQ(runs[1].run.id, 1);
  EXPECT_FALSE(runs[1].run_below);
  ASSERT_EQ(runs[1].variants.size(), 3u);
  EXPECT_EQ(ChangeCell(runs[1].variants[0]), "new");
  EXPECT_EQ(runs[1].variants[2].figures.label, "fp16");
  EXPECT_FALSE(runs[1].variants[2].figures.samples_per_s);
}

TEST_F(HistoryTest, ShownRunsAreComparedWithTheOneAfter) {
  store::Store store = store::Store::Open(db_);
  const std::vector<HistoryRun> runs = BuildHistory(store, store::ListRuns(store, "mlp_amp", 2), 1, {});
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].variants[1].previous_run, 1);
  EXPECT_EQ(ChangeCell(runs[0].variants[1]), "+18.9%");
}

// Runs that did not measure a variant are passed over: run 5 measures bf16 alone and run 4 the
// baseline alone, so run 5's bf16 is compared with run 2's, run 4's baseline with run 2's, and
// bf16 is not "new" in run 5.
TEST_F(HistoryTest, AVariantIsComparedWithTheLatestEarlierRunThatMeasuredIt) {
  {
    store::Store store = store::Store::Open(db_);
    const int64_t mlp = store.AddExperiment("mlp_amp", "experiments/mlp_amp.yaml", "name: mlp_amp\n", "sha-mlp");
    for (const auto& [day, trial] :
         {std::pair{"04", store::testing::ExampleTrial{"baseline", true, 0, "ok", "", 1000, 64}},
          std::pair{"05", store::testing::ExampleTrial{"bf16", false, 0, "ok", "", 1200, 52}}}) {
      store::RunInfo info;
      info.experiment_id = mlp;
      info.started_at = std::string("2026-12-") + day + "T10:00:00Z";
      info.host = "box";
      info.git_sha = "cccc333";
      info.runx_build = "build-cccc333";
      const int64_t run = store.BeginRun(info);
      store::TrialRecord record = store::testing::MakeTrial(run, 0, trial);
      if (trial.label == "bf16") record.platform_hash = "platform-other";  // e.g. another BLAS
      store.RecordTrial(record);
      store.EndRun(run, RunStatus::kOk, info.started_at);
    }
  }
  store::Store store = store::Store::Open(db_);
  const std::vector<int64_t> ids = store::ListRuns(store, "mlp_amp", 0);
  ASSERT_EQ(ids, (std::vector<int64_t>{5, 4, 2, 1}));
  const std::vector<HistoryRun> runs = BuildHistory(store, ids, 2, {});
  ASSERT_EQ(runs.size(), 2u);
  ASSERT_EQ(runs[0].variants.size(), 1u);
  const HistoryVariant& bf16 = runs[0].variants[0];
  EXPECT_EQ(bf16.figures.label, "bf16");
  EXPECT_EQ(runs[0].run_below, 4);
  EXPECT_EQ(bf16.previous_run, 2);  // not 4, which has no bf16
  ASSERT_TRUE(bf16.vs_previous && bf16.vs_previous->ratio);
  EXPECT_EQ(bf16.vs_previous->ratio->change, Change::kInconclusive);  // 52 ms against 35-39, one process each
  EXPECT_EQ(ChangeCell(bf16, runs[0].run_below).find("-"), 0u);
  EXPECT_NE(ChangeCell(bf16, runs[0].run_below).find(" (run 2)"), std::string::npos) << ChangeCell(bf16, 4);
  EXPECT_TRUE(bf16.platform_changed);
  EXPECT_EQ(runs[1].variants[0].previous_run, 2);  // run 4's baseline: run 2 is the run below
  EXPECT_FALSE(runs[1].variants[0].platform_changed);
  EXPECT_EQ(ChangeCell(runs[1].variants[0], runs[1].run_below).find("(run"), std::string::npos);

  const auto json = nlohmann::json::parse(RenderHistory(runs, "mlp_amp", OutputFormat::kJson, 0.02));
  EXPECT_EQ(json[0]["previous_run"], 2);
  EXPECT_EQ(json[0]["change"], "inconclusive");
  const std::string table = RenderHistory(runs, "mlp_amp", OutputFormat::kTable, 0.02);
  EXPECT_NE(table.find("(run 2)"), std::string::npos) << table;
  EXPECT_NE(table.find("other platform"), std::string::npos) << table;
  EXPECT_EQ(json[0]["platform_changed"], 1);
  EXPECT_EQ(json[1]["platform_changed"], 0);
}

TEST_F(HistoryTest, Formats) {
  store::Store store = store::Store::Open(db_);
  const std::vector<HistoryRun> runs = BuildHistory(store, store::ListRuns(store, "mlp_amp", 0), 2, {});
  const std::string table = RenderHistory(runs, "mlp_amp", OutputFormat::kTable, 0.02);
  EXPECT_EQ(table.rfind("mlp_amp: 2 runs, newest first", 0), 0u) << table;
  const size_t run2 = table.find("\n  2  -    -       bbbb222  2026-12-02 10:00  box   cpu     ok      baseline");
  const size_t run1 = table.find("\n  1  -    -       aaaa111  2026-12-01 10:00  box   cpu     ok      baseline");
  EXPECT_NE(run2, std::string::npos) << table;
  EXPECT_NE(run1, std::string::npos) << table;
  EXPECT_LT(run2, run1);
  EXPECT_NE(table.find("bf16         1729.7  37.00 (35.40-38.60)  +18.9%"), std::string::npos) << table;
  EXPECT_NE(table.find("1 incompatible"), std::string::npos) << table;
  const std::string md = RenderHistory(runs, "mlp_amp", OutputFormat::kMarkdown, 0.02);
  EXPECT_NE(md.find("| run | tag | commit | runx | date |"), std::string::npos) << md;
  EXPECT_NE(md.find("+18.9%"), std::string::npos) << md;
  const std::string csv = RenderHistory(runs, "mlp_amp", OutputFormat::kCsv, 0.02);
  EXPECT_EQ(csv.rfind("run_id,runs,tag,note,user_git_sha,user_git_dirty,git_sha,git_dirty,runx_build,started_at,", 0),
            0u)
      << csv;
  const auto json = nlohmann::json::parse(RenderHistory(runs, "mlp_amp", OutputFormat::kJson, 0.02));
  ASSERT_EQ(json.size(), 5u);  // 2 + 3 variants
  EXPECT_EQ(json[1]["label"], "bf16");
  EXPECT_EQ(json[1]["change"], "inconclusive");
  EXPECT_EQ(json[1]["why"], "1 process each: run-to-run spread unknown; repeats: 3 would measure it");
  EXPECT_EQ(json[1]["previous_run"], 1);
  EXPECT_EQ(json[2]["run_id"], 1);
  EXPECT_EQ(json[2]["change"], "new");
}

// Runs of one process each: once earlier runs of the configuration tell how much runs differ
// on this host, a drop beyond that is a regression (▼), and a run that only reused results is
// no point of the history.
TEST_F(HistoryTest, EarlierRunsThatAgreeMakeAVerdict) {
  {
    store::Store store = store::Store::Open(db_);
    const int64_t steady = store.AddExperiment("steady", "steady.yaml", "name: steady\n", "sha-steady");
    int day = 10;
    for (const double ms : {60.0, 61.0, 60.0, 61.0, 80.0}) {
      store::RunInfo info;
      info.experiment_id = steady;
      info.started_at = fmt::format("2026-12-{}T10:00:00Z", day++);
      info.host = "box";
      info.git_sha = "cccc333";
      const int64_t run = store.BeginRun(info);
      // 5 measured steps of ms..ms+4 ms, 64 samples each; the metric as the engine computes it.
      store.RecordTrial(
          store::testing::MakeTrial(run, 0, {"steady", true, 0, "ok", "", 320 / (5 * ms + 10) * 1000, ms}));
      store.EndRun(run, RunStatus::kOk, info.started_at);
    }
  }
  store::Store store = store::Store::Open(db_);
  const std::vector<HistoryRun> runs = BuildHistory(store, store::ListRuns(store, "steady", 0), 5, {});
  ASSERT_EQ(runs.size(), 5u);
  const Ratio& drop = *runs[0].variants[0].vs_previous->ratio;  // 80 against 61 ms
  EXPECT_EQ(drop.evidence.between.df, 2);                       // runs 60, 61, 60 ms
  EXPECT_EQ(drop.change, Change::kSlower);
  EXPECT_EQ(ChangeCell(runs[0].variants[0]).find("▼ -23"), 0u) << ChangeCell(runs[0].variants[0]);
  // Three runs before it: the second compared with the first has no other run to learn from.
  EXPECT_EQ(runs[3].variants[0].vs_previous->ratio->change, Change::kInconclusive);
}

}  // namespace
}  // namespace runx::report

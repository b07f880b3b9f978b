// What `runx report` draws, computed from a store whose figures are known (html_fixture.h).
#include "report/html_data.h"

#include <gtest/gtest.h>

#include <cmath>

#include "html_fixture.h"
#include "test_support.h"

namespace runx::report {
namespace {

using testing::kMiB;

class HtmlData : public store::testing::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    db_ = PathOf("runx.db");
    store::testing::FillExampleStore(db_);
    testing::AddRun4(db_);
  }
  std::string db_;
};

TEST_F(HtmlData, SpeedupsAreTheEndOfRunTables) {
  store::Store store = store::Store::Open(db_);
  const RunReport r = BuildRunReport(store, 4, {});
  ASSERT_EQ(r.variants.size(), 2u);
  EXPECT_EQ(r.variants[0].label, "baseline");
  EXPECT_TRUE(r.variants[0].is_baseline);
  EXPECT_FALSE(r.variants[0].speedup);
  ASSERT_TRUE(r.variants[1].speedup);
  const Ratio& s = *r.variants[1].speedup;
  EXPECT_DOUBLE_EQ(s.estimate, 2.0);  // every step of `fast` takes half the baseline's time
  ASSERT_TRUE(s.interval);
  EXPECT_LE(s.interval->low, 2.0);
  EXPECT_GE(s.interval->high, 2.0);
  EXPECT_TRUE(s.significant());
  EXPECT_EQ(s.change, Change::kFaster);
  // The same interval as the end-of-run report's.
  const auto rows = Summarize(store, 4);
  EXPECT_DOUBLE_EQ(rows[1].speedup->interval->low, s.interval->low);
  EXPECT_DOUBLE_EQ(rows[1].speedup->interval->high, s.interval->high);
}

TEST_F(HtmlData, StepBoxesAndPoints) {
  store::Store store = store::Store::Open(db_);
  const RunReport r = BuildRunReport(store, 4, {});
  ASSERT_EQ(r.step_boxes.size(), 2u);
  // Baseline: 10, 10, 10.1, 10.1, 10.2, 10.2, 10.3, 10.3 (two repeats; warmup steps left out).
  const StepBox& b = r.step_boxes[0];
  EXPECT_EQ(b.label, "baseline");
  EXPECT_EQ(b.steps, 8);
  EXPECT_EQ(b.shown, 8);
  EXPECT_EQ(b.stride, 1);
  EXPECT_NEAR(b.p10, 10.0, 1e-9);   // position 0.7 between two 10s
  EXPECT_NEAR(b.q1, 10.075, 1e-9);  // position 1.75: 10 + 0.75 * 0.1
  EXPECT_NEAR(b.median, 10.15, 1e-9);
  EXPECT_NEAR(b.q3, 10.225, 1e-9);
  EXPECT_NEAR(b.p90, 10.3, 1e-9);
  EXPECT_NEAR(r.step_boxes[1].median, 5.075, 1e-9);
  ASSERT_EQ(r.step_points.size(), 16u);
  EXPECT_EQ(r.step_points[0].label, "baseline");
  EXPECT_EQ(r.step_points[0].repeat, 0);
  EXPECT_DOUBLE_EQ(r.step_points[0].ms, 10.0);
  EXPECT_EQ(r.step_points[4].repeat, 1);
  EXPECT_EQ(r.step_points[8].label, "fast");
}

// Run 1: baseline 58..62 and 64..68 ms (10 steps), bf16 42..46 ms (5), fp16 incompatible.
TEST_F(HtmlData, StepPointsBeyondTheLimitAreThinnedNotTheBoxes) {
  store::Store store = store::Store::Open(db_);
  HtmlOptions options;
  options.max_points = 4;
  const RunReport r = BuildRunReport(store, 1, options);
  ASSERT_EQ(r.step_boxes.size(), 2u);  // fp16 has no step
  EXPECT_EQ(r.step_boxes[0].steps, 10);
  EXPECT_EQ(r.step_boxes[0].stride, 3);
  EXPECT_EQ(r.step_boxes[0].shown, 4);  // steps 0, 3, 6, 9
  EXPECT_NEAR(r.step_boxes[0].q1, 60.25, 1e-9);
  EXPECT_NEAR(r.step_boxes[0].median, 63, 1e-9);
  EXPECT_NEAR(r.step_boxes[0].q3, 65.75, 1e-9);
  EXPECT_EQ(r.step_boxes[1].stride, 2);
  EXPECT_EQ(r.step_boxes[1].shown, 3);
  // Repeat 0 (64..68 ms) first, then repeat 1 (58..62): steps 0, 3, 6 and 9 of those.
  ASSERT_EQ(r.step_points.size(), 7u);
  EXPECT_DOUBLE_EQ(r.step_points[0].ms, 64);
  EXPECT_DOUBLE_EQ(r.step_points[1].ms, 67);
  EXPECT_DOUBLE_EQ(r.step_points[2].ms, 59);
  EXPECT_EQ(r.step_points[2].repeat, 1);
  EXPECT_DOUBLE_EQ(r.step_points[3].ms, 62);
}

TEST_F(HtmlData, LossCurvesAreMediansOverRepeatsAndDriftIsAgainstTheBaseline) {
  store::Store store = store::Store::Open(db_);
  const RunReport r = BuildRunReport(store, 4, {});
  ASSERT_EQ(r.loss.size(), 10u);  // 5 steps (1 warmup + 4 measured) x 2 variants
  EXPECT_EQ(r.loss[0].label, "baseline");
  EXPECT_EQ(r.loss[0].step, 0);
  EXPECT_DOUBLE_EQ(r.loss[0].loss, 3.0);
  EXPECT_EQ(r.loss[0].repeats, 2);
  EXPECT_EQ(r.loss[4].step, 4);
  EXPECT_DOUBLE_EQ(r.loss[4].loss, 0.5);
  EXPECT_EQ(r.loss[5].label, "fast");
  EXPECT_DOUBLE_EQ(r.loss[5].loss, 3.5);
  ASSERT_EQ(r.drift.size(), 5u);
  for (const LossDrift& d : r.drift) {
    EXPECT_EQ(d.label, "fast");
    EXPECT_DOUBLE_EQ(d.delta, 0.5);
  }
  // Run 1: positions 2..6 (two warmup steps without a loss), bf16 as the baseline: no drift.
  const RunReport one = BuildRunReport(store, 1, {});
  ASSERT_EQ(one.loss.size(), 10u);
  EXPECT_EQ(one.loss[0].step, 2);
  EXPECT_EQ(one.drift.size(), 5u);
  for (const LossDrift& d : one.drift) EXPECT_DOUBLE_EQ(d.delta, 0.0);
}

TEST_F(HtmlData, MemoryIsTheMaximumOverOkTrials) {
  store::Store store = store::Store::Open(db_);
  const RunReport r = BuildRunReport(store, 4, {});
  ASSERT_EQ(r.memory.size(), 3u);
  EXPECT_EQ(r.memory[0].label, "baseline");
  EXPECT_EQ(r.memory[0].metric, "peak_mem_bytes");
  EXPECT_DOUBLE_EQ(r.memory[0].bytes, 110 * kMiB);
  EXPECT_EQ(r.memory[1].metric, "reserved_mem_bytes");
  EXPECT_DOUBLE_EQ(r.memory[1].bytes, 200 * kMiB);
  EXPECT_EQ(r.memory[2].label, "fast");
  EXPECT_DOUBLE_EQ(r.memory[2].bytes, 50 * kMiB);
  // Run 1: peak only; fp16 has no ok trial.
  const RunReport one = BuildRunReport(store, 1, {});
  ASSERT_EQ(one.memory.size(), 2u);
  EXPECT_DOUBLE_EQ(one.memory[0].bytes, 123456790.0);  // trials at order 0 and 1
  EXPECT_DOUBLE_EQ(one.memory[1].bytes, 123456791.0);
}

TEST_F(HtmlData, TheAutoBatchFrontierOfEachTrial) {
  store::Store store = store::Store::Open(db_);
  const RunReport r = BuildRunReport(store, 4, {});
  ASSERT_EQ(r.probes.size(), 6u);  // 3 probes x 2 repeats of `fast`
  const FrontierProbe& p = r.probes[1];
  EXPECT_EQ(p.label, "fast");
  EXPECT_EQ(p.repeat, 0);
  EXPECT_EQ(p.probe, 1);
  EXPECT_DOUBLE_EQ(p.batch, 16);
  EXPECT_TRUE(p.fits);
  EXPECT_DOUBLE_EQ(*p.step_ms, 3);
  EXPECT_DOUBLE_EQ(*p.samples_per_s, 16000.0 / 3);
  EXPECT_DOUBLE_EQ(*p.peak_bytes, 20 * kMiB);
  EXPECT_FALSE(r.probes[2].fits);
  EXPECT_DOUBLE_EQ(r.probes[2].batch, 32);
  EXPECT_FALSE(r.probes[2].samples_per_s);
  EXPECT_EQ(r.probes[3].repeat, 1);
  ASSERT_EQ(r.chosen.size(), 2u);
  EXPECT_DOUBLE_EQ(r.chosen[0].batch, 16);
  EXPECT_TRUE(BuildRunReport(store, 1, {}).probes.empty());
}

TEST_F(HtmlData, OneHistoryPerExperimentWithCompareVerdicts) {
  store::Store store = store::Store::Open(db_);
  const HtmlReport report = BuildHtmlReport(store, {4, 2, 4, 3}, {});
  ASSERT_EQ(report.runs.size(), 3u);  // 4, 2, 3: each once, in order
  EXPECT_EQ(report.runs[1].run.id, 2);
  ASSERT_EQ(report.histories.size(), 2u);
  EXPECT_EQ(report.histories[0].experiment, "mlp_amp");
  ASSERT_EQ(report.histories[0].runs.size(), 3u);  // newest first: 4, 2, 1
  const HistoryRun& newest = report.histories[0].runs[0];
  EXPECT_EQ(newest.run.id, 4);
  ASSERT_TRUE(newest.variants[0].vs_previous);
  // 788 vs 1016 samples/s, two processes against one: no earlier run tells how runs differ.
  EXPECT_EQ(newest.variants[0].vs_previous->ratio->change, Change::kInconclusive);
  EXPECT_FALSE(newest.variants[1].vs_previous);  // fast is new
  EXPECT_EQ(report.histories[1].experiment, "resnet_cl");
  HtmlOptions two;
  two.history_runs = 1;
  EXPECT_EQ(BuildHtmlReport(store, {4}, two).histories[0].runs.size(), 1u);
  EXPECT_THROW(BuildHtmlReport(store, {9}, {}), store::StoreError);
}

// A whisker of the history: the processes' mean throughput (on logs) ± Student's t, none for one.
TEST(HtmlProcessInterval, TheMeanOfTheProcessesOnLogs) {
  EXPECT_FALSE(ProcessInterval({}));
  EXPECT_FALSE(ProcessInterval({1000}));
  EXPECT_FALSE(ProcessInterval({1000, 0}));
  const auto same = ProcessInterval({500, 500, 500});
  ASSERT_TRUE(same);
  EXPECT_NEAR(same->low, 500, 1e-9);
  EXPECT_NEAR(same->high, 500, 1e-9);
  EXPECT_EQ(same->processes, 3);
  // ln 90, ln 100, ln 110: mean ln 99.67, sd 0.1002; t(0.975, 2) = 4.3027.
  const auto three = ProcessInterval({90, 100, 110});
  ASSERT_TRUE(three);
  const double l[] = {std::log(90.0), std::log(100.0), std::log(110.0)};
  const double mean = (l[0] + l[1] + l[2]) / 3;
  double squares = 0;
  for (const double x : l) squares += (x - mean) * (x - mean);
  const double half = 4.302652729911275 * std::sqrt(squares / 2) / std::sqrt(3.0);
  EXPECT_NEAR(three->low, std::exp(mean - half), 1e-6);
  EXPECT_NEAR(three->high, std::exp(mean + half), 1e-6);
  EXPECT_LT(three->low, 90);  // three processes say little: wider than their range
  EXPECT_GT(three->high, 110);
}

// A point has an interval from three processes on (kMinSpreadDf + 1): runs 4 and 1 have two a
// variant at most, and none.
TEST_F(HtmlData, AHistoryPointHasAnIntervalFromThreeProcesses) {
  const int64_t three = testing::AddThreeProcessRun(db_);
  store::Store store = store::Store::Open(db_);
  const HtmlReport report = BuildHtmlReport(store, {three}, {});
  const std::vector<HistoryInterval>& intervals = report.histories[0].intervals;
  ASSERT_EQ(intervals.size(), 1u);
  EXPECT_EQ(intervals[0].run_id, three);
  EXPECT_EQ(intervals[0].label, "baseline");
  EXPECT_EQ(intervals[0].interval.processes, 3);
  const auto expected = ProcessInterval({320 / 310.0 * 1000, 320 / 320.0 * 1000, 320 / 340.0 * 1000});
  EXPECT_NEAR(intervals[0].interval.low, expected->low, 1e-9);
  EXPECT_NEAR(intervals[0].interval.high, expected->high, 1e-9);
  EXPECT_FALSE(ProcessInterval({1000, 1100}));  // two processes: t(0.975, 1) would say nothing
}

// Exactly two distinct runs: the second against the first, as `runx compare A B`.
TEST_F(HtmlData, TwoRunsAreCompared) {
  store::Store store = store::Store::Open(db_);
  HtmlOptions options;
  options.threshold = 0.05;
  const HtmlReport two = BuildHtmlReport(store, {1, 2}, options);
  ASSERT_TRUE(two.comparison);
  EXPECT_EQ(two.comparison->a.id, 1);
  EXPECT_EQ(two.comparison->b.id, 2);
  EXPECT_EQ(two.comparison->comparison.threshold, 0.05);
  ASSERT_EQ(two.comparison->comparison.variants.size(), 2u);
  EXPECT_EQ(two.comparison->comparison.only_in_a, std::vector<std::string>{"fp16"});
  EXPECT_EQ(two.comparison->remarks.front(), "only in A: fp16");
  EXPECT_FALSE(two.comparison->environment.empty());  // another runx build
  EXPECT_FALSE(BuildHtmlReport(store, {1}, {}).comparison);
  EXPECT_FALSE(BuildHtmlReport(store, {1, 1}, {}).comparison);  // one run
  EXPECT_FALSE(BuildHtmlReport(store, {1, 2, 4}, {}).comparison);
}

}  // namespace
}  // namespace runx::report

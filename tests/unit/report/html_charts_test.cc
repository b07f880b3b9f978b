// The Vega specs of `runx report`: each chart's inline data and named marks, from the store of
// html_fixture.h. Whether Vega draws them is the browser test's (tests/integration/report_test.cc).
#include "report/html_charts.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <functional>
#include <set>

#include "html_fixture.h"
#include "test_support.h"

namespace runx::report {
namespace {

using json = nlohmann::ordered_json;

// The values of data set `name` of `spec`.
const json& DataOf(const json& spec, const std::string& name) {
  for (const json& d : spec.at("data")) {
    if (d.at("name") == name) return d.at("values");
  }
  throw std::out_of_range("no data " + name + " in " + spec.dump());
}

// The mark named `name` anywhere in `spec` (groups included), or null.
json MarkOf(const json& spec, const std::string& name) {
  json found;
  std::function<void(const json&)> walk = [&](const json& node) {
    if (!node.contains("marks")) return;
    for (const json& m : node.at("marks")) {
      if (m.value("name", "") == name) found = m;
      walk(m);
    }
  };
  walk(spec);
  return found;
}

class HtmlCharts : public store::testing::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    db_ = PathOf("runx.db");
    store::testing::FillExampleStore(db_);
    testing::AddRun4(db_);
    store::Store store = store::Store::Open(db_);
    report_ = BuildHtmlReport(store, {4, 1}, {});
  }
  const RunReport& Run4() const { return report_.runs[0]; }
  std::string db_;
  HtmlReport report_;
};

TEST_F(HtmlCharts, SpeedupBarsAndWhiskers) {
  const auto chart = SpeedupChart(Run4());
  ASSERT_TRUE(chart);
  EXPECT_EQ(chart->id, "run-4-speedup");
  const json& bars = DataOf(chart->spec, "speedups");
  ASSERT_EQ(bars.size(), 2u);
  EXPECT_EQ(bars[0]["label"], "baseline");
  EXPECT_EQ(bars[0]["speedup"], 1.0);
  EXPECT_EQ(bars[0]["kind"], "baseline");
  EXPECT_EQ(bars[1]["speedup"], 2.0);
  EXPECT_EQ(bars[1]["kind"], "faster");
  const SpeedupInterval& s = *Run4().variants[1].speedup;
  EXPECT_EQ(bars[1]["text"], fmt::format("2.00 ({:.2f}-{:.2f})", s.low, s.high));
  const json& whiskers = DataOf(chart->spec, "intervals");
  ASSERT_EQ(whiskers.size(), 1u);
  EXPECT_EQ(whiskers[0]["low"], s.low);
  EXPECT_EQ(whiskers[0]["high"], s.high);
  for (const char* mark : {"bars", "whiskers", "one", "values"}) EXPECT_FALSE(MarkOf(chart->spec, mark).is_null()) << mark;
  EXPECT_EQ(MarkOf(chart->spec, "bars")["type"], "rect");
  EXPECT_EQ(MarkOf(chart->spec, "whiskers")["type"], "rule");
  EXPECT_EQ(MarkOf(chart->spec, "whiskers")["from"]["data"], "intervals");
  // Run 1: fp16 has no ok trial, so no bar.
  EXPECT_EQ(DataOf(SpeedupChart(report_.runs[1])->spec, "speedups").size(), 2u);
}

TEST_F(HtmlCharts, StepTimes) {
  const auto chart = StepTimeChart(Run4());
  ASSERT_TRUE(chart);
  const json& boxes = DataOf(chart->spec, "step_boxes");
  ASSERT_EQ(boxes.size(), 2u);
  EXPECT_NEAR(boxes[0]["q1"].get<double>(), 10.075, 1e-9);
  EXPECT_EQ(boxes[0]["steps"], 8);
  const json& points = DataOf(chart->spec, "step_points");
  ASSERT_EQ(points.size(), 16u);
  for (const json& p : points) {
    EXPECT_GE(p["j"].get<double>(), 0);
    EXPECT_LT(p["j"].get<double>(), 1);
  }
  for (const char* mark : {"boxes", "medians", "ranges", "points"}) EXPECT_FALSE(MarkOf(chart->spec, mark).is_null()) << mark;
  EXPECT_EQ(chart->caption.find("steps drawn."), std::string::npos);  // nothing thinned
  HtmlOptions few;
  few.max_points = 3;
  store::Store store = store::Store::Open(db_);
  const auto thinned = StepTimeChart(BuildRunReport(store, 4, few));
  EXPECT_EQ(DataOf(thinned->spec, "step_points").size(), 6u);
  EXPECT_NE(thinned->caption.find("baseline: one in 3 of its 8 steps drawn."), std::string::npos) << thinned->caption;
}

TEST_F(HtmlCharts, LossAndDrift) {
  const auto loss = LossChart(Run4());
  ASSERT_TRUE(loss);
  EXPECT_EQ(DataOf(loss->spec, "loss").size(), 10u);
  const json series = MarkOf(loss->spec, "series");
  EXPECT_EQ(series["type"], "group");
  EXPECT_EQ(series["from"]["facet"]["groupby"], "label");
  EXPECT_EQ(MarkOf(loss->spec, "lines")["type"], "line");
  const auto drift = LossDriftChart(Run4());
  ASSERT_TRUE(drift);
  const json& d = DataOf(drift->spec, "drift");
  ASSERT_EQ(d.size(), 5u);
  EXPECT_EQ(d[0]["delta"], 0.5);
  EXPECT_FALSE(MarkOf(drift->spec, "zero").is_null());
  RunReport none;
  EXPECT_FALSE(LossChart(none));
  EXPECT_FALSE(LossDriftChart(none));
}

TEST_F(HtmlCharts, Memory) {
  const auto chart = MemoryChart(Run4());
  ASSERT_TRUE(chart);
  const json& m = DataOf(chart->spec, "memory");
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[0]["metric"], "peak");
  EXPECT_EQ(m[0]["mib"], 110.0);
  EXPECT_EQ(m[0]["text"], "110.0 MiB");
  EXPECT_EQ(m[1]["metric"], "reserved");
  EXPECT_EQ(m[1]["mib"], 200.0);
  EXPECT_EQ(MarkOf(chart->spec, "variants")["from"]["facet"]["groupby"], "label");
  EXPECT_EQ(MarkOf(chart->spec, "bars")["type"], "rect");
  EXPECT_FALSE(MemoryChart(RunReport{}));
}

TEST_F(HtmlCharts, AutoBatchFrontier) {
  for (const bool memory : {false, true}) {
    const auto chart = FrontierChart(Run4(), memory);
    ASSERT_TRUE(chart);
    EXPECT_EQ(chart->id, memory ? "run-4-frontier-memory" : "run-4-frontier");
    const json& fits = DataOf(chart->spec, "fit_probes");
    ASSERT_EQ(fits.size(), 4u);
    EXPECT_EQ(DataOf(chart->spec, "failed_probes").size(), 2u);
    EXPECT_EQ(DataOf(chart->spec, "chosen_batches").size(), 2u);
    if (memory) {
      EXPECT_EQ(fits[1]["peak_mib"], 20.0);
    } else {
      EXPECT_EQ(fits[1]["samples_per_s"], 16000.0 / 3);
    }
    for (const char* mark : {"probes", "failed", "chosen"}) EXPECT_FALSE(MarkOf(chart->spec, mark).is_null()) << mark;
  }
  // Run 1 has no auto_batch: no frontier, and RunCharts leaves both out.
  EXPECT_FALSE(FrontierChart(report_.runs[1], false));
  std::vector<std::string> ids;
  for (const Chart& c : RunCharts(report_.runs[1])) ids.push_back(c.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"run-1-speedup", "run-1-steps", "run-1-loss", "run-1-drift", "run-1-memory"}));
  EXPECT_EQ(RunCharts(Run4()).size(), 7u);
}

// mlp_amp: run 1 (baseline, bf16, fp16 without figures), run 2 (bf16 faster), run 4 (baseline
// slower, fast new).
TEST_F(HtmlCharts, HistoryMarksRegressionsAndImprovements) {
  const auto chart = HistoryChart(report_.histories[0], {4, 1});
  ASSERT_TRUE(chart);
  EXPECT_EQ(chart->id, "history-mlp_amp");
  const json& points = DataOf(chart->spec, "history");
  ASSERT_EQ(points.size(), 6u);
  EXPECT_EQ(points[0]["run"], "run 1 · aaaa111");  // oldest first
  EXPECT_EQ(points[0]["order"], 0);
  EXPECT_EQ(points[0]["change"], "new");
  EXPECT_EQ(points[4]["run"], "run 4 · cccc333-dirty");
  const json& slower = DataOf(chart->spec, "slower");
  ASSERT_EQ(slower.size(), 1u);
  EXPECT_EQ(slower[0]["run_id"], 4);
  EXPECT_EQ(slower[0]["label"], "baseline");
  EXPECT_EQ(slower[0]["vs"].get<std::string>().rfind("▼ -22.", 0), 0u) << slower[0]["vs"];
  const json& faster = DataOf(chart->spec, "faster");
  ASSERT_EQ(faster.size(), 1u);
  EXPECT_EQ(faster[0]["run_id"], 2);
  EXPECT_EQ(faster[0]["label"], "bf16");
  EXPECT_EQ(DataOf(chart->spec, "reported_runs").size(), 2u);
  for (const char* mark : {"series", "lines", "points", "regressions", "improvements", "reported"}) {
    EXPECT_FALSE(MarkOf(chart->spec, mark).is_null()) << mark;
  }
  EXPECT_NE(chart->caption.find("±2%"), std::string::npos) << chart->caption;
  EXPECT_FALSE(HistoryChart(ExperimentHistory{}, {}));
}

TEST(HtmlId, OnlyLettersDigitsDashesAndUnderscores) {
  EXPECT_EQ(HtmlId("mlp_amp-2"), "mlp_amp-2");
  EXPECT_EQ(HtmlId("a b/c\"<é"), "a-b-c----");  // é is two bytes
}

// Vega makes a data set of every named mark: a mark named like a data set is refused ("Duplicate
// data set name"), so none may be.
TEST_F(HtmlCharts, NoMarkIsNamedLikeADataSet) {
  std::vector<Chart> charts = RunCharts(Run4());
  charts.push_back(*HistoryChart(report_.histories[0], {4}));
  for (const Chart& c : charts) {
    std::set<std::string> data;
    for (const json& d : c.spec.at("data")) data.insert(d.at("name").get<std::string>());
    std::function<void(const json&)> walk = [&](const json& node) {
      if (!node.contains("marks")) return;
      for (const json& m : node.at("marks")) {
        if (m.contains("name")) EXPECT_EQ(data.count(m.at("name").get<std::string>()), 0u) << c.id << ": " << m.at("name");
        if (m.contains("from") && m.at("from").contains("facet")) data.insert(m.at("from").at("facet").at("name").get<std::string>());
        walk(m);
      }
    };
    walk(c.spec);
  }
}

}  // namespace
}  // namespace runx::report

// The Vega specs of `runx report`: each chart's inline data and named marks, from the store of
// html_fixture.h. Whether Vega draws them is the browser test's (tests/integration/report_test.cc).
#include "report/html_charts.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
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

// The first legend of `spec`.
const json& Legend(const json& spec) { return spec.at("legends").at(0); }

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
  const Ratio& s = *Run4().variants[1].speedup;
  EXPECT_EQ(bars[1]["text"], fmt::format("2.00 ({:.2f}-{:.2f}) faster", s.interval->low, s.interval->high));
  const json& whiskers = DataOf(chart->spec, "intervals");
  ASSERT_EQ(whiskers.size(), 1u);
  EXPECT_EQ(whiskers[0]["low"], s.interval->low);
  EXPECT_EQ(whiskers[0]["high"], s.interval->high);
  for (const char* mark : {"bars", "whiskers", "one", "values"})
    EXPECT_FALSE(MarkOf(chart->spec, mark).is_null()) << mark;
  EXPECT_EQ(MarkOf(chart->spec, "bars")["type"], "rect");
  EXPECT_EQ(MarkOf(chart->spec, "whiskers")["type"], "rule");
  EXPECT_EQ(MarkOf(chart->spec, "whiskers")["from"]["data"], "intervals");
  EXPECT_EQ(Legend(chart->spec)["values"], json::array({"baseline", "faster"}));  // what the chart shows
  // Run 1: fp16 has no ok trial, so no bar; bf16 (one process against two, no earlier run to
  // learn from) has no interval: inconclusive, neutral, and no whisker.
  const auto one = SpeedupChart(report_.runs[1]);
  ASSERT_TRUE(one);
  const json& bars1 = DataOf(one->spec, "speedups");
  ASSERT_EQ(bars1.size(), 2u);
  EXPECT_EQ(bars1[1]["label"], "bf16");
  EXPECT_EQ(bars1[1]["kind"], "inconclusive");
  EXPECT_EQ(bars1[1]["verdict"].get<std::string>().rfind("inconclusive (2 and 1 processes: run-to-run spread", 0), 0u)
      << bars1[1]["verdict"];
  EXPECT_TRUE(DataOf(one->spec, "intervals").empty());
  EXPECT_EQ(Legend(one->spec)["values"], json::array({"baseline", "inconclusive"}));
}

// Green and red belong to the verdicts alone: no change and inconclusive get greys.
TEST_F(HtmlCharts, OnlyFasterAndSlowerGetAVerdictsColour) {
  const auto chart = SpeedupChart(Run4());
  ASSERT_TRUE(chart);
  const json& color = chart->spec["scales"][2];
  ASSERT_EQ(color["name"], "color");
  std::map<std::string, std::string> colours;
  for (size_t i = 0; i < color["domain"].size(); ++i) colours[color["domain"][i]] = color["range"][i];
  EXPECT_EQ(colours.at("faster"), "#2e7d32");
  EXPECT_EQ(colours.at("slower"), "#c62828");
  for (const char* neutral : {"no change", "inconclusive", "baseline"}) {
    const std::string c = colours.at(neutral);
    // A grey: red, green and blue within 0x30 of one another.
    const int r = std::stoi(c.substr(1, 2), nullptr, 16), g = std::stoi(c.substr(3, 2), nullptr, 16),
              b = std::stoi(c.substr(5, 2), nullptr, 16);
    EXPECT_LE(std::max({r, g, b}) - std::min({r, g, b}), 0x30) << neutral << ": " << c;
  }
  EXPECT_EQ(MarkOf(chart->spec, "bars")["encode"]["enter"]["fill"], (json{{"scale", "color"}, {"field", "kind"}}));
  EXPECT_NE(chart->caption.find("only where the whole interval lies beyond ±2%"), std::string::npos) << chart->caption;
}

// A run of one variant has nothing to compare: no speedup chart at all (not a lone baseline bar).
TEST_F(HtmlCharts, NoSpeedupChartForOneVariant) {
  testing::AddSteadyRuns(db_);
  store::Store store = store::Store::Open(db_);
  const RunReport steady = BuildRunReport(store, testing::kSteadyFirst, {});
  ASSERT_EQ(steady.variants.size(), 1u);
  EXPECT_FALSE(SpeedupChart(steady));
  std::vector<std::string> ids;
  for (const Chart& c : RunCharts(steady)) ids.push_back(c.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"run-5-steps", "run-5-loss", "run-5-memory"}));
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
  for (const char* mark : {"boxes", "medians", "ranges", "points"})
    EXPECT_FALSE(MarkOf(chart->spec, mark).is_null()) << mark;
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
  EXPECT_EQ(MarkOf(drift->spec, "lines")["encode"]["enter"]["strokeDash"],
            (json{{"scale", "dash"}, {"field", "label"}}));
  EXPECT_EQ(MarkOf(drift->spec, "markers")["encode"]["enter"]["shape"], (json{{"scale", "shape"}, {"field", "label"}}));
  EXPECT_EQ(Legend(drift->spec)["values"], json::array({"fast"}));
  ASSERT_TRUE(drift);
  const json& d = DataOf(drift->spec, "drift");
  ASSERT_EQ(d.size(), 5u);
  EXPECT_EQ(d[0]["delta"], 0.5);
  EXPECT_FALSE(MarkOf(drift->spec, "zero").is_null());
  RunReport none;
  EXPECT_FALSE(LossChart(none));
  EXPECT_FALSE(LossDriftChart(none));
}

// Lines that coincide (a technique that leaves the math alone) stay apart: each variant has its
// own dash and marker shape besides its colour, one legend shows all three, and the same variant
// looks the same in the loss and the drift chart.
TEST_F(HtmlCharts, OverlappingLossCurvesAreTold) {
  const auto loss = LossChart(Run4());
  ASSERT_TRUE(loss);
  const json line = MarkOf(loss->spec, "lines")["encode"]["enter"];
  EXPECT_EQ(line["stroke"], (json{{"scale", "color"}, {"field", "label"}}));
  EXPECT_EQ(line["strokeDash"], (json{{"scale", "dash"}, {"field", "label"}}));
  const json markers = MarkOf(loss->spec, "markers");
  EXPECT_EQ(markers["type"], "symbol");
  EXPECT_EQ(markers["from"]["data"], "loss_markers");
  EXPECT_EQ(markers["encode"]["enter"]["shape"], (json{{"scale", "shape"}, {"field", "label"}}));
  EXPECT_EQ(markers["encode"]["enter"]["stroke"], (json{{"scale", "color"}, {"field", "label"}}));
  // The two curves take turns: baseline at steps 0, 2, 4, fast at 1, 3.
  std::map<std::string, std::vector<int64_t>> marked;
  for (const json& m : DataOf(loss->spec, "loss_markers")) marked[m["label"]].push_back(m["step"].get<int64_t>());
  EXPECT_EQ(marked["baseline"], (std::vector<int64_t>{0, 2, 4}));
  EXPECT_EQ(marked["fast"], (std::vector<int64_t>{1, 3}));
  const json& legend = Legend(loss->spec);
  EXPECT_EQ(legend["stroke"], "color");
  EXPECT_EQ(legend["strokeDash"], "dash");
  EXPECT_EQ(legend["shape"], "shape");
  EXPECT_EQ(legend["values"], json::array({"baseline", "fast"}));
  // Two variants, two different dashes and shapes, over the same domain in both charts.
  const auto drift = LossDriftChart(Run4());
  for (const char* name : {"color", "dash", "shape"}) {
    json scale, drift_scale;
    for (const json& s : loss->spec["scales"]) {
      if (s["name"] == name) scale = s;
    }
    for (const json& s : drift->spec["scales"]) {
      if (s["name"] == name) drift_scale = s;
    }
    EXPECT_EQ(scale["domain"], json::array({"baseline", "fast"})) << name;
    EXPECT_EQ(drift_scale, scale) << name;
    if (std::string(name) != "color") EXPECT_NE(scale["range"][0], scale["range"][1]) << name;
  }
  EXPECT_EQ(DataOf(drift->spec, "drift_markers").size(), 5u);  // one curve: a marker on every step
}

// A long curve gets about 40 markers, each variant's shifted, so that the markers of two curves
// that coincide never sit on the same step.
TEST(HtmlLossMarkers, CoincidingCurvesHaveMarkersOnDifferentSteps) {
  RunReport run;
  for (const char* label : {"baseline", "same_math"}) {
    for (int step = 0; step < 100; ++step) run.loss.push_back({label, step, 1.0 / (step + 1), 1});
  }
  const auto chart = LossChart(run);
  ASSERT_TRUE(chart);
  std::map<std::string, std::set<int64_t>> steps;
  for (const json& m : DataOf(chart->spec, "loss_markers")) steps[m["label"]].insert(m["step"].get<int64_t>());
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps["baseline"].size(), 34u);  // every 3rd of 100
  EXPECT_EQ(steps["same_math"].size(), 33u);
  for (const int64_t step : steps["baseline"]) EXPECT_EQ(steps["same_math"].count(step), 0u) << step;
  EXPECT_EQ(DataOf(chart->spec, "loss").size(), 200u);  // the lines keep every step
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
  EXPECT_EQ(ids,
            (std::vector<std::string>{"run-1-speedup", "run-1-steps", "run-1-loss", "run-1-drift", "run-1-memory"}));
  EXPECT_EQ(RunCharts(Run4()).size(), 7u);
}

// mlp_amp: run 1 (baseline, bf16, fp16 without figures), run 2 (bf16 +18.9%), run 4 (baseline
// -22%, fast new): with a process or two a run and no third run to tell how much runs differ,
// neither move is a verdict, so neither is marked.
TEST_F(HtmlCharts, HistoryMarksNoInconclusiveChange) {
  const auto chart = HistoryChart(report_.histories[0], {4, 1});
  ASSERT_TRUE(chart);
  EXPECT_EQ(chart->id, "history-mlp_amp");
  const json& points = DataOf(chart->spec, "history");
  ASSERT_EQ(points.size(), 6u);
  EXPECT_EQ(points[0]["run"], "run 1 · 2026-12-01 10:00 · runx aaaa111");  // oldest first; no commit of yours
  EXPECT_EQ(points[0]["order"], 0);
  EXPECT_EQ(points[0]["change"], "new");
  EXPECT_EQ(points[4]["run"], "run 4 · 2026-12-04 10:00 · runx cccc333-dirty");
  EXPECT_EQ(points[4]["change"], "inconclusive");
  EXPECT_EQ(points[4]["vs"].get<std::string>().rfind("-22.", 0), 0u) << points[4]["vs"];
  EXPECT_NE(points[4]["vs"].get<std::string>().find("vs run 2 (inconclusive)"), std::string::npos) << points[4]["vs"];
  EXPECT_TRUE(DataOf(chart->spec, "slower").empty());
  EXPECT_TRUE(DataOf(chart->spec, "faster").empty());
  EXPECT_EQ(DataOf(chart->spec, "reported_runs").size(), 2u);
  for (const char* mark : {"series", "lines", "points", "whiskers", "regressions", "improvements", "reported"}) {
    EXPECT_FALSE(MarkOf(chart->spec, mark).is_null()) << mark;
  }
  // Points are coloured by variant, never by verdict.
  EXPECT_EQ(MarkOf(chart->spec, "points")["encode"]["enter"]["fill"], (json{{"scale", "color"}, {"field", "label"}}));
  EXPECT_NE(chart->caption.find("±2%"), std::string::npos) << chart->caption;
  EXPECT_FALSE(HistoryChart(ExperimentHistory{}, {}));
}

// Runs of one process each, after runs that agree: a drop is a regression, the recovery an
// improvement, each marked once; the runs are named by date, the user's commit and tag.
TEST_F(HtmlCharts, HistoryMarksRegressionsAndImprovements) {
  testing::AddSteadyRuns(db_);
  store::Store store = store::Store::Open(db_);
  const HtmlReport report = BuildHtmlReport(store, {10}, {});
  const auto chart = HistoryChart(report.histories[0], {10});
  ASSERT_TRUE(chart);
  const json& points = DataOf(chart->spec, "history");
  ASSERT_EQ(points.size(), 6u);
  EXPECT_EQ(points[4]["run"], "run 9 · 2026-12-14 10:00 · 1234567");
  EXPECT_EQ(points[5]["run"], "run 10 · 2026-12-15 10:00 · 1234567-dirty · 'fix'");
  EXPECT_EQ(points[5]["commit"], "1234567-dirty");
  EXPECT_EQ(points[5]["tag"], "fix");
  EXPECT_EQ(points[5]["build"], "cccc333");
  const json& slower = DataOf(chart->spec, "slower");
  const json& faster = DataOf(chart->spec, "faster");
  ASSERT_EQ(slower.size(), 1u);
  EXPECT_EQ(slower[0]["run_id"], 9);
  ASSERT_EQ(faster.size(), 1u);
  EXPECT_EQ(faster[0]["run_id"], 10);
  // The others: new, or inconclusive (too few runs yet) or no change: unmarked.
  for (const json& p : points) {
    if (p["run_id"] == 9 || p["run_id"] == 10) continue;
    EXPECT_TRUE(p["change"] == "new" || p["change"] == "inconclusive" || p["change"] == "no change") << p;
  }
  const std::string tooltip = MarkOf(chart->spec, "points")["encode"]["enter"]["tooltip"]["signal"];
  for (const char* field : {"datum.date", "datum.commit", "datum.tag", "datum.build", "datum.interval"}) {
    EXPECT_NE(tooltip.find(field), std::string::npos) << field << " in " << tooltip;
  }
  // One process a run: no whisker anywhere.
  EXPECT_TRUE(DataOf(chart->spec, "intervals").empty());
}

// The y axis starts at 0 and reaches the highest whisker; a whisker is drawn for each point with
// three processes or more (kMinSpreadDf + 1), over exp(mean ln rate ± t(0.975, n-1) sd/√n) of its
// processes.
TEST_F(HtmlCharts, HistoryWhiskersAndAnAxisFromZero) {
  const int64_t three = testing::AddThreeProcessRun(db_);
  store::Store store = store::Store::Open(db_);
  const HtmlReport report = BuildHtmlReport(store, {three}, {});
  const auto chart = HistoryChart(report.histories[0], {three});
  ASSERT_TRUE(chart);
  json y;
  for (const json& s : chart->spec["scales"]) {
    if (s["name"] == "y") y = s;
  }
  EXPECT_EQ(y["zero"], true);
  EXPECT_EQ(y["domain"]["fields"][1], (json{{"data", "intervals"}, {"field", "high"}}));
  const json& whiskers = DataOf(chart->spec, "intervals");
  // The three-process run's baseline only: runs 1 and 4 have two processes a variant at most.
  ASSERT_EQ(whiskers.size(), 1u);
  EXPECT_EQ(whiskers[0]["run_id"], three);
  EXPECT_EQ(whiskers[0]["label"], "baseline");
  // 60..64, 62..66 and 66..70 ms, 320 samples each.
  const double l[] = {std::log(320.0 / 310 * 1000), std::log(320.0 / 320 * 1000), std::log(320.0 / 340 * 1000)};
  const double mean = (l[0] + l[1] + l[2]) / 3;
  double squares = 0;
  for (const double x : l) squares += (x - mean) * (x - mean);
  const double half = 4.302652729911275 * std::sqrt(squares / 2) / std::sqrt(3.0);  // t(0.975, 2)
  EXPECT_NEAR(whiskers[0]["low"].get<double>(), std::exp(mean - half), 1e-6);
  EXPECT_NEAR(whiskers[0]["high"].get<double>(), std::exp(mean + half), 1e-6);
  EXPECT_EQ(whiskers[0]["interval"],
            fmt::format("{:.1f}-{:.1f} (3 processes)", std::exp(mean - half), std::exp(mean + half)));
  const json w = MarkOf(chart->spec, "whiskers");
  EXPECT_EQ(w["type"], "rule");
  EXPECT_EQ(w["from"]["data"], "intervals");
  EXPECT_EQ(w["encode"]["enter"]["y"], (json{{"scale", "y"}, {"field", "low"}}));
  EXPECT_EQ(w["encode"]["enter"]["y2"], (json{{"scale", "y"}, {"field", "high"}}));
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
        if (m.contains("name"))
          EXPECT_EQ(data.count(m.at("name").get<std::string>()), 0u) << c.id << ": " << m.at("name");
        if (m.contains("from") && m.at("from").contains("facet"))
          data.insert(m.at("from").at("facet").at("name").get<std::string>());
        walk(m);
      }
    };
    walk(c.spec);
  }
}

}  // namespace
}  // namespace runx::report

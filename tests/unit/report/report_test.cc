// Summarize, RenderReport and WriteVariantStats on small stores whose every figure is known.
#include "report/report.h"

#include <SQLiteCpp/SQLiteCpp.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "test_support.h"

namespace runx::report {
namespace {

using store::QueryReadOnly;
using store::Store;
using store::StoreError;
using store::TrialRecord;
using store::Value;

struct Spec {
  std::string label;
  bool is_baseline = false;
  TrialStatus status = TrialStatus::kOk;
  double step_ms = 0;  ///< measured steps take step_ms +- 3% (MeasuredMs)
  int64_t samples = 64;
  double accuracy = 0;  ///< 0: not recorded
};

// The 10 measured step times of a trial: `ms` with up to +-3% of deterministic noise.
std::vector<double> MeasuredMs(const std::string& label, int repeat, double ms) {
  uint64_t seed = static_cast<uint64_t>(repeat);
  for (char c : label) seed = seed * 31 + static_cast<unsigned char>(c);
  std::mt19937_64 rng(seed);  // its output is fixed by the standard
  std::vector<double> out;
  for (int i = 0; i < 10; ++i) {
    const double u = static_cast<double>(rng() % 2001) / 1000.0 - 1.0;  // -1 .. 1
    out.push_back(ms * (1 + 0.03 * u));
  }
  return out;
}

TrialRecord Trial(int64_t run, int order, int repeat, const Spec& s) {
  TrialRecord t;
  t.run_id = run;
  t.label = s.label;
  t.config_hash = "h-" + s.label;
  t.config_json = "{}";
  t.is_baseline = s.is_baseline;
  t.repeat_index = repeat;
  t.order_index = order;
  t.device = "cpu";
  t.status = s.status;
  if (s.status != TrialStatus::kOk) {
    t.error = s.status == TrialStatus::kOom ? "out of memory" : "killed by signal 11";
    return t;
  }
  t.steps.push_back({"warmup", 0, 1000, 0, s.samples, std::nullopt});  // never counted
  const std::vector<double> ms = MeasuredMs(s.label, repeat, s.step_ms);
  for (int i = 0; i < 10; ++i) {
    t.steps.push_back({"measure", i, ms[static_cast<size_t>(i)], 0.2, s.samples, 3.0 - 0.1 * i});
  }
  t.steps.push_back({"eval", 0, 5000, 0, 1000, std::nullopt});  // never counted
  t.metrics = {{"peak_mem_bytes", (1 << 30) * 1.5 + repeat * (1 << 20), "bytes", std::nullopt},
               {"final_loss", 2.0 + 0.01 * repeat, "", std::nullopt}};
  if (s.accuracy > 0) t.metrics.push_back({"accuracy", s.accuracy + 0.001 * repeat, "", {}});
  return t;
}

// A run of experiment `experiment`, started at `started_at`.
int64_t BeginRun(Store& store, int64_t experiment, const std::string& started_at) {
  store::RunInfo info;
  info.experiment_id = experiment;
  info.started_at = started_at;
  info.host = "box";
  info.runx_version = "0.1.0";
  info.git_sha = "abc";
  info.command = "runx";
  return store.BeginRun(info);
}

// Summarize over run `run` of the store at `db`.
std::vector<VariantRow> Summarize(const std::string& db, int64_t run) {
  Store store = Store::Open(db);
  return report::Summarize(store, run);
}

// The throughput of each repeat of `label` as Trial() records it: one process each.
std::vector<double> ProcessRates(const std::string& label, double ms, int64_t samples, std::vector<int> repeats) {
  std::vector<double> out;
  for (int r : repeats) {
    double total = 0;
    for (double t : MeasuredMs(label, r, ms)) total += t;
    out.push_back(10.0 * static_cast<double>(samples) / total * 1000);
  }
  return out;
}

// Run 1: baseline, bf16 (twice the batch in 104% of the time), cl (the same speed),
// fp16 (1 of 3 ok, 2 oom), graphs (every trial crashed); three rounds, interleaved.
class ReportTest : public store::testing::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    db_ = PathOf("runx.db");
    Store store = Store::Open(db_);
    const int64_t exp = store.AddExperiment("resnet", "resnet.yaml", "name: resnet\n", "sha");
    sweep_ = BeginRun(store, exp, "2026-12-01T10:00:00Z");
    int order = 0;
    for (int repeat = 0; repeat < 3; ++repeat) {
      const std::vector<Spec> round = {
          {"baseline", true, TrialStatus::kOk, 100, 64, 0.9},
          {"bf16", false, TrialStatus::kOk, 104, 128, 0.895},
          {"cl", false, TrialStatus::kOk, 100, 64, 0.9},
          {"fp16", false, repeat == 1 ? TrialStatus::kOk : TrialStatus::kOom, 80, 64, 0},
          {"graphs", false, repeat == 2 ? TrialStatus::kTimeout : TrialStatus::kCrashed, 0, 64, 0},
      };
      for (const Spec& s : round) store.RecordTrial(Trial(sweep_, order++, repeat, s));
    }
    store.EndRun(sweep_, RunStatus::kOk, "2026-12-01T11:00:00Z");
  }
  std::string db_;
  int64_t sweep_ = 0;
};

TEST_F(ReportTest, SummarizeComputesEachVariantsFigures) {
  const std::vector<VariantRow> rows = Summarize(db_, sweep_);
  ASSERT_EQ(rows.size(), 5u);
  const VariantRow& base = rows[0];
  EXPECT_EQ(base.label, "baseline");
  EXPECT_TRUE(base.is_baseline);
  EXPECT_EQ(base.trials, 3);
  EXPECT_EQ(base.ok_trials, 3);
  EXPECT_EQ(base.status_summary, "");
  // The 30 measured steps of the 3 repeats, pooled.
  std::vector<double> times;
  double bf16_ms = 0;
  for (int r = 0; r < 3; ++r) {
    for (double ms : MeasuredMs("baseline", r, 100)) times.push_back(ms);
    for (double ms : MeasuredMs("bf16", r, 104)) bf16_ms += ms;
  }
  EXPECT_DOUBLE_EQ(*base.step_ms_median, Percentile(times, 0.5));
  EXPECT_DOUBLE_EQ(*base.step_ms_p10, Percentile(times, 0.1));
  EXPECT_DOUBLE_EQ(*base.step_ms_p90, Percentile(times, 0.9));
  double total_ms = 0;
  for (double t : times) total_ms += t;
  EXPECT_DOUBLE_EQ(*base.samples_per_s, 30 * 64 / total_ms * 1000);
  EXPECT_EQ(*base.peak_mem_bytes, (int64_t{3} << 29) + 2 * (1 << 20));
  EXPECT_DOUBLE_EQ(*base.final_loss, 2.01);
  EXPECT_DOUBLE_EQ(*base.accuracy, 0.901);
  EXPECT_FALSE(base.accuracy_delta);
  EXPECT_FALSE(base.speedup);

  const VariantRow& bf16 = rows[1];
  EXPECT_EQ(bf16.label, "bf16");
  EXPECT_NEAR(*bf16.accuracy_delta, -0.005, 1e-12);
  ASSERT_TRUE(bf16.speedup);
  EXPECT_DOUBLE_EQ(bf16.speedup->estimate, (30 * 128 / bf16_ms * 1000) / *base.samples_per_s);
  // The interval: one run, so the spread between the 3 + 3 processes of the two configurations
  // about their means (df 4).
  const Spread spread =
      PoolSpread({ProcessRates("baseline", 100, 64, {0, 1, 2}), ProcessRates("bf16", 104, 128, {0, 1, 2})});
  EXPECT_TRUE(bf16.speedup->same_run);
  EXPECT_EQ(bf16.speedup->error.df, 4);
  EXPECT_NEAR(bf16.speedup->error.se, spread.sd * std::sqrt(2.0 / 3), 1e-12);
  const auto expected = IntervalOfRatio(bf16.speedup->estimate, {spread.sd * std::sqrt(2.0 / 3), 4});
  ASSERT_TRUE(bf16.speedup->interval);
  EXPECT_NEAR(bf16.speedup->interval->low, expected->low, 1e-12);
  EXPECT_NEAR(bf16.speedup->interval->high, expected->high, 1e-12);
  EXPECT_GT(bf16.speedup->interval->low, 1.8);
  EXPECT_LT(bf16.speedup->interval->high, 2.1);
  EXPECT_TRUE(bf16.speedup->significant());
  EXPECT_EQ(bf16.speedup->change, Change::kFaster);

  const VariantRow& cl = rows[2];
  ASSERT_TRUE(cl.speedup);
  EXPECT_FALSE(cl.speedup->significant());
  EXPECT_LT(cl.speedup->interval->low, 1.0);
  EXPECT_GT(cl.speedup->interval->high, 1.0);
  EXPECT_NE(cl.speedup->change, Change::kFaster);
  EXPECT_NEAR(*cl.accuracy_delta, 0.0, 1e-12);

  const VariantRow& fp16 = rows[3];
  EXPECT_EQ(fp16.trials, 3);
  EXPECT_EQ(fp16.ok_trials, 1);
  EXPECT_EQ(fp16.status_summary, "1 ok, 2 oom");
  EXPECT_EQ(fp16.statuses, (std::vector<std::pair<TrialStatus, int>>{{TrialStatus::kOk, 1}, {TrialStatus::kOom, 2}}));
  ASSERT_TRUE(fp16.speedup);  // one process, the baseline's three tell the spread (df 2)
  EXPECT_GT(fp16.speedup->estimate, 1.2);
  EXPECT_EQ(fp16.speedup->processes_b, 1);
  EXPECT_EQ(fp16.speedup->error.df, 2);
  EXPECT_FALSE(fp16.accuracy);
  EXPECT_FALSE(fp16.accuracy_delta);

  const VariantRow& graphs = rows[4];
  EXPECT_EQ(graphs.ok_trials, 0);
  EXPECT_EQ(graphs.status_summary, "2 crashed, 1 timeout");
  EXPECT_FALSE(graphs.step_ms_median);
  EXPECT_FALSE(graphs.samples_per_s);
  EXPECT_FALSE(graphs.peak_mem_bytes);
  EXPECT_FALSE(graphs.speedup);
}

TEST_F(ReportTest, RenderTheWholeTable) {
  EXPECT_EQ(RenderReport(Summarize(db_, sweep_)),
            "variant   trials  step ms (p10-p90)       samples/s  peak mem    loss     acc     "
            "Δacc  speedup (95% CI)\n"
            "baseline  3/3     100.11 (97.82-102.23)       638.6   1.5 GiB  2.0100  0.9010        "
            "-  1.00\n"
            "bf16      3/3     103.82 (101.87-105.97)     1233.9   1.5 GiB  2.0100  0.8960  "
            "-0.0050  1.93 (1.91-1.95) faster\n"
            "cl        3/3      99.45 (97.26-102.66)       640.2   1.5 GiB  2.0100  0.9010  "
            "+0.0000  1.00 (1.00-1.01) no change\n"
            "fp16      1/3      79.99 (78.39-81.41)        801.0   1.5 GiB  2.0100       -        "
            "-  1.25 (1.25-1.26) faster     2 oom\n"
            "graphs    0/3          -                          -         -       -       -        "
            "-     -                        2 crashed, 1 timeout\n");
}

TEST_F(ReportTest, RenderWithoutBaselineOrRows) {
  EXPECT_EQ(RenderReport({}), "");
  VariantRow lonely;
  lonely.label = "only";
  lonely.trials = 1;
  lonely.ok_trials = 1;
  lonely.statuses = {{TrialStatus::kOk, 1}};
  lonely.step_ms_median = 0.0123;
  lonely.step_ms_p10 = 0.01;
  lonely.step_ms_p90 = 0.02;
  lonely.samples_per_s = 81300;
  lonely.peak_mem_bytes = 512;
  EXPECT_EQ(RenderReport({lonely}),
            "variant  trials  step ms (p10-p90)   samples/s  peak mem  loss  acc  Δacc  "
            "speedup (95% CI)\n"
            "only     1/1     0.0123 (0.01-0.02)    81300.0     512 B     -    -     -  -\n");
}

TEST_F(ReportTest, EnergyFollowsTheMemoryWhereAVariantWasMetered) {
  VariantRow metered;
  metered.label = "gpu";
  metered.trials = metered.ok_trials = 1;
  metered.statuses = {{TrialStatus::kOk, 1}};
  metered.samples_per_s = 2000;
  metered.joules_per_sample = 0.0312;
  metered.power_w = 412.4;
  VariantRow unmetered = metered;
  unmetered.label = "other";
  unmetered.joules_per_sample.reset();
  unmetered.power_w.reset();
  EXPECT_EQ(RenderReport({metered, unmetered}),
            "variant  trials  step ms (p10-p90)  samples/s  peak mem  J/sample    W  loss  acc  Δacc  "
            "speedup (95% CI)\n"
            "gpu      1/1     -                     2000.0         -    0.0312  412     -    -     -  -\n"
            "other    1/1     -                     2000.0         -         -    -     -    -     -  -\n");
  const DataTable data = ReportDataTable({metered});
  ASSERT_EQ(data.columns.back(), "power_w");
  EXPECT_EQ(std::get<double>(data.rows[0].back()), 412.4);
}

TEST_F(ReportTest, WriteVariantStatsFillsTheTableAndTheView) {
  const std::vector<VariantRow> rows = Summarize(db_, sweep_);
  {
    Store store = Store::Open(db_);
    WriteVariantStats(store, sweep_, rows);
    WriteVariantStats(store, sweep_, rows);  // again: replaced, not doubled
  }
  const auto rounded = [](const Value& v) -> Value {
    if (const double* d = std::get_if<double>(&v)) return std::round(*d * 1e6) / 1e6;
    return v;
  };
  store::QueryResult r = QueryReadOnly(
      db_,
      "SELECT label, is_baseline, trials, ok_trials, speedup, significant, verdict, speedup_df, resamples, seed, "
      "speedup_ci_low IS NOT NULL, accuracy_delta FROM variant_stats ORDER BY rowid");
  const Value null;
  std::vector<std::vector<Value>> expected = {
      {std::string("baseline"), int64_t{1}, int64_t{3}, int64_t{3}, 1.0, null, null, null, null, null, int64_t{0},
       null},
      {std::string("bf16"), int64_t{0}, int64_t{3}, int64_t{3}, rounded(rows[1].speedup->estimate), int64_t{1},
       std::string("faster"), int64_t{4}, null, null, int64_t{1}, -0.005},
      {std::string("cl"), int64_t{0}, int64_t{3}, int64_t{3}, rounded(rows[2].speedup->estimate), int64_t{0},
       std::string(ChangeName(rows[2].speedup->change)), int64_t{4}, null, null, int64_t{1}, 0.0},
      {std::string("fp16"), int64_t{0}, int64_t{3}, int64_t{1}, rounded(rows[3].speedup->estimate), int64_t{1},
       std::string("faster"), int64_t{2}, null, null, int64_t{1}, null},
      {std::string("graphs"), int64_t{0}, int64_t{3}, int64_t{0}, null, null, null, null, null, null, int64_t{0}, null},
  };
  for (auto& row : r.rows) {
    for (Value& v : row) v = rounded(v);
  }
  EXPECT_EQ(r.rows, expected);

  // The speedups view carries the variant's interval on each of its trials.
  r = QueryReadOnly(db_,
                    "SELECT count(*), min(speedup_ci_low), max(speedup_ci_high), "
                    "min(significant) FROM speedups WHERE label = 'bf16'");
  EXPECT_EQ(r.rows[0][0], Value{int64_t{3}});
  EXPECT_EQ(r.rows[0][1], Value{rows[1].speedup->interval->low});
  EXPECT_EQ(r.rows[0][2], Value{rows[1].speedup->interval->high});
  EXPECT_EQ(r.rows[0][3], Value{int64_t{1}});
}

TEST_F(ReportTest, SummarizeErrors) {
  try {
    Summarize(db_, 9);
    FAIL() << "expected StoreError";
  } catch (const StoreError& e) {
    EXPECT_EQ(std::string(e.what()), "no run 9 in results store '" + db_ + "'");
  }
}

// One process a variant and no earlier measurement of its configuration: the speedup is shown,
// but the run cannot tell process-to-process noise from an effect, so there is no interval and
// no verdict. Earlier runs of the same configurations on the same host tell the spread.
TEST_F(ReportTest, OneProcessEachIsInconclusiveUntilEarlierRunsTellTheSpread) {
  Store store = Store::Open(db_);
  const auto one_run = [&](const std::string& started) {
    const int64_t run = BeginRun(store, 1, started);
    store.RecordTrial(Trial(run, 0, 0, {"one-base", true, TrialStatus::kOk, 20, 8, 0}));
    store.RecordTrial(Trial(run, 1, 0, {"one-amp", false, TrialStatus::kOk, 10, 8, 0}));
    return run;
  };
  const int64_t first = one_run("2026-12-02T10:00:00Z");
  std::vector<VariantRow> rows = Summarize(db_, first);
  ASSERT_EQ(rows.size(), 2u);
  ASSERT_TRUE(rows[1].speedup);
  EXPECT_NEAR(rows[1].speedup->estimate, 2.0, 0.05);
  EXPECT_FALSE(rows[1].speedup->interval);
  EXPECT_EQ(rows[1].speedup->change, Change::kInconclusive);
  EXPECT_EQ(rows[1].speedup->why, "1 process each: run-to-run spread unknown; repeats: 3 would measure it");
  EXPECT_EQ(RenderNoise(rows),
            "inconclusive: one-amp: 1 process each: run-to-run spread unknown; repeats: 3 would measure it\n");
  const std::string table = RenderReport(rows);
  EXPECT_NE(table.find("1.99 inconclusive"), std::string::npos) << table;
  // The trials record no samples_per_s metric here (the store's history reads it): add it, as
  // the engine does, to the earlier run's trials and to those of two more runs.
  const auto add_rate = [&](int64_t run) {
    for (const store::RunTrial& t : store.ReadRunTrials(run)) {
      double ms = 0;
      for (const auto& [wall, samples] : t.measured_steps) ms += wall;
      SQLite::Statement q(store.db(),
                          "INSERT INTO metrics (trial_id, name, value, unit) VALUES (?, 'samples_per_s', ?, '')");
      q.bind(1, t.trial_id);
      q.bind(2, 80.0 / ms * 1000);
      q.exec();
    }
  };
  add_rate(first);
  add_rate(one_run("2026-12-02T11:00:00Z"));
  const int64_t third = one_run("2026-12-02T12:00:00Z");
  add_rate(third);
  rows = Summarize(db_, third);
  ASSERT_TRUE(rows[1].speedup->interval);
  // No run has two processes of a configuration, but the two earlier runs' processes (one each)
  // tell how much runs differ, which bounds how much processes do: df 2 (2 runs x 2 configs - 2).
  EXPECT_EQ(rows[1].speedup->evidence.within.df, 0);
  EXPECT_EQ(rows[1].speedup->evidence.between.df, 2);
  EXPECT_EQ(rows[1].speedup->error.df, 2);
  EXPECT_EQ(rows[1].speedup->change, Change::kFaster);
}

// The example store of docs/sql.md holds variant_stats the report really computes.
TEST_F(ReportTest, TheDocsExampleVariantStatsAreTheReports) {
  const std::string path = PathOf("example.db");
  store::testing::FillExampleStore(path);
  const std::vector<store::VariantStatsRow> got = ToVariantStats(Summarize(path, 1));
  const std::vector<store::VariantStatsRow> want = store::testing::ExampleVariantStats();
  ASSERT_EQ(got.size(), want.size());
  const auto same = [](const std::optional<double>& a, const std::optional<double>& b) {
    return a.has_value() == b.has_value() && (!a || std::fabs(*a - *b) < 1e-12 * std::fabs(*b));
  };
  for (size_t i = 0; i < got.size(); ++i) {
    const auto& g = got[i];
    const auto& w = want[i];
    SCOPED_TRACE(w.label);
    EXPECT_EQ(g.label, w.label);
    EXPECT_EQ(g.is_baseline, w.is_baseline);
    EXPECT_EQ(g.trials, w.trials);
    EXPECT_EQ(g.ok_trials, w.ok_trials);
    EXPECT_TRUE(same(g.step_ms_median, w.step_ms_median));
    EXPECT_TRUE(same(g.step_ms_p10, w.step_ms_p10));
    EXPECT_TRUE(same(g.step_ms_p90, w.step_ms_p90));
    EXPECT_TRUE(same(g.samples_per_s, w.samples_per_s));
    EXPECT_TRUE(same(g.speedup, w.speedup));
    EXPECT_TRUE(same(g.speedup_ci_low, w.speedup_ci_low));
    EXPECT_TRUE(same(g.speedup_ci_high, w.speedup_ci_high));
    EXPECT_EQ(g.significant, w.significant);
    EXPECT_TRUE(same(g.accuracy_delta, w.accuracy_delta));
    EXPECT_EQ(g.verdict, w.verdict);
    EXPECT_TRUE(same(g.speedup_se, w.speedup_se));
    EXPECT_EQ(g.speedup_df, w.speedup_df);
  }
}

TEST_F(ReportTest, SweepWithoutBaselineHasNoSpeedups) {
  Store store = Store::Open(db_);
  const int64_t sweep = BeginRun(store, 1, "2026-12-02T10:00:00Z");
  store.RecordTrial(Trial(sweep, 0, 0, {"a", false, TrialStatus::kOk, 10, 8, 0}));
  store.RecordTrial(Trial(sweep, 1, 0, {"b", false, TrialStatus::kOk, 5, 8, 0}));
  const std::vector<VariantRow> rows = Summarize(db_, sweep);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_FALSE(rows[0].speedup);
  EXPECT_FALSE(rows[1].speedup);
  EXPECT_TRUE(rows[1].samples_per_s);
}

TEST_F(ReportTest, EmptySweepHasNoRows) {
  Store store = Store::Open(db_);
  const int64_t sweep = BeginRun(store, 1, "2026-12-02T10:00:00Z");
  EXPECT_TRUE(Summarize(db_, sweep).empty());
  EXPECT_EQ(RenderReport(Summarize(db_, sweep)), "");
}

}  // namespace
}  // namespace runx::report

// Migrations of stores written by earlier runx versions, and variant_stats (the report's figures).
#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>

#include <limits>

#include "store/schema.h"
#include "store/store.h"
#include "test_support.h"

namespace runx::store {
namespace {

using testing::CountRows;
using testing::ExampleTrial;
using testing::FillExampleStore;
using testing::MakeTrial;

class ResumeTest : public testing::TempDirTest {};

const std::vector<std::string> kSpeedupsV1Columns = {"trial_id",
                                                     "sweep_id",
                                                     "experiment",
                                                     "label",
                                                     "status",
                                                     "samples_per_s",
                                                     "baseline_samples_per_s",
                                                     "speedup",
                                                     "step_ms_median",
                                                     "baseline_step_ms_median",
                                                     "is_baseline",
                                                     "repeat_index"};

// A version 1 store (the first migration only) holding one sweep: baseline x2, bf16, fp16 oom.
void WriteVersion1Store(const std::string& path) {
  SQLite::Database db(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
  Migrate(db, {Migrations().front()}, path);
  db.exec(R"sql(
    INSERT INTO experiments (name, path, sha256, yaml) VALUES ('e', 'e.yaml', 'sha', 'name: e');
    INSERT INTO sweeps (experiment_id, started_at, status) VALUES (1, '2026-12-01T10:00:00Z', 'ok');
    INSERT INTO trials (sweep_id, config_hash, config_json, label, is_baseline, repeat_index,
                        status, error)
    VALUES (1, 'hb', '{}', 'baseline', 1, 0, 'ok', NULL),
           (1, 'hb', '{}', 'baseline', 1, 1, 'ok', NULL),
           (1, 'hx', '{}', 'bf16', 0, 0, 'ok', NULL),
           (1, 'hf', '{}', 'fp16', 0, 0, 'oom', 'out of memory');
    INSERT INTO metrics (trial_id, name, value, unit)
    VALUES (1, 'samples_per_s', 100, 'samples/s'), (2, 'samples_per_s', 110, 'samples/s'),
           (3, 'samples_per_s', 157.5, 'samples/s'), (1, 'step_ms_median', 10, 'ms');
    INSERT INTO steps (trial_id, phase, step, wall_ms, samples)
    VALUES (1, 'measure', 0, 10, 1), (2, 'measure', 0, 9, 1), (3, 'measure', 0, 6, 1);
  )sql");
}

TEST_F(ResumeTest, MigratesAVersion1StoreKeepingItsData) {
  const std::string path = PathOf("v1.db");
  WriteVersion1Store(path);
  {
    Store store = Store::Open(path);
    EXPECT_EQ(store.schema_version(), 7);
  }
  EXPECT_EQ(CountRows(path, "schema_version"), 1);
  EXPECT_EQ(CountRows(path, "experiments"), 1);
  EXPECT_EQ(CountRows(path, "runs"), 1);
  EXPECT_EQ(CountRows(path, "trials"), 4);
  EXPECT_EQ(CountRows(path, "run_trials"), 4);
  EXPECT_EQ(CountRows(path, "metrics"), 4);
  EXPECT_EQ(CountRows(path, "steps"), 3);
  EXPECT_EQ(CountRows(path, "variant_stats"), 0);

  // The speedups view keeps its version 1 columns, in order, with the same values.
  const QueryResult after = QueryReadOnly(path, "SELECT * FROM speedups ORDER BY trial_id");
  ASSERT_GE(after.columns.size(), kSpeedupsV1Columns.size());
  EXPECT_EQ(std::vector<std::string>(after.columns.begin(), after.columns.begin() + 12), kSpeedupsV1Columns);
  const QueryResult old = QueryReadOnly(path, "SELECT label, speedup FROM speedups ORDER BY trial_id");
  const std::vector<std::vector<Value>> expected = {{std::string("baseline"), 100.0 / 105},
                                                    {std::string("baseline"), 110.0 / 105},
                                                    {std::string("bf16"), 157.5 / 105},
                                                    {std::string("fp16"), Value{}}};
  EXPECT_EQ(old.rows, expected);
  // The old combined identity is kept; the config identity of an old trial is unknown.
  EXPECT_EQ(CountRows(path, "trials WHERE legacy_identity = 'hb' AND config_hash = ''"), 2);

  // Opening again does not migrate again; the migrated store takes new figures.
  Store store = Store::Open(path);
  EXPECT_EQ(store.schema_version(), 7);
  store.RecordVariantStats(1, {{"bf16", false, 1, 1}});
  EXPECT_EQ(CountRows(path, "variant_stats"), 1);
}

VariantStatsRow Bf16Stats() {
  VariantStatsRow r;
  r.label = "bf16";
  r.trials = 1;
  r.ok_trials = 1;
  r.step_ms_median = 44;
  r.step_ms_p10 = 42.4;
  r.step_ms_p90 = 45.6;
  r.samples_per_s = 1454.5;
  r.speedup = 1.43;
  r.speedup_ci_low = 1.38;
  r.speedup_ci_high = 1.49;
  r.significant = true;
  r.accuracy_delta = 0.015;
  r.verdict = "faster";
  r.speedup_se = 0.021;
  r.speedup_df = 4;
  return r;
}

TEST_F(ResumeTest, RecordVariantStatsWritesEveryColumn) {
  const std::string path = PathOf("runx.db");
  FillExampleStore(path);
  Store store = Store::Open(path);
  VariantStatsRow baseline;
  baseline.label = "baseline";
  baseline.is_baseline = true;
  baseline.trials = 2;
  baseline.ok_trials = 2;
  baseline.speedup = 1.0;
  store.RecordVariantStats(1, {baseline, Bf16Stats()});
  const QueryResult r = QueryReadOnly(path, "SELECT * FROM variant_stats WHERE run_id = 1 ORDER BY label");
  EXPECT_EQ(r.columns,
            (std::vector<std::string>{"run_id", "label", "is_baseline", "trials", "ok_trials", "step_ms_median",
                                      "step_ms_p10", "step_ms_p90", "samples_per_s", "speedup", "speedup_ci_low",
                                      "speedup_ci_high", "significant", "accuracy_delta", "resamples", "seed",
                                      "verdict", "speedup_se", "speedup_df"}));
  const Value null;
  const std::vector<std::vector<Value>> expected = {
      {int64_t{1}, std::string("baseline"), int64_t{1}, int64_t{2}, int64_t{2}, null, null, null, null, 1.0, null, null,
       null, null, null, null, null, null, null},
      {int64_t{1}, std::string("bf16"), int64_t{0}, int64_t{1}, int64_t{1}, 44.0, 42.4, 45.6, 1454.5, 1.43, 1.38, 1.49,
       int64_t{1}, 0.015, null, null, std::string("faster"), 0.021, int64_t{4}},
  };
  EXPECT_EQ(r.rows, expected);
}

TEST_F(ResumeTest, RecordVariantStatsReplacesOnlyThatRun) {
  const std::string path = PathOf("runx.db");
  FillExampleStore(path);
  Store store = Store::Open(path);
  store.RecordVariantStats(1, {{"baseline", true, 2, 2}, Bf16Stats()});
  store.RecordVariantStats(2, {{"baseline", true, 1, 1}});
  store.RecordVariantStats(1, {{"bf16", false, 1, 0}});
  EXPECT_EQ(CountRows(path, "variant_stats"), 2);
  EXPECT_EQ(CountRows(path,
                      "variant_stats WHERE run_id = 1 AND label = 'bf16' "
                      "AND ok_trials = 0 AND speedup IS NULL"),
            1);
  EXPECT_EQ(CountRows(path, "variant_stats WHERE run_id = 2"), 1);
}

TEST_F(ResumeTest, RecordVariantStatsIsAtomic) {
  const std::string path = PathOf("runx.db");
  FillExampleStore(path);
  Store store = Store::Open(path);
  store.RecordVariantStats(1, {{"baseline", true, 2, 2}});
  try {
    store.RecordVariantStats(1, {{"bf16", false, 1, 1}, {"bf16", false, 1, 1}});
    FAIL() << "expected StoreError";
  } catch (const StoreError& e) {
    EXPECT_EQ(std::string(e.what()), "cannot record the variant figures of run 1 in '" + path +
                                         "': UNIQUE constraint failed: variant_stats.run_id, variant_stats.label");
  }
  EXPECT_EQ(CountRows(path, "variant_stats WHERE run_id = 1 AND label = 'baseline'"), 1);
  try {
    store.RecordVariantStats(9, {{"bf16", false, 1, 1}});
    FAIL() << "expected StoreError";
  } catch (const StoreError& e) {
    EXPECT_EQ(std::string(e.what()),
              "cannot record the variant figures of run 9 in '" + path + "': FOREIGN KEY constraint failed");
  }
  EXPECT_EQ(CountRows(path, "variant_stats WHERE run_id = 1"), 1);
  EXPECT_EQ(CountRows(path, "variant_stats WHERE run_id = 9"), 0);
}

TEST_F(ResumeTest, SpeedupsViewShowsTheVariantInterval) {
  const std::string path = PathOf("runx.db");
  FillExampleStore(path);
  {
    Store store = Store::Open(path);
    VariantStatsRow baseline{"baseline", true, 2, 2};
    baseline.speedup = 1.0;
    store.RecordVariantStats(1, {baseline, Bf16Stats()});
  }
  const QueryResult r = QueryReadOnly(path,
                                      "SELECT label, speedup_ci_low, speedup_ci_high, significant FROM speedups "
                                      "WHERE sweep_id IN (1, 2) ORDER BY trial_id");
  const Value null;
  const std::vector<std::vector<Value>> expected = {
      {std::string("baseline"), null, null, null},
      {std::string("baseline"), null, null, null},
      {std::string("bf16"), 1.38, 1.49, int64_t{1}},
      {std::string("fp16"), null, null, null},
      // run 2 has its own labels: nothing joins from run 1
      {std::string("baseline"), null, null, null},
      {std::string("bf16"), null, null, null},
  };
  EXPECT_EQ(r.rows, expected);
}

}  // namespace
}  // namespace runx::store

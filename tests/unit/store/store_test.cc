// Store::Open, migrations, RecordTrial and the trial_summary view, on real SQLite files.
#include "store/store.h"

#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <set>

#include "store/schema.h"
#include "test_support.h"

namespace runx::store {
namespace {

using testing::CountRows;
using testing::ExampleTrial;
using testing::FillExampleStore;
using testing::MakeTrial;

class StoreTest : public testing::TempDirTest {};

std::set<std::string> SchemaObjects(SQLite::Database& db, const std::string& type) {
  std::set<std::string> names;
  SQLite::Statement q(db, "SELECT name FROM sqlite_schema WHERE type = ? AND name NOT LIKE 'sqlite_%'");
  q.bind(1, type);
  while (q.executeStep()) names.insert(q.getColumn(0).getString());
  return names;
}

std::string Pragma(SQLite::Database& db, const std::string& name) {
  return db.execAndGet("PRAGMA " + name).getString();
}

// A store with one experiment and one running run; returns the run id.
int64_t AddRun(Store& store) {
  const int64_t exp = store.AddExperiment("e", "e.yaml", "name: e\n", "sha");
  RunInfo info;
  info.experiment_id = exp;
  info.started_at = "2026-12-01T10:00:00Z";
  info.host = "box";
  info.runx_version = "0.1.0";
  info.git_sha = "abc";
  info.command = "runx run e.yaml";
  return store.BeginRun(info);
}

TEST_F(StoreTest, OpenCreatesDirectoriesAndMigratesEmptyToLatest) {
  const std::string path = PathOf("a/b/runx.db");
  Store store = Store::Open(path);
  EXPECT_TRUE(std::filesystem::exists(path));
  EXPECT_EQ(store.schema_version(), LatestSchemaVersion());
  EXPECT_EQ(LatestSchemaVersion(), 7);
  EXPECT_EQ(store.path(), path);
  EXPECT_EQ(SchemaObjects(store.db(), "table"),
            (std::set<std::string>{"schema_version", "experiments", "runs", "trials", "steps", "metrics", "environment",
                                   "variant_stats", "run_trials", "claims"}));
  EXPECT_EQ(SchemaObjects(store.db(), "view"), (std::set<std::string>{"trial_summary", "speedups", "steps_measured",
                                                                      "run_summary", "variant_changes", "scaling"}));
  EXPECT_EQ(CountRows(path, "schema_version"), 1);
}

// Runners started at the same moment on a new store both open it: the one that finds another
// creating or migrating it waits (issue 30, point 3: about 1 start in 10 failed with "database is
// locked" when only SQLite's busy handler waited).
TEST_F(StoreTest, RunnersOpeningANewStoreAtOnceAllWait) {
  int failed = 0;
  for (int round = 0; round < 40; ++round) {
    const std::string db = PathOf("race" + std::to_string(round) + ".db");
    std::vector<pid_t> children;
    // Every child starts opening at the same moment.
    const auto start = std::chrono::steady_clock::now() + std::chrono::milliseconds(20);
    for (int i = 0; i < 4; ++i) {
      const pid_t pid = fork();
      if (pid == 0) {
        while (std::chrono::steady_clock::now() < start) {
        }
        try {
          Store s = Store::Open(db);
          AddRun(s);
          _exit(0);
        } catch (const std::exception& e) {
          std::fprintf(stderr, "%s\n", e.what());
          _exit(1);
        }
      }
      children.push_back(pid);
    }
    for (const pid_t pid : children) {
      int status = 0;
      waitpid(pid, &status, 0);
      failed += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
  }
  EXPECT_EQ(failed, 0);
}

TEST_F(StoreTest, OpenSetsPragmas) {
  Store store = Store::Open(PathOf("runx.db"));
  EXPECT_EQ(Pragma(store.db(), "journal_mode"), "wal");
  EXPECT_EQ(Pragma(store.db(), "synchronous"), "1");  // NORMAL
  EXPECT_EQ(Pragma(store.db(), "foreign_keys"), "1");
  EXPECT_EQ(Pragma(store.db(), "busy_timeout"), "600000");
}

TEST_F(StoreTest, ReopenKeepsDataAndDoesNotMigrateAgain) {
  const std::string path = PathOf("runx.db");
  FillExampleStore(path);
  EXPECT_EQ(CountRows(path, "trials"), 8);
  {
    Store store = Store::Open(path);
    EXPECT_EQ(store.schema_version(), LatestSchemaVersion());
    // The same (name, path, sha256) is the same experiment row.
    EXPECT_EQ(store.AddExperiment("mlp_amp", "experiments/mlp_amp.yaml", "name: mlp_amp\n", "sha-mlp"), 1);
    EXPECT_EQ(store.AddExperiment("mlp_amp", "experiments/mlp_amp.yaml", "edited\n", "sha-2"), 3);
  }
  EXPECT_EQ(CountRows(path, "experiments"), 3);
  EXPECT_EQ(CountRows(path, "runs"), 3);
  EXPECT_EQ(CountRows(path, "trials"), 8);
  EXPECT_EQ(CountRows(path, "steps"), 7 * 7);
  EXPECT_EQ(CountRows(path, "schema_version"), 1);
}

TEST_F(StoreTest, RefusesNewerSchemaVersion) {
  const std::string path = PathOf("runx.db");
  { Store::Open(path).db().exec("UPDATE schema_version SET version = 99"); }
  try {
    Store::Open(path);
    FAIL() << "expected StoreError";
  } catch (const StoreError& e) {
    EXPECT_EQ(std::string(e.what()),
              "results store '" + path + "' has schema version 99, this runx supports up to 7; upgrade runx");
  }
}

TEST_F(StoreTest, RefusesDatabaseThatIsNotAStore) {
  const std::string path = PathOf("other.db");
  { SQLite::Database(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE).exec("CREATE TABLE t(a)"); }
  try {
    Store::Open(path);
    FAIL() << "expected StoreError";
  } catch (const StoreError& e) {
    EXPECT_EQ(std::string(e.what()), "'" + path +
                                         "' is not a runx results store: it has tables but no schema_version; "
                                         "pass --db with another path");
  }
}

TEST_F(StoreTest, RefusesFileThatIsNotADatabase) {
  const std::string path = PathOf("notes.txt");
  std::ofstream(path) << "these are not the results you are looking for, "
                         "but they are long enough to look like a database header\n";
  try {
    Store::Open(path);
    FAIL() << "expected StoreError";
  } catch (const StoreError& e) {
    EXPECT_EQ(std::string(e.what()), "cannot open results store '" + path + "': file is not a database");
  }
}

TEST_F(StoreTest, RecordTrialWritesEverything) {
  const std::string path = PathOf("runx.db");
  int64_t trial_id = 0;
  {
    Store store = Store::Open(path);
    const int64_t run = AddRun(store);
    TrialRecord t = MakeTrial(run, 0, {"bf16", false, 2, "ok", "", 1500, 42});
    t.environment["cuda_visible_devices"] = "0";
    trial_id = store.RecordTrial(t);
  }
  EXPECT_EQ(trial_id, 1);
  SQLite::Database db(path, SQLite::OPEN_READONLY);
  SQLite::Statement q(db,
                      "SELECT run_id, config_hash, config_json, label, is_baseline, "
                      "repeat_index, order_index, device, status, error IS NULL, started_at, "
                      "finished_at FROM trials");
  ASSERT_TRUE(q.executeStep());
  EXPECT_EQ(q.getColumn(0).getInt64(), 1);
  EXPECT_EQ(q.getColumn(1).getString(), "h-bf16");
  EXPECT_EQ(q.getColumn(2).getString(), R"({"data":{"batch_size":64},"technique":"bf16"})");
  EXPECT_EQ(q.getColumn(3).getString(), "bf16");
  EXPECT_EQ(q.getColumn(4).getInt(), 0);
  EXPECT_EQ(q.getColumn(5).getInt(), 2);
  EXPECT_EQ(q.getColumn(6).getInt(), 0);
  EXPECT_EQ(q.getColumn(7).getString(), "cpu");
  EXPECT_EQ(q.getColumn(8).getString(), "ok");
  EXPECT_EQ(q.getColumn(9).getInt(), 1);  // an empty error is stored as NULL
  EXPECT_EQ(q.getColumn(10).getString(), "2026-12-01T10:00:00Z");
  EXPECT_EQ(q.getColumn(11).getString(), "2026-12-01T10:00:30Z");
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM steps WHERE trial_id = 1").getInt(), 7);
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM steps WHERE loss IS NULL").getInt(), 2);
  EXPECT_EQ(db.execAndGet("SELECT sum(wall_ms) FROM steps WHERE phase = 'measure'").getDouble(), 42 * 5 + 10);
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM metrics WHERE trial_id = 1").getInt(), 9);
  EXPECT_EQ(db.execAndGet("SELECT group_concat(step) FROM metrics WHERE name = 'loss_scale'").getString(), "0,1");
  EXPECT_EQ(db.execAndGet("SELECT group_concat(key || '=' || value, ';') FROM environment "
                          "WHERE trial_id = 1 AND run_id = 1 ORDER BY key")
                .getString(),
            "cuda_visible_devices=0;omp_num_threads=2");
}

TEST_F(StoreTest, RecordTrialIsAtomicOnDuplicateStep) {
  const std::string path = PathOf("runx.db");
  Store store = Store::Open(path);
  const int64_t run = AddRun(store);
  store.RecordTrial(MakeTrial(run, 0, {"baseline", true, 0, "ok", "", 1000, 64}));
  TrialRecord bad = MakeTrial(run, 1, {"bf16", false, 0, "ok", "", 1500, 42});
  bad.steps.push_back({"measure", 3, 1.0, 0.0, 64, std::nullopt});  // (measure, 3) again
  try {
    store.RecordTrial(bad);
    FAIL() << "expected StoreError";
  } catch (const StoreError& e) {
    EXPECT_EQ(std::string(e.what()), "cannot record trial 'bf16' (repeat 0) of run 1 in '" + path +
                                         "': UNIQUE constraint failed: steps.trial_id, steps.phase, steps.step");
  }
  EXPECT_EQ(CountRows(path, "trials"), 1);
  EXPECT_EQ(CountRows(path, "trials WHERE label = 'bf16'"), 0);
  EXPECT_EQ(CountRows(path, "steps"), 7);
  EXPECT_EQ(CountRows(path, "metrics"), 9);
  EXPECT_EQ(CountRows(path, "environment WHERE trial_id IS NOT NULL"), 1);
  // The store is still usable: the fixed trial goes in as the next id.
  bad.steps.pop_back();
  EXPECT_EQ(store.RecordTrial(bad), 2);
}

TEST_F(StoreTest, RecordTrialIsAtomicOnDuplicateMetric) {
  const std::string path = PathOf("runx.db");
  Store store = Store::Open(path);
  const int64_t run = AddRun(store);
  TrialRecord bad = MakeTrial(run, 0, {"bf16", false, 0, "ok", "", 1500, 42});
  bad.metrics.push_back({"accuracy", 0.5, "", std::nullopt});
  EXPECT_THROW(store.RecordTrial(bad), StoreError);
  EXPECT_EQ(CountRows(path, "trials"), 0);
  EXPECT_EQ(CountRows(path, "steps"), 0);
  EXPECT_EQ(CountRows(path, "metrics"), 0);
}

TEST_F(StoreTest, RecordTrialRefusesUnknownRunAndStatus) {
  const std::string path = PathOf("runx.db");
  Store store = Store::Open(path);
  AddRun(store);
  try {
    store.RecordTrial(MakeTrial(7, 0, {"bf16", false, 0, "ok", "", 1500, 42}));
    FAIL() << "expected StoreError";
  } catch (const StoreError& e) {
    EXPECT_EQ(std::string(e.what()),
              "cannot record trial 'bf16' (repeat 0) of run 7 in '" + path + "': FOREIGN KEY constraint failed");
  }
  EXPECT_EQ(CountRows(path, "trials"), 0);
}

TEST_F(StoreTest, ThousandsOfStepsInOneFastTransaction) {
  const std::string path = PathOf("runx.db");
  Store store = Store::Open(path);
  const int64_t run = AddRun(store);
  TrialRecord t = MakeTrial(run, 0, {"baseline", true, 0, "ok", "", 1000, 64});
  t.steps.clear();
  for (int i = 0; i < 20000; ++i) t.steps.push_back({"measure", i, 1.5, 0.1, 32, 1.0});
  const auto start = std::chrono::steady_clock::now();
  store.RecordTrial(t);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(CountRows(path, "steps"), 20000);
  // Typically ~30 ms; one commit per step would take seconds.
  EXPECT_LT(std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count(), 3000);
}

TEST_F(StoreTest, EndRunAndEnvironment) {
  const std::string path = PathOf("runx.db");
  Store store = Store::Open(path);
  const int64_t run = AddRun(store);
  store.AddRunEnvironment(run, {{"host", "box"}, {"torch_version", "1.13.0"}});
  store.AddRunEnvironment(run, {{"host", "box2"}});  // a key again replaces its value
  store.EndRun(run, RunStatus::kInterrupted, "2026-12-01T11:00:00Z");
  EXPECT_EQ(store.db().execAndGet("SELECT status || ' ' || finished_at FROM runs WHERE id = 1").getString(),
            "interrupted 2026-12-01T11:00:00Z");
  EXPECT_EQ(store.db()
                .execAndGet("SELECT group_concat(key || '=' || value, ';') FROM "
                            "(SELECT * FROM environment ORDER BY key)")
                .getString(),
            "host=box2;torch_version=1.13.0");
  try {
    store.EndRun(run, RunStatus::kRunning, "");
    FAIL() << "expected StoreError";
  } catch (const StoreError& e) {
    EXPECT_EQ(std::string(e.what()), "run 1 cannot end as 'running'");
  }
  try {
    store.EndRun(42, RunStatus::kOk, "");
    FAIL() << "expected StoreError";
  } catch (const StoreError& e) {
    EXPECT_EQ(std::string(e.what()), "cannot end run 42 in '" + path + "': no such run");
  }
}

TEST_F(StoreTest, TrialSummaryColumnsAndValues) {
  const std::string path = PathOf("runx.db");
  FillExampleStore(path);
  const QueryResult r = QueryReadOnly(path, "SELECT * FROM trial_summary ORDER BY trial_id");
  EXPECT_EQ(r.columns, (std::vector<std::string>{"trial_id",    "sweep_id",        "experiment",     "label",
                                                 "status",      "device",          "samples_per_s",  "step_ms_median",
                                                 "step_ms_p10", "step_ms_p90",     "peak_mem_bytes", "final_loss",
                                                 "accuracy",    "started_at",      "error",          "config_hash",
                                                 "finished_at", "is_baseline",     "repeat_index",   "run_id",
                                                 "reused",      "produced_by_run", "env_hash",       "error_detail"}));
  ASSERT_EQ(r.rows.size(), 8u);
  const std::vector<Value> bf16 = {int64_t{3},
                                   int64_t{1},
                                   std::string("mlp_amp"),
                                   std::string("bf16"),
                                   std::string("ok"),
                                   std::string("cpu"),
                                   1500.0,
                                   44.0,
                                   42.5,
                                   45.5,
                                   int64_t{123456791},
                                   1.0,
                                   0.9 + 0.01 * 2,
                                   std::string("2026-12-01T10:02:00Z"),
                                   std::monostate{},
                                   std::string("h-bf16"),
                                   std::string("2026-12-01T10:02:30Z"),
                                   int64_t{0},
                                   int64_t{0},
                                   int64_t{1},
                                   int64_t{0},
                                   int64_t{1},
                                   std::string("env-box"),
                                   std::monostate{}};
  EXPECT_EQ(r.rows[2], bf16);
  // A trial without metrics: NULL figures, its error kept.
  const std::vector<Value> fp16 = {int64_t{4},
                                   int64_t{1},
                                   std::string("mlp_amp"),
                                   std::string("fp16"),
                                   std::string("incompatible"),
                                   std::string("cpu"),
                                   std::monostate{},
                                   std::monostate{},
                                   std::monostate{},
                                   std::monostate{},
                                   std::monostate{},
                                   std::monostate{},
                                   std::monostate{},
                                   std::string("2026-12-01T10:03:00Z"),
                                   std::string("fp16 autocast needs a CUDA device"),
                                   std::string("h-fp16"),
                                   std::string("2026-12-01T10:03:30Z"),
                                   int64_t{0},
                                   int64_t{0},
                                   int64_t{1},
                                   int64_t{0},
                                   int64_t{1},
                                   std::string("env-box"),
                                   std::string("fp16 autocast needs a CUDA device")};
  EXPECT_EQ(r.rows[3], fp16);
}

TEST_F(StoreTest, SpeedupsAgainstTheMeanOfTheBaselineRepeats) {
  const std::string path = PathOf("runx.db");
  FillExampleStore(path);
  const QueryResult r = QueryReadOnly(path,
                                      "SELECT label, baseline_samples_per_s, speedup FROM speedups WHERE sweep_id = 1 "
                                      "ORDER BY trial_id");
  const std::vector<std::vector<Value>> expected = {
      {std::string("baseline"), 1050.0, 1000.0 / 1050},
      {std::string("baseline"), 1050.0, 1100.0 / 1050},
      {std::string("bf16"), 1050.0, 1500.0 / 1050},
      {std::string("fp16"), 1050.0, std::monostate{}},
  };
  EXPECT_EQ(r.rows, expected);
}

TEST_F(StoreTest, IntegrityAndForeignKeysAfterWrites) {
  const std::string path = PathOf("runx.db");
  FillExampleStore(path);
  SQLite::Database db(path, SQLite::OPEN_READONLY);
  EXPECT_EQ(db.execAndGet("PRAGMA integrity_check").getString(), "ok");
  SQLite::Statement fk(db, "PRAGMA foreign_key_check");
  EXPECT_FALSE(fk.executeStep());
}

}  // namespace
}  // namespace runx::store

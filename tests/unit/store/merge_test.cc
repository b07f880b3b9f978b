// MergeStores (`runx merge`) on real store files made through the Store API: everything comes
// along with its ids remapped, merging twice adds nothing, the order of merges does not matter,
// reused trials keep pointing at the right trial, old inputs are read through a migrated copy and
// never changed, and a failure leaves the output as it was.
#include "store/merge.h"

#include <SQLiteCpp/SQLiteCpp.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "store/store.h"
#include "test_support.h"

namespace runx::store {
namespace {

namespace fs = std::filesystem;
using testing::CountRows;
using testing::FillExampleStore;
using testing::LoadVersion2Fixture;
using testing::MakeTrial;
using testing::ReadFileBytes;

class MergeTest : public testing::TempDirTest {};

std::string Text(const Value& v) {
  if (std::holds_alternative<std::monostate>(v)) return "NULL";
  if (std::holds_alternative<int64_t>(v)) return std::to_string(std::get<int64_t>(v));
  if (std::holds_alternative<double>(v)) return fmt::format("{:.17g}", std::get<double>(v));
  return "'" + std::get<std::string>(v) + "'";
}

// The first column of the first row of `sql`, a text.
std::string One(const std::string& path, const std::string& sql) {
  const auto rows = QueryReadOnly(path, sql).rows;
  return rows.empty() || !std::holds_alternative<std::string>(rows[0][0]) ? "" : std::get<std::string>(rows[0][0]);
}

std::map<int64_t, std::string> Ids(const std::string& path, const std::string& sql) {
  std::map<int64_t, std::string> out;
  for (const auto& row : QueryReadOnly(path, sql).rows) out[std::get<int64_t>(row[0])] = Text(row[1]);
  return out;
}

// Every row of `table` as text, with the store's own ids replaced by what identifies a row in
// any store (run and trial uids, an experiment's name, path and sha256); the reuse floor, a
// trial id, and when an experiment row was first written are left out. Two stores with the same content give the same
// multiset.
std::multiset<std::string> Canon(const std::string& path, const std::string& table) {
  const auto runs = Ids(path, "SELECT id, uid FROM runs");
  const auto trials = Ids(path, "SELECT id, uid FROM trials");
  const auto experiments = Ids(path, "SELECT id, name || '|' || path || '|' || sha256 FROM experiments");
  const QueryResult r = QueryReadOnly(path, "SELECT * FROM " + table);
  std::multiset<std::string> out;
  for (const auto& row : r.rows) {
    std::string line;
    for (size_t i = 0; i < r.columns.size(); ++i) {
      const std::string& c = r.columns[i];
      const bool is_id = std::holds_alternative<int64_t>(row[i]);
      std::string value = Text(row[i]);
      if (c == "id" || c == "reuse_floor" || c == "created_at") continue;
      if (c == "run_id" && is_id) value = runs.at(std::get<int64_t>(row[i]));
      if (c == "trial_id" && is_id) value = trials.at(std::get<int64_t>(row[i]));
      if (c == "experiment_id") value = experiments.at(std::get<int64_t>(row[i]));
      line += c + "=" + value + " ";
    }
    out.insert(line);
  }
  return out;
}

const std::vector<std::string> kTables = {"experiments", "runs",        "trials",     "steps",
                                          "metrics",     "environment", "run_trials", "variant_stats"};

// The content of every merged table of the store at `path`.
std::map<std::string, std::multiset<std::string>> Content(const std::string& path) {
  std::map<std::string, std::multiset<std::string>> out;
  for (const std::string& t : kTables) out[t] = Canon(path, t);
  return out;
}

// The union of two stores' contents: a row both have (an experiment of the same name, path and
// sha256; a run or trial of the same uid, copied from one store to the other, and what hangs off
// it) counts once.
std::map<std::string, std::multiset<std::string>> Union(std::map<std::string, std::multiset<std::string>> a,
                                                        const std::map<std::string, std::multiset<std::string>>& b) {
  for (const auto& [table, rows] : b) {
    for (const std::string& row : rows) {
      if (a[table].count(row) > 0) continue;
      a[table].insert(row);
    }
  }
  return a;
}

std::string ErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const StoreError& e) {
    return e.what();
  }
  return "(no error)";
}

RunInfo Info(int64_t experiment, const std::string& started_at, bool force = false) {
  RunInfo info;
  info.experiment_id = experiment;
  info.started_at = started_at;
  info.host = "box";
  info.pid = 4242;
  info.plan_hash = "plan";
  info.force = force;
  return info;
}

bool Alive(const std::string&, int64_t, const std::string&) { return true; }

TEST_F(MergeTest, MergesEveryRowWithItsIdsRemapped) {
  const std::string a = PathOf("a.db"), b = PathOf("b.db"), out = PathOf("out/runx.db");
  FillExampleStore(a);
  FillExampleStore(b);  // the same experiments, other runs and trials (their uids are random)
  const MergeResult r = MergeStores(out, {a, b});
  EXPECT_TRUE(r.created);
  ASSERT_EQ(r.inputs.size(), 2u);
  EXPECT_EQ(r.inputs[0].schema_version, LatestSchemaVersion());
  EXPECT_EQ(r.total.runs_added, 6);
  EXPECT_EQ(r.total.runs_present, 0);
  EXPECT_EQ(r.total.trials_added, 16);
  EXPECT_EQ(r.total.memberships_added, 16);
  EXPECT_EQ(r.inputs[0].counts.experiments_added, 2);
  EXPECT_EQ(r.inputs[1].counts.experiments_added, 0);
  EXPECT_EQ(CountRows(out, "runs"), 6);
  EXPECT_EQ(CountRows(out, "trials"), 16);
  EXPECT_EQ(CountRows(out, "experiments"), 2);
  EXPECT_EQ(CountRows(out, "steps"), 2 * CountRows(a, "steps"));
  EXPECT_EQ(CountRows(out, "metrics"), 2 * CountRows(a, "metrics"));
  EXPECT_EQ(CountRows(out, "environment"), 2 * CountRows(a, "environment"));
  EXPECT_EQ(CountRows(out, "variant_stats"), 2 * CountRows(a, "variant_stats"));
  // b's trials have ids after a's, and point at b's runs (4..6) in the output.
  EXPECT_EQ(CountRows(out, "trials WHERE id > 8 AND run_id > 3"), 8);
  EXPECT_EQ(CountRows(out, "run_trials rt JOIN trials t ON t.id = rt.trial_id WHERE rt.run_id = t.run_id"), 16);
  // Row by row, the output holds both stores, nothing more.
  EXPECT_EQ(Content(out), Union(Content(a), Content(b)));
  // The views answer as on each input: run 4 is b's run 1.
  EXPECT_EQ(QueryReadOnly(out, "SELECT label, round(speedup, 3) FROM speedups WHERE run_id = 4 ORDER BY trial_id").rows,
            QueryReadOnly(a, "SELECT label, round(speedup, 3) FROM speedups WHERE run_id = 1 ORDER BY trial_id").rows);
  SQLite::Database check(out, SQLite::OPEN_READONLY);
  EXPECT_EQ(check.execAndGet("PRAGMA integrity_check").getString(), "ok");
  EXPECT_EQ(check.execAndGet("SELECT count(*) FROM pragma_foreign_key_check").getInt(), 0);
}

TEST_F(MergeTest, MergingTwiceAddsNothing) {
  const std::string a = PathOf("a.db"), out = PathOf("out.db");
  FillExampleStore(a);
  MergeStores(out, {a});
  const auto before = Content(out);
  const MergeResult again = MergeStores(out, {a, a});
  EXPECT_FALSE(again.created);
  EXPECT_EQ(again.total.runs_added, 0);
  EXPECT_EQ(again.total.trials_added, 0);
  EXPECT_EQ(again.total.memberships_added, 0);
  EXPECT_EQ(again.total.experiments_added, 0);
  EXPECT_EQ(again.total.runs_present, 6);
  EXPECT_EQ(again.total.trials_present, 16);
  EXPECT_EQ(Content(out), before);
  EXPECT_EQ(Content(out), Content(a));
  EXPECT_EQ(CountRows(out, "trials"), 8);
  EXPECT_EQ(ErrorOf([&] {
              MergeStores(a, {out, a});
            }),
            "cannot merge '" + a + "' into itself: name another output store");
}

TEST_F(MergeTest, MergingInStepsEqualsMergingAll) {
  const std::string a = PathOf("a.db"), b = PathOf("b.db"), c = PathOf("c.db");
  FillExampleStore(a);
  FillExampleStore(b);
  FillExampleStore(c);
  fs::copy_file(c, PathOf("c2.db"));
  const std::string c2 = PathOf("c2.db");
  fs::copy_file(b, PathOf("b2.db"));
  const std::string b2 = PathOf("b2.db");
  MergeStores(c, {a, b});  // all at once
  MergeStores(b2, {a});    // a into b, then b into c
  MergeStores(c2, {b2});
  EXPECT_EQ(Content(c), Content(c2));
  EXPECT_EQ(CountRows(c, "trials"), 24);
}

TEST_F(MergeTest, AReusedTrialOfAnotherStorePointsAtTheRightTrial) {
  // Machine 1 ran a trial; its store was copied to machine 2, whose next run reused it and ran
  // another; machine 1 ran one more on its own.
  const std::string one = PathOf("one.db"), two = PathOf("two.db"), out = PathOf("out.db");
  int64_t exp = 0;
  {
    Store s = Store::Open(one);
    exp = s.AddExperiment("e", "e.yaml", "name: e\n", "sha");
    const int64_t run = s.BeginRun(Info(exp, "2026-12-01T10:00:00Z"));
    s.RecordTrial(MakeTrial(run, 0, {"baseline", true, 0, "ok", "", 100, 10}));
    s.EndRun(run, RunStatus::kOk, "2026-12-01T11:00:00Z");
  }
  fs::copy_file(one, two);
  std::string reused_uid;
  {
    Store s = Store::Open(two);
    const int64_t run = s.BeginRun(Info(exp, "2026-12-02T10:00:00Z"));
    const TrialRecord t = MakeTrial(run, 0, {"baseline", true, 0, "ok", "", 100, 10});
    const Claim claim = s.ClaimTrial(run, {t.config_hash, t.env_hash, t.platform_hash, 0}, {"baseline", true, 0, 0},
                                     Alive, "2026-12-02T10:00:01Z");
    ASSERT_EQ(claim.outcome, ClaimOutcome::kReused);
    s.RecordTrial(MakeTrial(run, 1, {"bf16", false, 0, "ok", "", 150, 7}));
    s.EndRun(run, RunStatus::kOk, "2026-12-02T11:00:00Z");
  }
  {
    Store s = Store::Open(one);
    const int64_t run = s.BeginRun(Info(exp, "2026-12-03T10:00:00Z"));
    s.RecordTrial(MakeTrial(run, 0, {"fp16", false, 0, "ok", "", 120, 8}));
    s.EndRun(run, RunStatus::kOk, "2026-12-03T11:00:00Z");
  }
  // In store two, the reused trial is trial 1 of run 2; in store one, trial 2 is another one.
  const std::string uid = One(two, "SELECT uid FROM trials WHERE id = 1");
  const MergeResult r = MergeStores(out, {one, two});
  EXPECT_EQ(r.inputs[1].counts.runs_present, 1);    // run 1, copied with the store
  EXPECT_EQ(r.inputs[1].counts.trials_present, 1);  // its trial
  EXPECT_EQ(CountRows(out, "runs"), 3);
  EXPECT_EQ(CountRows(out, "trials"), 3);
  EXPECT_EQ(QueryReadOnly(out,
                          "SELECT t.uid, t.label FROM run_trials rt JOIN runs r ON r.id = rt.run_id "
                          "JOIN trials t ON t.id = rt.trial_id WHERE rt.reused = 1")
                .rows,
            (std::vector<std::vector<Value>>{{uid, std::string("baseline")}}));
  // The run that reused it has both of its trials, with its own baseline.
  EXPECT_EQ(QueryReadOnly(out,
                          "SELECT label, round(speedup, 2) FROM speedups WHERE run_id = "
                          "(SELECT id FROM runs WHERE started_at = '2026-12-02T10:00:00Z') ORDER BY label")
                .rows,
            (std::vector<std::vector<Value>>{{std::string("baseline"), 1.0}, {std::string("bf16"), 1.5}}));
  EXPECT_EQ(Content(out), Union(Content(one), Content(two)));
}

TEST_F(MergeTest, AVersion2InputIsReadThroughAMigratedCopyAndNeverChanged) {
  const std::string old = PathOf("v2.db"), out = PathOf("out.db");
  LoadVersion2Fixture(old);
  const std::string bytes = ReadFileBytes(old);
  const MergeResult r = MergeStores(out, {old});
  EXPECT_EQ(r.inputs[0].schema_version, 2);
  EXPECT_EQ(r.total.trials_added, 19);
  EXPECT_EQ(ReadFileBytes(old), bytes);
  for (const char* suffix : {"-wal", "-shm", "-journal"}) EXPECT_FALSE(fs::exists(old + suffix)) << suffix;
  // The output holds what the input holds once migrated, with the same uids.
  const std::string migrated = PathOf("migrated.db");
  fs::copy_file(old, migrated);
  { Store::Open(migrated); }
  EXPECT_EQ(Content(out), Content(migrated));
  // And merging the old store again adds nothing: its rows get the same uids every time.
  const MergeResult again = MergeStores(out, {old, migrated});
  EXPECT_EQ(again.total.trials_added, 0);
  EXPECT_EQ(again.total.runs_added, 0);
  EXPECT_EQ(again.total.trials_present, 38);
}

TEST_F(MergeTest, AFailureMidwayLeavesTheOutputUnchanged) {
  const std::string a = PathOf("a.db"), broken = PathOf("broken.db"), out = PathOf("out.db");
  FillExampleStore(a);
  FillExampleStore(broken);
  FillExampleStore(out);
  {
    // A damaged input: a table the merge reads after the trials is gone.
    SQLite::Database db(broken, SQLite::OPEN_READWRITE);
    db.exec("DROP TABLE environment");
  }
  const auto before = Content(out);
  EXPECT_EQ(ErrorOf([&] {
              MergeStores(out, {a, broken});
            }),
            "cannot merge into '" + out + "' from '" + broken + "': no such table: environment; nothing was merged");
  EXPECT_EQ(Content(out), before);
  EXPECT_EQ(CountRows(out, "trials"), 8);
  // A store created for the merge is removed again.
  const std::string fresh = PathOf("fresh.db");
  EXPECT_NE(ErrorOf([&] { MergeStores(fresh, {a, broken}); }), "(no error)");
  EXPECT_FALSE(fs::exists(fresh));
  EXPECT_FALSE(fs::exists(fresh + "-wal"));
}

TEST_F(MergeTest, RefusesWhatIsNotARunxStoreAndChangesNothing) {
  const std::string a = PathOf("a.db"), out = PathOf("out.db");
  FillExampleStore(a);
  const std::string text = PathOf("notes.txt");
  std::ofstream(text) << std::string(2000, 'x') << "\n";
  const std::string other = PathOf("other.db");
  {
    SQLite::Database(other, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE)
        .exec("CREATE TABLE t (a); INSERT INTO t VALUES (1)");
  }
  const std::string text_bytes = ReadFileBytes(text), other_bytes = ReadFileBytes(other);

  EXPECT_EQ(ErrorOf([&] {
              MergeStores(out, {a, other});
            }),
            "cannot merge '" + other + "': it is not a runx results store (it has no schema_version table)");
  EXPECT_EQ(ErrorOf([&] { MergeStores(out, {text}); }),
            "cannot merge: cannot read results store '" + text + "': file is not a database");
  EXPECT_EQ(ErrorOf([&] { MergeStores(out, {PathOf("missing.db")}); }),
            "cannot merge '" + PathOf("missing.db") + "': no such file");
  EXPECT_FALSE(fs::exists(out));  // inputs are checked before the output is touched
  EXPECT_EQ(ErrorOf([&] { MergeStores(other, {a}); }),
            "cannot merge into '" + other +
                "': it is not a runx results store (it has tables but no schema_version); name another output store");
  EXPECT_EQ(ErrorOf([&] { MergeStores(text, {a}); }),
            "cannot merge into '" + text +
                "': it is not a runx results store (file is not a database); name another output store");
  EXPECT_EQ(ReadFileBytes(text), text_bytes);
  EXPECT_EQ(ReadFileBytes(other), other_bytes);
  EXPECT_FALSE(fs::exists(other + "-wal"));

  const std::string newer = PathOf("newer.db");
  FillExampleStore(newer);
  { SQLite::Database(newer, SQLite::OPEN_READWRITE).exec("UPDATE schema_version SET version = 99"); }
  EXPECT_EQ(ErrorOf([&] { MergeStores(out, {newer}); }),
            fmt::format("cannot merge '{}': it has schema version 99, this runx supports up to {}; upgrade runx", newer,
                        LatestSchemaVersion()));
}

TEST_F(MergeTest, ARunningRunIsRefusedUnlessAllowedAndCompletedByALaterMerge) {
  const std::string live = PathOf("live.db"), out = PathOf("out.db");
  Store s = Store::Open(live);
  const int64_t exp = s.AddExperiment("e", "e.yaml", "name: e\n", "sha");
  const int64_t run = s.BeginRun(Info(exp, "2026-12-01T10:00:00Z"));
  s.RecordTrial(MakeTrial(run, 0, {"baseline", true, 0, "ok", "", 100, 10}));
  EXPECT_EQ(ErrorOf([&] { MergeStores(out, {live}); }),
            "cannot merge '" + live +
                "': a run is still running (run 1 on host 'box', pid 4242), so its results are not complete; merge it "
                "when it has ended, or pass --allow-running to merge it as it is now (a later merge brings the rest)");
  EXPECT_FALSE(fs::exists(out));
  MergeOptions allow;
  allow.allow_running = true;
  EXPECT_EQ(MergeStores(out, {live}, allow).total.trials_added, 1);
  EXPECT_EQ(One(out, "SELECT status FROM runs"), "running");
  // The run goes on and ends; merging again brings its new trial and its end.
  s.RecordTrial(MakeTrial(run, 1, {"bf16", false, 0, "ok", "", 150, 7}));
  s.EndRun(run, RunStatus::kOk, "2026-12-01T11:00:00Z");
  s.RecordVariantStats(run, {{"baseline", true, 1, 1}, {"bf16", false, 1, 1}});
  const MergeResult later = MergeStores(out, {live});
  EXPECT_EQ(later.total.runs_present, 1);
  EXPECT_EQ(later.total.runs_updated, 1);
  EXPECT_EQ(later.total.trials_added, 1);
  EXPECT_EQ(later.total.trials_present, 1);
  EXPECT_EQ(Content(out), Content(live));
}

// The shard of a finished SLURM job array whose runx was SIGKILLed: its run stays `running` in
// its store. With runners_ended it is merged as interrupted, with its trial; the input is unchanged.
TEST_F(MergeTest, ARunLeftRunningByARunnerThatHasEndedIsMergedAsInterrupted) {
  const std::string killed = PathOf("killed.db"), done = PathOf("done.db"), out = PathOf("out.db");
  {
    Store s = Store::Open(killed);
    const int64_t exp = s.AddExperiment("e", "e.yaml", "name: e\n", "sha");
    const int64_t run = s.BeginRun(Info(exp, "2026-12-01T10:00:00Z"));
    s.RecordTrial(MakeTrial(run, 0, {"baseline", true, 0, "ok", "", 100, 10}));
  }
  FillExampleStore(done);
  const auto before = Content(killed);
  MergeOptions ended;
  ended.runners_ended = true;
  const MergeResult r = MergeStores(out, {done, killed}, ended);
  ASSERT_EQ(r.inputs.size(), 2u);
  EXPECT_EQ(r.inputs[0].runs_ended, 0);
  EXPECT_EQ(r.inputs[1].runs_ended, 1);
  EXPECT_EQ(r.inputs[1].counts.trials_added, 1);
  const std::string uid = One(killed, "SELECT uid FROM runs");
  EXPECT_EQ(One(out, "SELECT status FROM runs WHERE uid = '" + uid + "'"), "interrupted");
  EXPECT_NE(One(out, "SELECT coalesce(finished_at, '') FROM runs WHERE uid = '" + uid + "'"), "");
  EXPECT_EQ(QueryReadOnly(out, "SELECT count(*) FROM runs WHERE status = 'running'").rows[0][0], Value(int64_t{0}));
  EXPECT_EQ(Content(killed), before);  // the input itself still says running
  EXPECT_EQ(One(killed, "SELECT status FROM runs"), "running");
}

TEST_F(MergeTest, AForcedRunReusesNothingThatCameWithItsMerge) {
  const std::string a = PathOf("a.db"), out = PathOf("out.db");
  FillExampleStore(out);
  {
    Store s = Store::Open(a);
    const int64_t exp = s.AddExperiment("e", "e.yaml", "name: e\n", "sha");
    const int64_t run = s.BeginRun(Info(exp, "2026-12-01T10:00:00Z", true));
    s.RecordTrial(MakeTrial(run, 0, {"baseline", true, 0, "ok", "", 100, 10}));
    s.EndRun(run, RunStatus::kInterrupted, "2026-12-01T11:00:00Z");
  }
  MergeStores(out, {a});
  EXPECT_EQ(One(out, "SELECT CAST(reuse_floor AS TEXT) FROM runs WHERE force = 1"), "9");
}

TEST_F(MergeTest, EveryTableIsMergedOrDeliberatelyLeft) {
  Store s = Store::Open(PathOf("runx.db"));
  std::set<std::string> tables;
  SQLite::Statement q(s.db(), "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'");
  while (q.executeStep()) tables.insert(q.getColumn(0).getString());
  std::set<std::string> known(MergedTables().begin(), MergedTables().end());
  known.insert(MergeSkippedTables().begin(), MergeSkippedTables().end());
  EXPECT_EQ(tables, known);
  EXPECT_EQ(MergedTables(), kTables);
}

}  // namespace
}  // namespace runx::store

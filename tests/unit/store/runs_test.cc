// Schema version 3: runs, the trial identity columns, run memberships and claims. The migration of
// a real version 2 store (tests/unit/store/data/store_v2.sql, written by the released runx), and
// the Store methods that concurrent runners and resume rely on.
#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "store/store.h"
#include "test_support.h"

namespace runx::store {
namespace {

using testing::CountRows;
using testing::FillExampleStore;
using testing::LoadVersion2Fixture;
using testing::MakeTrial;

class RunsTest : public testing::TempDirTest {};

std::vector<std::vector<Value>> Rows(const std::string& path, const std::string& sql) {
  return QueryReadOnly(path, sql).rows;
}

std::string One(const std::string& path, const std::string& sql) {
  const auto rows = Rows(path, sql);
  return rows.empty() || !std::holds_alternative<std::string>(rows[0][0]) ? "" : std::get<std::string>(rows[0][0]);
}

TEST_F(RunsTest, MigratesTheReleasedVersion2StoreWithNothingLost) {
  const std::string path = PathOf("v2.db");
  LoadVersion2Fixture(path);
  // What the old store holds, read with its own names.
  const auto old_trials = Rows(path,
                               "SELECT id, sweep_id, label, status, repeat_index, order_index, "
                               "coalesce(error, ''), config_json, config_hash FROM trials ORDER BY id");
  const auto old_steps = Rows(path, "SELECT * FROM steps ORDER BY trial_id, phase, step");
  const auto old_metrics = Rows(path, "SELECT * FROM metrics ORDER BY trial_id, name, step");
  const auto old_env = Rows(path, "SELECT * FROM environment ORDER BY sweep_id, trial_id, key");
  const auto old_stats = Rows(path, "SELECT * FROM variant_stats ORDER BY sweep_id, label");
  const auto old_sweeps = Rows(path,
                               "SELECT id, experiment_id, started_at, host, runx_version, git_sha, command "
                               "FROM sweeps ORDER BY id");
  ASSERT_EQ(old_trials.size(), 19u);
  ASSERT_EQ(Rows(path, "SELECT status FROM sweeps WHERE id = 3")[0][0], Value(std::string("running")));

  { EXPECT_EQ(Store::Open(path).schema_version(), 7); }

  EXPECT_EQ(Rows(path,
                 "SELECT id, run_id, label, status, repeat_index, order_index, coalesce(error, ''), "
                 "config_json, legacy_identity FROM trials ORDER BY id"),
            old_trials);
  EXPECT_EQ(Rows(path, "SELECT * FROM steps ORDER BY trial_id, phase, step"), old_steps);
  EXPECT_EQ(Rows(path, "SELECT * FROM metrics ORDER BY trial_id, name, step"), old_metrics);
  EXPECT_EQ(Rows(path, "SELECT * FROM environment ORDER BY run_id, trial_id, key"), old_env);
  // Every figure kept; the columns of version 6 (verdict, speedup_se, speedup_df) are empty.
  EXPECT_EQ(Rows(path,
                 "SELECT run_id, label, is_baseline, trials, ok_trials, step_ms_median, step_ms_p10, step_ms_p90, "
                 "samples_per_s, speedup, speedup_ci_low, speedup_ci_high, significant, accuracy_delta, resamples, "
                 "seed FROM variant_stats ORDER BY run_id, label"),
            old_stats);
  EXPECT_EQ(Rows(path,
                 "SELECT count(*) FROM variant_stats WHERE verdict IS NOT NULL OR speedup_se IS NOT NULL "
                 "OR speedup_df IS NOT NULL"),
            (std::vector<std::vector<Value>>{{int64_t{0}}}));
  EXPECT_EQ(Rows(path,
                 "SELECT id, experiment_id, started_at, host, runx_version, git_sha, command "
                 "FROM runs ORDER BY id"),
            old_sweeps);
  // Every old trial is a member of the run that produced it, with its label and baseline flag.
  EXPECT_EQ(CountRows(path, "run_trials"), 19);
  EXPECT_EQ(CountRows(path,
                      "run_trials rt JOIN trials t ON t.id = rt.trial_id "
                      "WHERE rt.run_id = t.run_id AND rt.label = t.label AND rt.reused = 0"),
            19);
  // Version 4: every run and trial has a uid of 32 hex digits, unique, derived from what
  // identified it in this file, so that the same old store migrated again gets the same uids.
  EXPECT_EQ(CountRows(path, "runs WHERE length(uid) = 32 AND uid NOT GLOB '*[^0-9a-f]*'"), CountRows(path, "runs"));
  EXPECT_EQ(CountRows(path, "trials WHERE length(uid) = 32 AND uid NOT GLOB '*[^0-9a-f]*'"), 19);
  EXPECT_EQ(CountRows(path, "(SELECT DISTINCT uid FROM trials)"), 19);
  const std::string again = PathOf("v2-again.db");
  LoadVersion2Fixture(again);
  { Store::Open(again); }
  EXPECT_EQ(Rows(again, "SELECT id, uid FROM trials ORDER BY id"),
            Rows(path, "SELECT id, uid FROM trials ORDER BY id"));
  EXPECT_EQ(Rows(again, "SELECT id, uid FROM runs ORDER BY id"), Rows(path, "SELECT id, uid FROM runs ORDER BY id"));
  // The sweep its runx left 'running' when it was killed is interrupted now.
  EXPECT_EQ(Rows(path, "SELECT status FROM runs WHERE id = 3")[0][0], Value(std::string("interrupted")));
  // The views answer on the old data, and the store takes new runs.
  EXPECT_EQ(CountRows(path, "trial_summary"), 19);
  // Run 1's two baseline repeats against their own mean; the killed run's one trial is its own.
  EXPECT_EQ(CountRows(path, "speedups WHERE label = 'baseline' AND status = 'ok' AND sweep_id = 1"), 2);
  EXPECT_EQ(CountRows(path, "speedups WHERE run_id = 3 AND speedup = 1"), 1);
  Store store = Store::Open(path);
  RunInfo info;
  info.experiment_id = 1;
  info.started_at = "2026-12-03T10:00:00Z";
  const int64_t run = store.BeginRun(info);
  TrialRecord t = MakeTrial(run, 0, {"baseline", true, 0, "ok", "", 100, 10});
  store.RecordTrial(t);
  EXPECT_EQ(CountRows(path, "trial_summary WHERE run_id = " + std::to_string(run)), 1);
  // New rows get random uids of the same form.
  EXPECT_EQ(CountRows(path, "runs WHERE length(uid) = 32 AND id = " + std::to_string(run)), 1);
  EXPECT_EQ(CountRows(path, "(SELECT DISTINCT uid FROM trials)"), 20);
  SQLite::Database check(path, SQLite::OPEN_READONLY);
  EXPECT_EQ(check.execAndGet("PRAGMA integrity_check").getString(), "ok");
  EXPECT_EQ(check.execAndGet("SELECT count(*) FROM pragma_foreign_key_check").getInt(), 0);
}

struct Fixture {
  int64_t run = 0;
  TrialKey key{"cfg", "env-a", "platform-x", 0};
  Membership place{"baseline", true, 0, 0};
};

RunInfo Info(const std::string& host, int64_t pid, bool force = false, bool any_build = false) {
  RunInfo info;
  info.experiment_id = 1;
  info.started_at = "2026-12-03T10:00:00Z";
  info.host = host;
  info.pid = pid;
  info.pid_token = "t" + std::to_string(pid);
  info.plan_hash = "plan";
  info.force = force;
  info.any_build = any_build;
  return info;
}

TrialRecord Result(int64_t run, const TrialKey& key, const std::string& status) {
  TrialRecord r = MakeTrial(
      run, 0,
      {"baseline", true, key.repeat_index, status, status == "ok" ? "" : "boom", status == "ok" ? 100.0 : 0.0, 10});
  r.config_hash = key.config_hash;
  r.env_hash = key.env_hash;
  r.platform_hash = key.platform_hash;
  return r;
}

class ClaimTest : public testing::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    path_ = PathOf("runx.db");
    store_.emplace(Store::Open(path_));
    store_->AddExperiment("e", "e.yaml", "name: e\n", "sha");
  }
  // Runs whose pid is in `alive_` are alive; every other one is dead.
  LivenessCheck Alive() {
    return [this](const std::string&, int64_t pid, const std::string&) { return alive_.count(pid) > 0; };
  }
  std::string path_;
  std::optional<Store> store_;
  std::set<int64_t> alive_;
};

TEST_F(ClaimTest, OneRunnerClaimsTheOtherWaitsAndThenReuses) {
  alive_ = {100, 200};
  const int64_t a = store_->BeginRun(Info("box", 100));
  const int64_t b = store_->BeginRun(Info("box", 200));
  const TrialKey key{"cfg", "env-a", "platform-x", 0};
  const Membership place{"baseline", true, 0, 0};
  EXPECT_EQ(store_->ClaimTrial(a, key, place, Alive(), "now").outcome, ClaimOutcome::kClaimed);
  const Claim busy = store_->ClaimTrial(b, key, place, Alive(), "now");
  EXPECT_EQ(busy.outcome, ClaimOutcome::kBusy);
  EXPECT_EQ(busy.holder_run, a);
  const int64_t trial = store_->RecordTrial(Result(a, key, "ok"));
  EXPECT_EQ(CountRows(path_, "claims"), 0);  // released with the record
  const Claim reused = store_->ClaimTrial(b, key, place, Alive(), "now");
  EXPECT_EQ(reused.outcome, ClaimOutcome::kReused);
  EXPECT_EQ(reused.trial_id, trial);
  // Both runs have the trial; the store has it once.
  EXPECT_EQ(CountRows(path_, "trials"), 1);
  EXPECT_EQ(CountRows(path_, "run_trials WHERE reused = 1 AND run_id = " + std::to_string(b)), 1);
  EXPECT_EQ(CountRows(path_, "trial_summary"), 2);
}

TEST_F(ClaimTest, AClaimOfADeadRunIsTakenOverAndItsRunInterrupted) {
  alive_ = {200};
  const int64_t dead = store_->BeginRun(Info("box", 100));
  const int64_t b = store_->BeginRun(Info("box", 200));
  const TrialKey key{"cfg", "env-a", "platform-x", 0};
  EXPECT_EQ(store_->ClaimTrial(dead, key, {"baseline", true, 0, 0}, Alive(), "t0").outcome, ClaimOutcome::kClaimed);
  EXPECT_EQ(store_->ClaimTrial(b, key, {"baseline", true, 0, 0}, Alive(), "t1").outcome, ClaimOutcome::kClaimed);
  EXPECT_EQ(Rows(path_, "SELECT status, finished_at FROM runs WHERE id = " + std::to_string(dead)),
            (std::vector<std::vector<Value>>{{std::string("interrupted"), std::string("t1")}}));
  EXPECT_EQ(Rows(path_, "SELECT run_id FROM claims"), (std::vector<std::vector<Value>>{{Value(b)}}));
}

TEST_F(ClaimTest, OnlyOkResultsOfTheSameEnvironmentAndRepeatAreReused) {
  alive_ = {100, 200, 300};
  const int64_t a = store_->BeginRun(Info("box", 100));
  const TrialKey r0{"cfg", "env-a", "platform-x", 0};
  const TrialKey r1{"cfg", "env-a", "platform-x", 1};
  store_->RecordTrial(Result(a, r0, "oom"));
  store_->RecordTrial(Result(a, r1, "ok"));
  store_->EndRun(a, RunStatus::kOk, "t");
  const int64_t b = store_->BeginRun(Info("box", 200));
  // Repeat 0 ended oom: it runs again (not repeat 1's result in its place).
  EXPECT_EQ(store_->ClaimTrial(b, r0, {"baseline", true, 0, 0}, Alive(), "t").outcome, ClaimOutcome::kClaimed);
  EXPECT_EQ(store_->ClaimTrial(b, r1, {"baseline", true, 1, 1}, Alive(), "t").outcome, ClaimOutcome::kReused);
  // Another build (environment) runs it again; a run that allows any build reuses it by platform.
  const TrialKey other_build{"cfg", "env-b", "platform-x", 1};
  EXPECT_EQ(store_->ClaimTrial(b, other_build, {"baseline", true, 1, 2}, Alive(), "t").outcome, ClaimOutcome::kClaimed);
  const int64_t c = store_->BeginRun(Info("box", 300, false, true));
  EXPECT_EQ(store_->ClaimTrial(c, other_build, {"baseline", true, 1, 1}, Alive(), "t").outcome, ClaimOutcome::kReused);
  const TrialKey other_platform{"cfg", "env-c", "platform-y", 1};
  EXPECT_EQ(store_->ClaimTrial(c, other_platform, {"baseline", true, 1, 2}, Alive(), "t").outcome,
            ClaimOutcome::kClaimed);
}

TEST_F(ClaimTest, AForcedRunReusesOnlyWhatWasRecordedAfterItStarted) {
  alive_ = {100, 200, 300};
  const int64_t a = store_->BeginRun(Info("box", 100));
  const TrialKey k0{"cfg", "env-a", "platform-x", 0};
  const TrialKey k1{"cfg", "env-a", "platform-x", 1};
  store_->RecordTrial(Result(a, k0, "ok"));
  store_->EndRun(a, RunStatus::kOk, "t");
  const int64_t forced = store_->BeginRun(Info("box", 200, true));
  const int64_t other = store_->BeginRun(Info("box", 300));
  EXPECT_EQ(store_->ClaimTrial(forced, k0, {"baseline", true, 0, 0}, Alive(), "t").outcome, ClaimOutcome::kClaimed);
  // A trial another runner finishes after the forced run began is fresh enough.
  EXPECT_EQ(store_->ClaimTrial(other, k1, {"baseline", true, 1, 1}, Alive(), "t").outcome, ClaimOutcome::kClaimed);
  store_->RecordTrial(Result(other, k1, "ok"));
  EXPECT_EQ(store_->ClaimTrial(forced, k1, {"baseline", true, 1, 1}, Alive(), "t").outcome, ClaimOutcome::kReused);
}

TEST_F(ClaimTest, AResumedRunKnowsWhatItHasAndRunsTheRest) {
  alive_ = {100};
  const int64_t a = store_->BeginRun(Info("box", 100, true));
  const TrialKey k0{"cfg", "env-a", "platform-x", 0};
  const TrialKey k1{"cfg", "env-a", "platform-x", 1};
  EXPECT_EQ(store_->ClaimTrial(a, k0, {"baseline", true, 0, 0}, Alive(), "t").outcome, ClaimOutcome::kClaimed);
  const int64_t done = store_->RecordTrial(Result(a, k0, "ok"));
  EXPECT_EQ(store_->ClaimTrial(a, k1, {"baseline", true, 1, 1}, Alive(), "t").outcome, ClaimOutcome::kClaimed);
  alive_.clear();  // killed while running repeat 1
  EXPECT_EQ(store_->MarkDeadRuns(Alive(), "t2"), 1);
  EXPECT_EQ(CountRows(path_, "claims"), 0);
  EXPECT_EQ(store_->FindInterruptedRun("plan", "1/2"), std::nullopt);  // another shard's
  const auto resumable = store_->ResumeRun("plan", "0/1", "box", 101, "t101");
  ASSERT_TRUE(resumable);
  EXPECT_EQ(resumable->id, a);
  EXPECT_TRUE(resumable->force);
  EXPECT_EQ(store_->ResumeRun("plan", "0/1", "box", 102, "t102"), std::nullopt);  // taken: never twice
  alive_ = {101};
  const Claim again = store_->ClaimTrial(a, k0, {"baseline", true, 0, 0}, Alive(), "t");
  EXPECT_EQ(again.outcome, ClaimOutcome::kDone);
  EXPECT_EQ(again.trial_id, done);
  EXPECT_EQ(store_->ClaimTrial(a, k1, {"baseline", true, 1, 1}, Alive(), "t").outcome, ClaimOutcome::kClaimed);
  EXPECT_EQ(store_->FindInterruptedRun("plan", "0/1"), std::nullopt);
}

TEST_F(ClaimTest, AStaleClaimOfAnotherHostIsTakenOverAndAnyBuildRunsShareClaimsByPlatform) {
  // Runs of host "far" cannot be checked: alive, unless their claim is older than the limit.
  const LivenessCheck far_alive = [](const std::string& host, int64_t, const std::string&) { return host == "far"; };
  const int64_t far = store_->BeginRun(Info("far", 100));
  const int64_t here = store_->BeginRun(Info("box", 200));
  const TrialKey key{"cfg", "env-a", "platform-x", 0};
  EXPECT_EQ(store_->ClaimTrial(far, key, {"baseline", true, 0, 0}, far_alive, "2026-12-03T10:00:00Z", 600).outcome,
            ClaimOutcome::kClaimed);
  EXPECT_EQ(store_->ClaimTrial(here, key, {"baseline", true, 0, 0}, far_alive, "2026-12-03T10:05:00Z", 600).outcome,
            ClaimOutcome::kBusy);
  EXPECT_EQ(store_->ClaimTrial(here, key, {"baseline", true, 0, 0}, far_alive, "2026-12-03T10:10:01Z", 600).outcome,
            ClaimOutcome::kClaimed);
  EXPECT_EQ(One(path_, "SELECT status FROM runs WHERE id = " + std::to_string(far)), "running");  // its host decides
  // A run that takes any build's result waits for a claim of another build on the same platform.
  const int64_t any = store_->BeginRun(Info("box", 300, false, true));
  const TrialKey other_build{"cfg", "env-b", "platform-x", 0};
  alive_ = {200, 300};
  EXPECT_EQ(
      store_->ClaimTrial(any, other_build, {"baseline", true, 0, 0}, Alive(), "2026-12-03T10:11:00Z", 600).outcome,
      ClaimOutcome::kBusy);
}

TEST_F(ClaimTest, MarkDeadRunsLeavesLiveAndFinishedRunsAlone) {
  alive_ = {200};
  const int64_t dead = store_->BeginRun(Info("box", 100));
  const int64_t live = store_->BeginRun(Info("box", 200));
  const int64_t ended = store_->BeginRun(Info("box", 300));
  store_->EndRun(ended, RunStatus::kOk, "t-ended");
  EXPECT_EQ(store_->MarkDeadRuns(Alive(), "t-now"), 1);
  EXPECT_EQ(Rows(path_, "SELECT id, status, finished_at FROM runs ORDER BY id"),
            (std::vector<std::vector<Value>>{{Value(dead), std::string("interrupted"), std::string("t-now")},
                                             {Value(live), std::string("running"), Value{}},
                                             {Value(ended), std::string("ok"), std::string("t-ended")}}));
}

TEST_F(ClaimTest, ReadRunTrialsGivesTheRunsOwnPlaces) {
  alive_ = {100, 200};
  const int64_t a = store_->BeginRun(Info("box", 100));
  const TrialKey k{"cfg", "env-a", "platform-x", 0};
  store_->RecordTrial(Result(a, k, "ok"));
  const int64_t b = store_->BeginRun(Info("box", 200));
  // In run b the same trial is a variant named otherwise, and not its baseline.
  EXPECT_EQ(store_->ClaimTrial(b, k, {"bf16", false, 0, 3}, Alive(), "t").outcome, ClaimOutcome::kReused);
  const auto trials = store_->ReadRunTrials(b);
  ASSERT_EQ(trials.size(), 1u);
  EXPECT_EQ(trials[0].label, "bf16");
  EXPECT_FALSE(trials[0].is_baseline);
  EXPECT_EQ(trials[0].measured_steps.size(), 5u);
  EXPECT_EQ(store_->ReadRunTrials(a)[0].label, "baseline");
  EXPECT_THROW(store_->ReadRunTrials(99), StoreError);
}

TEST_F(RunsTest, OpeningAFileThatIsNotAStoreChangesNothingInIt) {
  const std::string path = PathOf("other.db");
  {
    SQLite::Database db(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    db.exec("CREATE TABLE notes (x TEXT); INSERT INTO notes VALUES ('mine')");
  }
  const std::string before = testing::ReadFileBytes(path);
  EXPECT_THROW(Store::Open(path), StoreError);
  EXPECT_EQ(testing::ReadFileBytes(path), before);
  SQLite::Database db(path, SQLite::OPEN_READONLY);
  EXPECT_EQ(db.execAndGet("PRAGMA journal_mode").getString(), "delete");  // not switched to WAL
}

}  // namespace
}  // namespace runx::store

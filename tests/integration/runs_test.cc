// Results across runs and concurrent runners, through the real runx binary and a real store:
// runs with overrides keep their own baselines, an edited file resumes with a complete report, a
// new build re-runs (and --any-build reuses), a killed run is interrupted, shards and twin runs on
// one store run every trial exactly once, a held write lock loses nothing, the whole error is kept.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <thread>

#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>

#include "../remove_tree.h"
#include "run_util.h"

namespace {
namespace fs = std::filesystem;
using runx::testing::Runx;
using runx::testing::Spawn;
using runx::testing::Wait;
using runx::testing::WaitFor;

std::string Tiny(const std::string& name, const std::string& extra) {
  return "name: " + name +
         "\n"
         "device: cpu\n"
         "model: {name: cnn, channels: [4, 8]}\n"
         "data: {source: synthetic, shape: [3, 8, 8], num_classes: 5, batch_size: 8}\n"
         "train: {warmup_steps: 1, steps: 8, optimizer: {name: sgd, lr: 0.01}}\n" +
         extra;
}

class Runs : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("runx_runs_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    runx::testing::RemoveTree(dir_.string());
    fs::create_directories(dir_);
    db_ = (dir_ / "runx.db").string();
    setenv("RUNX_PLUGIN_PATH", RUNX_TEST_PLUGIN_GOOD_DIR, 1);
  }
  void TearDown() override { unsetenv("RUNX_PLUGIN_PATH"); }
  std::string Write(const std::string& text, const std::string& name = "exp.yaml") {
    const auto p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }
  /// The first column of the first row of `sql`; "" when the store is not there yet (or a runx
  /// is creating its tables right now: tests poll with this).
  std::string One(const std::string& sql) {
    if (!fs::exists(db_)) return "";
    try {
      SQLite::Database db(db_, SQLite::OPEN_READONLY);
      SQLite::Statement q(db, sql);
      return q.executeStep() && !q.getColumn(0).isNull() ? q.getColumn(0).getString() : "";
    } catch (const SQLite::Exception& e) {
      return std::string("error: ") + e.what();
    }
  }
  int64_t Count(const std::string& sql) {
    const std::string v = One(sql);
    return v.empty() || v.rfind("error: ", 0) == 0 ? 0 : std::stoll(v);
  }
  fs::path dir_;
  std::string db_;
};

TEST_F(Runs, ARunWithOverridesHasItsOwnBaselineAndSpeedups) {
  const auto file = Write(Tiny("single", ""));
  ASSERT_EQ(Runx(file + " --db " + db_ + " -q").status, 0);
  const auto bf16 = Runx(file + " --db " + db_ + " -q --set precision=bf16");
  ASSERT_EQ(bf16.status, 0) << bf16.out;
  // Two runs, each with one trial that is its own baseline at speedup 1: no averaging across runs.
  EXPECT_EQ(Count("SELECT count(*) FROM runs"), 2);
  EXPECT_EQ(One("SELECT group_concat(label || ':' || is_baseline || ':' || printf('%.3f', speedup), ' ') "
                "FROM (SELECT * FROM speedups ORDER BY run_id)"),
            "baseline:1:1.000 bf16:1:1.000");
  EXPECT_EQ(One("SELECT overrides FROM runs WHERE id = 2"), R"(["precision=bf16"])");
  // The config identity is the config's alone, and the stored config holds only what the trial
  // uses: no Fashion-MNIST path for synthetic data, no mlp widths for a cnn, no experiment name.
  EXPECT_EQ(Count("SELECT count(DISTINCT config_hash) FROM trials"), 2);
  const std::string config = One("SELECT config_json FROM trials WHERE id = 1");
  for (const char* absent : {"fashion-mnist", "hidden", "\"name\":\"single\"", "\"results\"", "\"infer\""})
    EXPECT_EQ(config.find(absent), std::string::npos) << absent << " in " << config;
  EXPECT_EQ(One("SELECT config_hash = (SELECT config_hash FROM trials WHERE id = 1) FROM trials WHERE id = 2"), "0");
  EXPECT_EQ(One("SELECT env_hash = (SELECT env_hash FROM trials WHERE id = 1) FROM trials WHERE id = 2"), "1");
}

TEST_F(Runs, AnEditedFileReusesItsResultsWithACompleteReport) {
  const std::string text = Tiny("edited", "repeats: 2\nsweep: {mode: ablation, axes: {optimizations: [test_good]}}\n");
  const auto file = Write(text);
  ASSERT_EQ(Runx(file + " --db " + db_ + " -q").status, 0);
  Write("# a comment changes nothing the trials run\n" + text);
  const auto again = Runx(file + " --db " + db_);
  ASSERT_EQ(again.status, 0) << again.out;
  EXPECT_NE(again.out.find("test_good  2/2"), std::string::npos) << again.out;
  EXPECT_NE(again.out.find("4 trials reused"), std::string::npos) << again.out;
  EXPECT_EQ(Count("SELECT count(*) FROM trials"), 4);
  EXPECT_EQ(Count("SELECT count(*) FROM experiments"), 2);
  EXPECT_EQ(Count("SELECT trials FROM run_summary WHERE run_id = 2"), 4);
  EXPECT_EQ(Count("SELECT reused_trials FROM run_summary WHERE run_id = 2"), 4);
  EXPECT_EQ(Count("SELECT count(*) FROM variant_stats WHERE run_id = 2 AND ok_trials = 2"), 2);
  EXPECT_EQ(Count("SELECT count(*) FROM speedups WHERE run_id = 2 AND speedup IS NOT NULL"), 4);
}

TEST_F(Runs, ANewBuildRunsAgainUnlessAskedToReuse) {
  const auto file = Write(Tiny("builds", ""));
  ASSERT_EQ(Runx(file + " --db " + db_ + " -q").status, 0);
  // Another build of runx: the same programs, runx with one more byte (its content hash differs),
  // and its worker beside it.
  fs::create_directories(dir_ / "other-build");
  const fs::path other = dir_ / "other-build" / "runx";
  fs::copy_file(RUNX_BIN, other);
  std::ofstream(other, std::ios::app | std::ios::binary) << '\n';
  fs::permissions(other, fs::perms::owner_all);
  fs::copy_file(std::string(RUNX_BIN) + "-worker", dir_ / "other-build" / "runx-worker");
  const auto run = [&](const std::string& args) {
    return Wait(Spawn(file + " --db " + db_ + " -q" + args, other.string()));
  };
  ASSERT_EQ(run(""), 0);
  EXPECT_EQ(Count("SELECT count(*) FROM trials"), 2);  // ran again
  EXPECT_EQ(Count("SELECT count(DISTINCT runx_build) FROM runs"), 2);
  EXPECT_EQ(Count("SELECT count(DISTINCT env_hash) FROM trials"), 2);
  EXPECT_EQ(Count("SELECT count(DISTINCT platform_hash) FROM trials"), 1);
  ASSERT_EQ(run(""), 0);
  EXPECT_EQ(Count("SELECT count(*) FROM trials"), 2);  // same build again: reused
  ASSERT_EQ(Runx(file + " --db " + db_ + " -q --any-build").status, 0);
  EXPECT_EQ(Count("SELECT count(*) FROM trials"), 2);
  EXPECT_EQ(Count("SELECT reused_trials FROM run_summary WHERE run_id = 4"), 1);
  // --force runs it whatever the store holds.
  ASSERT_EQ(Runx(file + " --db " + db_ + " -q --force").status, 0);
  EXPECT_EQ(Count("SELECT count(*) FROM trials"), 3);
}

TEST_F(Runs, AKilledRunIsInterruptedAndAKilledForcedRunCanBeResumed) {
  const auto file = Write(Tiny("killed", "repeats: 6\n"));
  ASSERT_EQ(Runx(file + " --db " + db_ + " -q").status, 0);  // 6 ok results to be ignored by --force
  const pid_t pid = Spawn(file + " --db " + db_ + " --force");
  ASSERT_TRUE(WaitFor([&] { return Count("SELECT count(*) FROM trials") >= 8; }, 120));
  kill(pid, SIGKILL);
  Wait(pid);
  const int64_t forced_done = Count("SELECT count(*) FROM trials WHERE run_id = 2");
  ASSERT_LT(forced_done, 6) << "the run finished before it could be killed";
  EXPECT_EQ(One("SELECT status FROM runs WHERE id = 2"), "running");  // nobody has looked yet
  // The next runx to open the store sees the dead process: the run is interrupted.
  ASSERT_EQ(Runx("plan " + file).status, 0);
  const auto resumed = Runx(file + " --db " + db_ + " --resume -q");
  ASSERT_EQ(resumed.status, 0) << resumed.out;
  EXPECT_EQ(Count("SELECT count(*) FROM runs"), 2);  // continued in place
  EXPECT_EQ(One("SELECT status FROM runs WHERE id = 2"), "ok");
  // Run 2 has 6 trials, all run by itself (none of run 1's results reused), each repeat once.
  EXPECT_EQ(Count("SELECT count(*) FROM run_trials WHERE run_id = 2"), 6);
  EXPECT_EQ(Count("SELECT count(*) FROM run_trials rt JOIN trials t ON t.id = rt.trial_id "
                  "WHERE rt.run_id = 2 AND t.run_id = 2"),
            6);
  EXPECT_EQ(Count("SELECT count(DISTINCT repeat_index) FROM run_trials WHERE run_id = 2"), 6);
}

TEST_F(Runs, TwoShardsAtOnceOnOneStoreRunEveryTrialOnce) {
  const auto file = Write(Tiny("shards", "repeats: 3\nsweep: {mode: grid, axes: {optimizations: [test_good]}}\n"));
  const pid_t a = Spawn(file + " --db " + db_ + " --shard 0/2");
  const pid_t b = Spawn(file + " --db " + db_ + " --shard 1/2");
  EXPECT_EQ(Wait(a), 0);
  EXPECT_EQ(Wait(b), 0);
  EXPECT_EQ(Count("SELECT count(*) FROM trials WHERE status = 'ok'"), 6);
  EXPECT_EQ(Count("SELECT count(*) FROM (SELECT DISTINCT config_hash, repeat_index FROM trials)"), 6);
  EXPECT_EQ(Count("SELECT count(DISTINCT plan_hash) FROM runs"), 1);  // one plan, two runs
  // Without --shard, a third run gathers all six into one complete report.
  const auto all = Runx(file + " --db " + db_);
  ASSERT_EQ(all.status, 0);
  EXPECT_NE(all.out.find("6 trials reused"), std::string::npos) << all.out;
}

TEST_F(Runs, TheSameSweepStartedTwiceAtOnceRunsEachTrialOnce) {
  const auto file = Write(Tiny("twins", "repeats: 4\nsweep: {mode: grid, axes: {optimizations: [test_good]}}\n"));
  const pid_t a = Spawn(file + " --db " + db_);
  const pid_t b = Spawn(file + " --db " + db_);
  EXPECT_EQ(Wait(a), 0);
  EXPECT_EQ(Wait(b), 0);
  EXPECT_EQ(Count("SELECT count(*) FROM trials"), 8);
  EXPECT_EQ(Count("SELECT count(*) FROM (SELECT DISTINCT config_hash, repeat_index FROM trials WHERE status = 'ok')"),
            8);
  // Both runs are complete: what one ran, the other reused.
  EXPECT_EQ(Count("SELECT count(*) FROM run_summary WHERE trials = 8 AND ok_trials = 8"), 2);
  EXPECT_EQ(Count("SELECT count(*) FROM claims"), 0);
}

TEST_F(Runs, AWriteLockHeldLongerThanBeforeLosesNoTrial) {
  const auto file = Write(Tiny("locked", "repeats: 3\n"));
  const pid_t pid = Spawn(file + " --db " + db_);
  ASSERT_TRUE(WaitFor([&] { return Count("SELECT count(*) FROM trials") >= 1; }, 120));
  {
    SQLite::Database other(db_, SQLite::OPEN_READWRITE);
    other.exec("BEGIN IMMEDIATE");  // another program holds the write lock for 7 s
    std::this_thread::sleep_for(std::chrono::seconds(7));
    other.exec("COMMIT");
  }
  EXPECT_EQ(Wait(pid), 0);
  EXPECT_EQ(Count("SELECT count(*) FROM trials WHERE status = 'ok'"), 3);
  EXPECT_EQ(One("SELECT status FROM runs"), "ok");
}

TEST_F(Runs, IncompatibleIsRecordedOncePerRunAndTheWholeErrorIsKept) {
  const auto file = Write(Tiny("errors",
                               "repeats: 2\n"
                               "optimizations: {test_crash: {mode: throw, at_step: 1}}\n"
                               "sweep: {mode: ablation, axes: {optimizations: [cuda_graphs]}}\n"));
  ASSERT_EQ(Runx(file + " --db " + db_ + " -q").status, 0);
  ASSERT_EQ(Runx(file + " --db " + db_ + " -q").status, 0);
  // cuda_graphs is incompatible here (no CUDA, or the crash plugin's throwing step): one row per
  // planned trial and run, never again on a resume of the same run.
  EXPECT_EQ(Count("SELECT count(*) FROM trial_summary WHERE status = 'incompatible' AND run_id = 1"), 2);
  EXPECT_EQ(Count("SELECT count(*) FROM trial_summary WHERE status = 'incompatible' AND run_id = 2"), 2);
  EXPECT_EQ(Count("SELECT trials FROM run_summary WHERE run_id = 2"), 4);
  // The failure's first line is the error; the reason after it and the trial's stderr are kept.
  EXPECT_EQ(One("SELECT error FROM trials WHERE status = 'failed' LIMIT 1"),
            "technique 'test_crash' failed in on_step_end: The following operation failed in the test interpreter.");
  const std::string detail = One("SELECT error_detail FROM trials WHERE status = 'failed' LIMIT 1");
  EXPECT_NE(detail.find("the reason: tensor sizes 3 and 4 do not match"), std::string::npos) << detail;
  EXPECT_NE(detail.find("a line the trial printed on stderr before failing"), std::string::npos) << detail;
  const auto shown = Runx("query --db " + db_ +
                          " --format csv \"SELECT error_detail FROM trial_summary WHERE status = 'failed' LIMIT 1\"");
  EXPECT_NE(shown.out.find("the reason: tensor sizes"), std::string::npos) << shown.out;
}

TEST_F(Runs, HangupAndTerminateStopCleanlyLikeCtrlC) {
  const auto file = Write(Tiny("signals", "repeats: 40\n"));
  int64_t run = 0;
  for (const int sig : {SIGHUP, SIGTERM}) {
    ++run;
    const pid_t pid = Spawn(file + " --db " + db_ + " --force");
    ASSERT_TRUE(
        WaitFor([&] { return Count("SELECT count(*) FROM trials WHERE run_id = " + std::to_string(run)) >= 1; }, 120));
    kill(pid, sig);
    EXPECT_EQ(Wait(pid), 130) << "signal " << sig;
    EXPECT_EQ(One("SELECT status FROM runs WHERE id = " + std::to_string(run)), "interrupted") << "signal " << sig;
    EXPECT_EQ(Count("SELECT count(*) FROM claims"), 0);
    EXPECT_EQ(Count("SELECT count(*) FROM trials WHERE status != 'ok'"), 0);  // the ended trial is no result
  }
}

TEST_F(Runs, TrialFoldersOfAKilledRunxAreRemovedByTheNext) {
  // A folder left by a runx that no longer exists (pid 1 is never a runx; pid 4194303 is unused).
  int64_t dead = 4194303;
  while (kill(static_cast<pid_t>(dead), 0) == 0) --dead;
  const fs::path stale = fs::temp_directory_path() / ("runx-trial-" + std::to_string(dead) + "-abcdef");
  fs::create_directories(stale);
  std::ofstream(stale / "stderr.txt") << "x";
  std::ofstream(stale / "in-use.lock") << "";  // its runx held this lock; nobody holds it now
  // An older runx's folder has no lock: judged by its pid, once a minute old.
  const fs::path old = fs::temp_directory_path() / ("runx-trial-" + std::to_string(dead) + "-oldrun");
  const fs::path young = fs::temp_directory_path() / ("runx-trial-" + std::to_string(dead) + "-young1");
  for (const auto& d : {old, young}) fs::create_directories(d);
  fs::last_write_time(old, fs::file_time_type::clock::now() - std::chrono::minutes(5));
  const auto file = Write(Tiny("tidy", ""));
  ASSERT_EQ(Runx(file + " --db " + db_ + " -q").status, 0);
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_FALSE(fs::exists(old));
  EXPECT_TRUE(fs::exists(young)) << "a folder without a lock, made less than a minute ago, may be being made";
  fs::remove(young);
}

}  // namespace

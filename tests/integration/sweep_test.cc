// Sweeps through the real runx binary: process isolation, resume after SIGKILL and Ctrl-C, the
// report's confidence intervals against the stored steps.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../remove_tree.h"
#include "report/report.h"
#include "run_util.h"

namespace {
namespace fs = std::filesystem;
using runx::testing::Runx;
using runx::testing::Spawn;
using runx::testing::WaitFor;

std::string TinySweep(const std::string& sweep, const std::string& extra = "") {
  return "name: tiny-sweep\n"
         "device: cpu\n"
         "model: {name: cnn, channels: [4, 8]}\n"
         "data: {source: synthetic, shape: [3, 8, 8], num_classes: 5, batch_size: 8}\n"
         "train: {warmup_steps: 2, steps: 12, optimizer: {name: sgd, lr: 0.01}}\n" +
         extra + sweep;
}

class Sweep : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("runx_sweep_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    runx::testing::RemoveTree(dir_.string());
    fs::create_directories(dir_);
    db_ = (dir_ / "runx.db").string();
    setenv("RUNX_PLUGIN_PATH", RUNX_TEST_PLUGIN_GOOD_DIR, 1);
  }
  void TearDown() override { unsetenv("RUNX_PLUGIN_PATH"); }
  std::string Write(const std::string& text) {
    const auto p = dir_ / "exp.yaml";
    std::ofstream(p) << text;
    return p.string();
  }
  std::map<std::string, std::string> Statuses() {
    SQLite::Database db(db_);
    SQLite::Statement q(db, "SELECT label, status, coalesce(error, '') FROM trials ORDER BY id");
    std::map<std::string, std::string> out;
    while (q.executeStep()) {
      out[q.getColumn(0).getString()] = q.getColumn(1).getString();
      errors_[q.getColumn(0).getString()] = q.getColumn(2).getString();
    }
    return out;
  }
  fs::path dir_;
  std::string db_;
  std::map<std::string, std::string> errors_;
};

struct Case {
  const char* mode;
  const char* status;
  const char* error_part;
};

TEST_F(Sweep, EveryKindOfFailureIsARecordedTrialAndTheSweepGoesOn) {
  const Case cases[] = {{"segfault", "crashed", "crashed: Segmentation fault (signal 11) after"},
                        {"abort", "crashed", "crashed: Aborted (signal 6) after"},
                        {"hang", "timeout", "timed out after 8 s after"},
                        {"oom", "oom", "out of host memory"},
                        {"nan", "nan", "loss became non-finite"}};
  for (const auto& c : cases) {
    const auto file =
        Write(TinySweep("sweep: {mode: ablation, axes: {optimizations: [test_crash]}}\n",
                        // Only the hang waits for the timeout; the others must not race it on a busy machine.
                        std::string(c.mode == std::string("hang") ? "trial_timeout_s: 8\n" : "") +
                            "optimizations: {test_crash: {mode: " + c.mode + ", at_step: 3}}\n"));
    auto r = Runx(file + " --db " + db_ + " --force");
    EXPECT_EQ(r.status, 0) << c.mode << "\n" << r.out;
    auto st = Statuses();
    EXPECT_EQ(st["baseline"], "ok") << c.mode << "\n" << r.out;
    EXPECT_EQ(st["test_crash"], c.status) << c.mode << "\n" << r.out;
    EXPECT_NE(errors_["test_crash"].find(c.error_part), std::string::npos) << c.mode << ": " << errors_["test_crash"];
  }
  const auto file = Write(TinySweep("sweep: {mode: ablation, axes: {optimizations: [test_crash]}}\n",
                                    "optimizations: {test_crash: {mode: abort}}\n"));
  EXPECT_EQ(Runx(file + " --db " + db_ + " --force --strict -q").status, 1);
  SQLite::Database db(db_);
  // How far a crashed trial got, and its memory, are kept.
  EXPECT_GT(db.execAndGet("SELECT value FROM metrics m JOIN trials t ON t.id = m.trial_id "
                          "WHERE t.status = 'crashed' AND m.name = 'peak_mem_bytes' LIMIT 1")
                .getDouble(),
            0);
  EXPECT_EQ(db.execAndGet("SELECT value FROM metrics m JOIN trials t ON t.id = m.trial_id "
                          "WHERE t.status = 'crashed' AND m.name = 'steps_done' LIMIT 1")
                .getDouble(),
            3);  // died in step 3's hook
  EXPECT_EQ(db.execAndGet("PRAGMA integrity_check").getString(), "ok");
}

TEST_F(Sweep, IncompatibleCombinationIsRecordedWithoutAProcess) {
  const auto file = Write(
      "name: flat\ndevice: cpu\nmodel: {name: mlp, hidden: [8]}\n"
      "data: {source: synthetic, shape: [12], num_classes: 3, batch_size: 4}\n"
      "train: {warmup_steps: 1, steps: 3}\n"
      "sweep: {mode: ablation, axes: {optimizations: [channels_last]}}\n");
  auto r = Runx(file + " --db " + db_ + " --json");
  ASSERT_EQ(r.status, 0) << r.out;
  auto st = Statuses();
  EXPECT_EQ(st["baseline"], "ok");
  EXPECT_EQ(st["channels_last"], "incompatible");
  EXPECT_EQ(
      errors_["channels_last"],
      "channels_last: channels_last needs image samples [channels, height, width]; data.shape has 1 dimension(s)");
  EXPECT_NE(r.out.find("\"event\":\"sweep_end\""), std::string::npos) << r.out;
}

int64_t Count(const std::string& db, const std::string& sql) {
  if (!fs::exists(db)) return 0;
  try {
    SQLite::Database d(db, SQLite::OPEN_READONLY);
    return d.execAndGet(sql).getInt64();
  } catch (const std::exception&) {
    return 0;
  }
}

TEST_F(Sweep, KillNineMidSweepThenRerunCompletesOnlyWhatIsMissing) {
  const auto file = Write(TinySweep("sweep: {mode: ablation, axes: {optimizations: [test_good]}}\n", "repeats: 4\n"));
  const pid_t pid = Spawn(file + " --db " + db_);
  ASSERT_TRUE(WaitFor([&] { return Count(db_, "SELECT count(*) FROM trials") >= 3; }, 120));
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  const int64_t before = Count(db_, "SELECT count(*) FROM trials");
  ASSERT_LT(before, 8) << "the sweep finished before it could be killed";
  {
    SQLite::Database db(db_);
    EXPECT_EQ(db.execAndGet("PRAGMA integrity_check").getString(), "ok");
  }
  auto r = Runx(file + " --db " + db_);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("reused"), std::string::npos) << r.out;
  SQLite::Database db(db_);
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM trials").getInt(), 8);  // nothing ran twice
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM trials WHERE status = 'ok'").getInt(), 8);
  EXPECT_EQ(db.execAndGet("SELECT count(DISTINCT label || '/' || repeat_index) FROM trials").getInt(), 8);
  // The killed run is interrupted; the new run has all 8 trials, the killed run's among them.
  EXPECT_EQ(db.execAndGet("SELECT group_concat(status) FROM (SELECT status FROM runs ORDER BY id)").getString(),
            "interrupted,ok");
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM run_trials WHERE run_id = 2").getInt(), 8);
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM run_trials WHERE run_id = 2 AND reused = 1").getInt(), before);
  EXPECT_EQ(db.execAndGet("PRAGMA integrity_check").getString(), "ok");
  // Its child's temporary folder is gone too.
  const std::string prefix = "runx-trial-" + std::to_string(pid) + "-";
  for (const auto& e : fs::directory_iterator(fs::temp_directory_path()))
    EXPECT_NE(e.path().filename().string().rfind(prefix, 0), 0u) << e.path();
  // A third run has nothing left to do.
  auto again = Runx(file + " --db " + db_ + " -q");
  EXPECT_EQ(again.status, 0);
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM trials").getInt(), 8);
}

TEST_F(Sweep, CtrlCStopsCleanlyAndKeepsWhatFinished) {
  const auto file = Write(TinySweep("sweep: {mode: ablation, axes: {optimizations: [test_good]}}\n", "repeats: 4\n"));
  const pid_t pid = Spawn(file + " --db " + db_);
  ASSERT_TRUE(WaitFor([&] { return Count(db_, "SELECT count(*) FROM trials") >= 2; }, 120));
  kill(pid, SIGINT);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 130);
  EXPECT_EQ(Count(db_, "SELECT count(*) FROM runs WHERE status = 'interrupted'"), 1);
  const int64_t kept = Count(db_, "SELECT count(*) FROM trials WHERE status = 'ok'");
  EXPECT_GE(kept, 2);
  EXPECT_EQ(Count(db_, "SELECT count(*) FROM trials WHERE status != 'ok'"), 0);  // the ended trial is not a result
}

TEST_F(Sweep, AblationReportsSpeedupsWithIntervalsFromTheStoredSteps) {
  const auto file =
      Write(TinySweep("sweep: {mode: ablation, axes: {optimizations: [channels_last, amp]}}\n", "repeats: 2\n"));
  auto r = Runx(file + " --db " + db_);
  ASSERT_EQ(r.status, 0) << r.out;
  for (const char* label : {"baseline", "channels_last", "amp", "channels_last+amp"})
    EXPECT_NE(r.out.find(label), std::string::npos) << label << "\n" << r.out;
  SQLite::Database db(db_);
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM trials WHERE status = 'ok'").getInt(), 8);
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM speedups").getInt(), 8);
  const int64_t sweep = db.execAndGet("SELECT max(id) FROM runs").getInt64();
  // Recompute each variant's interval from the stored steps: one run, two processes a variant, so
  // the spread of the processes of the baseline and the variant about their means (df 2), and a
  // t interval on the log of the pooled throughput ratio.
  SQLite::Statement vs(db,
                       "SELECT label, speedup, speedup_ci_low, speedup_ci_high, speedup_se, speedup_df FROM "
                       "variant_stats WHERE run_id = ? AND is_baseline = 0");
  vs.bind(1, sweep);
  int checked = 0;
  while (vs.executeStep()) {
    const std::string label = vs.getColumn(0).getString();
    const auto steps = [&](const std::string& l) {
      std::vector<std::vector<runx::report::StepSample>> reps;
      SQLite::Statement t(
          db, "SELECT id FROM trials WHERE run_id = ? AND label = ? AND status = 'ok' ORDER BY repeat_index");
      t.bind(1, sweep);
      t.bind(2, l);
      while (t.executeStep()) {
        SQLite::Statement s(
            db, "SELECT wall_ms, samples FROM steps WHERE trial_id = ? AND phase = 'measure' ORDER BY step");
        s.bind(1, t.getColumn(0).getInt64());
        reps.emplace_back();
        while (s.executeStep()) reps.back().push_back({s.getColumn(0).getDouble(), s.getColumn(1).getDouble()});
      }
      return reps;
    };
    const auto base = steps("baseline"), variant = steps(label);
    ASSERT_EQ(base.size(), 2u);
    ASSERT_EQ(variant.size(), 2u);
    const auto rates = [](const std::vector<std::vector<runx::report::StepSample>>& reps) {
      std::vector<double> out;
      for (const auto& r : reps) out.push_back(runx::report::Throughput({r}));
      return out;
    };
    const double estimate = runx::report::Throughput(variant) / runx::report::Throughput(base);
    const runx::report::Spread within = runx::report::PoolSpread({rates(base), rates(variant)});
    const double se = within.sd * std::sqrt(1.0 / 2 + 1.0 / 2);
    EXPECT_DOUBLE_EQ(estimate, vs.getColumn(1).getDouble()) << label;
    EXPECT_NEAR(se, vs.getColumn(4).getDouble(), 1e-12) << label;
    EXPECT_EQ(vs.getColumn(5).getInt(), 2) << label;
    const auto ci = runx::report::IntervalOfRatio(estimate, {se, 2});
    ASSERT_TRUE(ci);
    EXPECT_NEAR(ci->low, vs.getColumn(2).getDouble(), 1e-12 * ci->low) << label;
    EXPECT_NEAR(ci->high, vs.getColumn(3).getDouble(), 1e-12 * ci->high) << label;
    ++checked;
  }
  EXPECT_EQ(checked, 3);
}

TEST_F(Sweep, PlanShowsTheMatrixAndShardsPartitionIt) {
  const auto file =
      Write(TinySweep("sweep: {mode: grid, axes: {optimizations: [channels_last, amp]}}\n", "repeats: 3\n"));
  auto p = Runx("plan " + file);
  ASSERT_EQ(p.status, 0) << p.out;
  EXPECT_NE(p.out.find("channels_last+amp"), std::string::npos) << p.out;
  auto a = Runx(file + " --db " + db_ + " --shard 0/2 -q");
  auto b = Runx(file + " --db " + dir_.string() + "/other.db --shard 1/2 -q");
  ASSERT_EQ(a.status, 0) << a.out;
  ASSERT_EQ(b.status, 0) << b.out;
  EXPECT_EQ(
      Count(db_, "SELECT count(*) FROM trials") + Count(dir_.string() + "/other.db", "SELECT count(*) FROM trials"),
      12);
  EXPECT_EQ(Count(db_, "SELECT count(*) FROM trials"), 6);
}

}  // namespace

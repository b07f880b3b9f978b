// data_parallel through the real runx binary and store: ranks over Gloo on the CPU train like one
// process at the global batch, and a rank that dies or hangs is a recorded result with no process
// left behind.
#include <dirent.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>

#include "store_fixture.h"

namespace runx::testing {
namespace {

/// A deterministic model (an MLP: no dropout, no batch norm, whose statistics would be per rank)
/// trained with SGD and momentum; `batch` samples per process.
std::string Experiment(int batch, const std::string& optimizations, const std::string& extra = "") {
  return "name: dp\ndevice: cpu\nseed: 7\nmodel: {name: mlp, hidden: [16, 16]}\n"
         "data: {source: synthetic, shape: [12], num_classes: 3, batch_size: " +
         std::to_string(batch) +
         "}\ntrain: {warmup_steps: 2, steps: 10, eval: false, optimizer: {name: sgd, lr: 0.2, momentum: 0.9}}\n" +
         "optimizations: " + optimizations + "\n" + extra;
}

class DataParallel : public StoreFixture {
 protected:
  DataParallel() : StoreFixture("runx_dp") {}
  void SetUp() override {
    StoreFixture::SetUp();
    setenv("RUNX_PLUGIN_PATH", RUNX_TEST_PLUGIN_GOOD_DIR, 1);
    // The trials' temporary folders (and the ranks' rendezvous files) under this test's folder,
    // so that a leftover rank process can be told by its command line.
    setenv("TMPDIR", dir_.c_str(), 1);
  }
  void TearDown() override {
    unsetenv("RUNX_PLUGIN_PATH");
    unsetenv("TMPDIR");
    StoreFixture::TearDown();
  }
  std::vector<double> Losses(int64_t trial) {
    SQLite::Database db(db_);
    SQLite::Statement q(db, "SELECT loss FROM steps WHERE trial_id = ? ORDER BY phase = 'measure', step");
    q.bind(1, trial);
    std::vector<double> out;
    while (q.executeStep()) out.push_back(q.getColumn(0).getDouble());
    return out;
  }
  /// Processes whose command line mentions this test's folder (rank processes of its trials).
  std::vector<std::string> LeftoverProcesses() {
    std::vector<std::string> found;
    DIR* proc = opendir("/proc");
    for (dirent* e; proc && (e = readdir(proc));) {
      if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
      std::ifstream f(std::string("/proc/") + e->d_name + "/cmdline");
      std::string cmd((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
      for (char& c : cmd)
        if (c == '\0') c = ' ';
      if (cmd.find(" trial ") != std::string::npos && cmd.find(dir_.string()) != std::string::npos)
        found.push_back(std::string(e->d_name) + ": " + cmd);
    }
    if (proc) closedir(proc);
    return found;
  }
};

// The acceptance test: 2 ranks at batch 4 each == 1 process at batch 8, step by step. The ranks'
// losses are averaged (each rank's is the mean over its 4 samples) and their gradients averaged
// over the ranks, which is the gradient of the mean over all 8; only float rounding differs (the
// order of the sums), hence the tolerance: 1e-5 absolute on losses of about 1.1, after 12 steps.
TEST_F(DataParallel, TwoGlooRanksTrainLikeOneProcessAtTwiceTheBatch) {
  const int64_t one = Run(Experiment(8, "{}"), "one");
  ASSERT_EQ(Status(one), "ok") << last_output_;
  const int64_t two = Run(Experiment(4, "{data_parallel: {world_size: 2, backend: gloo}}"), "two");
  ASSERT_EQ(Status(two), "ok") << Error(two) << "\n" << last_output_;
  const auto a = Losses(one), b = Losses(two);
  ASSERT_EQ(a.size(), 12u);
  ASSERT_EQ(b.size(), a.size());
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_NEAR(a[i], b[i], 1e-5) << "step " << i;
    worst = std::max(worst, std::abs(a[i] - b[i]));
  }
  EXPECT_LT(a.back(), a.front() - 0.05) << "the model must train for the comparison to mean something";
  std::cout << "losses, 1 process at batch 8 vs 2 ranks at batch 4: first " << a.front() << " vs " << b.front()
            << ", last " << a.back() << " vs " << b.back() << ", largest difference " << worst << "\n";
  // The store sees one trial: the global batch per step, every rank's samples in the throughput.
  EXPECT_EQ(Get("SELECT DISTINCT samples FROM steps WHERE trial_id = ?", two), "8");
  EXPECT_EQ(Metric(two, "batch_size"), 4);
  EXPECT_EQ(Metric(two, "global_batch_size"), 8);
  EXPECT_GT(Metric(two, "samples_per_s"), Metric(two, "rank_samples_per_s"));
  EXPECT_GE(Metric(two, "data_parallel_buckets"), 1);
  EXPECT_EQ(Env(two, "data_parallel.world_size"), "2");
  EXPECT_EQ(Env(two, "data_parallel.backend"), "gloo");
  EXPECT_EQ(Env(two, "data_parallel.rank"), "0");                         // rank 0 recorded
  EXPECT_EQ(Get("SELECT count(*) FROM trials WHERE id >= ?", two), "1");  // the other rank recorded nothing
  EXPECT_TRUE(LeftoverProcesses().empty());
}

// Small buckets (several all-reduces, started during the backward pass) train the same.
TEST_F(DataParallel, ManyBucketsTrainLikeOne) {
  const int64_t one =
      Run(Experiment(8, "{data_parallel: {world_size: 2, bucket_mb: 0.0001, first_bucket_mb: 0.0001}}", ""), "many");
  ASSERT_EQ(Status(one), "ok") << Error(one) << "\n" << last_output_;
  // The 6 tensors of 12-16-16-3 in reverse order: each layer's bias (< 100 bytes) shares a bucket
  // with its weight (> 100 bytes), which closes it.
  EXPECT_EQ(Metric(one, "data_parallel_buckets"), 3);
  EXPECT_GE(Metric(one, "data_parallel_overlapped_buckets"), 1);
  const int64_t plain = Run(Experiment(16, "{}"), "plain");
  const auto a = Losses(plain), b = Losses(one);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-5) << "step " << i;
}

// Rank 1 aborts in step 3: the trial is `crashed` naming the rank, the sweep goes on to the next
// trial, and no rank process is left.
TEST_F(DataParallel, ARankThatCrashesIsACrashedTrialAndLeavesNoProcess) {
  const int64_t last =
      Run(Experiment(4, "{data_parallel: {world_size: 2}, test_crash: {mode: abort, at_step: 3, rank: 1}}",
                     "sweep: {mode: ablation, axes: {optimizations: [test_crash]}}\n"),
          "crash");
  EXPECT_EQ(last_status_, 0) << last_output_;
  SQLite::Database db(db_);
  EXPECT_EQ(db.execAndGet("SELECT group_concat(label || '=' || status, ' ') FROM trials").getString(),
            "baseline=ok test_crash=crashed");
  const std::string error = Error(last);
  EXPECT_EQ(error.rfind("rank 1 of 2 crashed: Aborted (signal 6) (rank 0 was after ", 0), 0u) << error;
  EXPECT_TRUE(LeftoverProcesses().empty());
}

// Rank 1's trial fails (an exception in a hook): its record, naming the rank, is the trial's, and
// rank 0, which would wait for it in the next all-reduce, is ended at once.
TEST_F(DataParallel, ARankThatFailsGivesItsRecordNamingTheRank) {
  const int64_t t =
      Run(Experiment(4, "{data_parallel: {world_size: 2}, test_crash: {mode: throw, at_step: 2, rank: 1}}",
                     "trial_timeout_s: 60\n"),
          "throw");
  EXPECT_EQ(Status(t), "failed") << last_output_;
  EXPECT_EQ(Error(t),
            "rank 1 of 2: technique 'test_crash' failed in on_step_end: The following operation failed in "
            "the test interpreter.");
  EXPECT_NE(
      Get("SELECT error_detail FROM trials WHERE id = ?", t).find("the reason: tensor sizes 3 and 4 do not match"),
      std::string::npos);
  EXPECT_TRUE(LeftoverProcesses().empty());
}

// Rank 1 hangs: rank 0 waits for it in the all-reduce; at trial_timeout_s the whole process group
// is killed and the trial is `timeout`.
TEST_F(DataParallel, ARankThatHangsIsATimeoutAndLeavesNoProcess) {
  const int64_t t = Run(Experiment(4, "{data_parallel: {world_size: 2}, test_crash: {mode: hang, at_step: 2, rank: 1}}",
                                   "trial_timeout_s: 6\n"),
                        "hang");
  EXPECT_EQ(Status(t), "timeout") << last_output_;
  EXPECT_EQ(Error(t).rfind("timed out after 6 s", 0), 0u) << Error(t);
  EXPECT_TRUE(LeftoverProcesses().empty());
}

// World sizes 1 and 2 in one sweep (a technique parameter as an axis): the `scaling` view puts
// each against world size 1 of the same run.
TEST_F(DataParallel, ScalingEfficiencyAgainstWorldSizeOneOfTheSameSweep) {
  Run(Experiment(4, "{data_parallel: {world_size: 1}}",
                 "sweep: {axes: {optimizations.data_parallel.world_size: [1, 2]}}\n"),
      "scaling");
  ASSERT_EQ(last_status_, 0) << last_output_;
  SQLite::Database db(db_);
  EXPECT_EQ(db.execAndGet("SELECT group_concat(label || '=' || status, ' ') FROM trials").getString(),
            "baseline=ok world_size=2=ok");
  SQLite::Statement q(db,
                      "SELECT s.world_size, s.samples_per_s, s.reference_samples_per_s, s.scaling_efficiency, "
                      "s.reference_data_parallel, ts.samples_per_s FROM scaling s "
                      "JOIN trial_summary ts ON ts.trial_id = s.trial_id ORDER BY s.world_size");
  std::vector<std::vector<double>> rows;
  while (q.executeStep())
    rows.push_back({q.getColumn(0).getDouble(), q.getColumn(1).getDouble(), q.getColumn(2).getDouble(),
                    q.getColumn(3).getDouble(), q.getColumn(4).getDouble(), q.getColumn(5).getDouble()});
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0][0], 1);
  EXPECT_DOUBLE_EQ(rows[0][3], 1.0);  // world size 1 against itself
  EXPECT_EQ(rows[1][0], 2);
  EXPECT_DOUBLE_EQ(rows[1][1], rows[1][5]);
  EXPECT_DOUBLE_EQ(rows[1][2], rows[0][5]);
  EXPECT_DOUBLE_EQ(rows[1][3], rows[1][5] / (2 * rows[0][5]));
  EXPECT_EQ(rows[1][4], 1);  // the reference ran data_parallel too
  std::cout << "scaling efficiency of 2 Gloo ranks on this machine's CPU: " << rows[1][3] << "\n";
}

// Two data-parallel trials at once (--devices cpu,cpu): each meets its own ranks through the
// FileStore of its own temporary folder, so both train as they do alone.
TEST_F(DataParallel, TrialsThatStartAtOnceEachMeetTheirOwnRanks) {
  const auto file = (dir_ / "twice.yaml").string();
  std::ofstream(file) << Experiment(4, "{data_parallel: {world_size: 2}}", "sweep: {axes: {seed: [7, 8]}}\n");
  const auto r = Runx(file + " --db " + db_ + " --force -q --devices cpu,cpu");
  ASSERT_EQ(r.status, 0) << r.out;
  SQLite::Database db(db_);
  EXPECT_EQ(db.execAndGet("SELECT group_concat(label || '=' || status, ' ') FROM (SELECT * FROM trials ORDER BY label)")
                .getString(),
            "baseline=ok seed=8=ok");
  // Seed 7 alone, as in the first test: the same losses as when it ran with the other trial.
  const int64_t together = db.execAndGet("SELECT id FROM trials WHERE label = 'baseline'").getInt64();
  const int64_t alone = Run(Experiment(4, "{data_parallel: {world_size: 2}}"), "alone");
  ASSERT_EQ(Status(alone), "ok") << last_output_;
  EXPECT_EQ(Losses(together), Losses(alone));
  EXPECT_TRUE(LeftoverProcesses().empty());
}

TEST_F(DataParallel, NcclOnTheCpuIsIncompatible) {
  const int64_t t = Run(Experiment(4, "{data_parallel: {world_size: 2, backend: nccl}}"), "nccl");
  EXPECT_EQ(Status(t), "incompatible");
  EXPECT_EQ(Error(t), "data_parallel: backend nccl needs a CUDA device, not 'cpu'; use gloo");
}

TEST_F(DataParallel, BadParametersAreLocatedErrors) {
  const auto file = (dir_ / "bad.yaml").string();
  std::ofstream(file) << Experiment(4, "{data_parallel: {world_size: 0, backend: mpi}}");
  const auto r = Runx("validate " + file);
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, file +
                       ":7:45: error: 'optimizations.data_parallel.world_size' must be >= 1, got 0\n"
                       "    7 | optimizations: {data_parallel: {world_size: 0, backend: mpi}}\n"
                       "      |                                             ^\n" +
                       file +
                       ":7:57: error: unknown backend 'mpi'\n"
                       "    7 | optimizations: {data_parallel: {world_size: 0, backend: mpi}}\n"
                       "      |                                                         ^\n"
                       "note: expected one of 'auto', 'gloo', 'nccl'\n"
                       "2 errors in 1 file\n");
  // world_size is required.
  std::ofstream(file) << Experiment(4, "{data_parallel: {backend: gloo}}");
  const auto missing = Runx("validate " + file);
  EXPECT_EQ(missing.status, 2);
  EXPECT_EQ(missing.out.substr(0, missing.out.find('\n')),
            file + ":7:17: error: missing required key 'world_size' in 'optimizations.data_parallel'");
}

}  // namespace
}  // namespace runx::testing

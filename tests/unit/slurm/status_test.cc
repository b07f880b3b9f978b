// Reading back a submission: its manifest, the states SLURM gives (squeue and sacct texts as
// SLURM 22.05 writes them), and the exit statuses and logs its jobs leave in its folder.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "../../remove_tree.h"
#include "slurm/status.h"

namespace runx::slurm {
namespace {
namespace fs = std::filesystem;

Manifest ThreeShards() {
  Manifest m;
  m.name = "tiny";
  m.store = "/x/runx.db";
  m.array_job = "12";
  m.merge_job = "13";
  m.shards = 3;
  m.shard_trials = {2, 2, 1};
  return m;
}

QueueReport Squeue(const std::string& text) { return {ParseSqueue(text), "squeue", ""}; }
QueueReport Sacct(const std::string& text) { return {ParseSacct(text), "sacct", ""}; }

TEST(SlurmStatus, ProgressLine) {
  const Manifest m = ThreeShards();
  const QueueReport q = Squeue("12_0|RUNNING|None\n12_[1-2%1]|PENDING|JobArrayTaskLimit\n13|PENDING|Dependency\n");
  EXPECT_EQ(CountStates(q, m), "1 RUNNING, 2 PENDING");
  EXPECT_EQ(ProgressLine(q, m), "shards: 1 RUNNING, 2 PENDING; merge: PENDING (Dependency)");
  // squeue forgets ended jobs after MinJobAge.
  EXPECT_EQ(ProgressLine(Squeue("12_2|RUNNING|None\n"), m),
            "shards: 2 not known to squeue, 1 RUNNING; merge: not known to squeue");
  EXPECT_EQ(ProgressLine(QueueReport{{}, "", "no answer"}, m), "shards: 3 unknown; merge: unknown");
}

class SlurmStatusDir : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("runx_slurm_status_" + std::to_string(::getpid()));
    runx::testing::RemoveTree(dir_.string());
    layout_ = {(dir_ / "slurm" / "tiny-1").string()};
    for (const auto& d : {layout_.ExitDir(), layout_.LogsDir(), layout_.StoresDir()}) fs::create_directories(d);
  }
  void TearDown() override { runx::testing::RemoveTree(dir_.string()); }
  static void Write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }
  fs::path dir_;
  Layout layout_;
};

TEST_F(SlurmStatusDir, AFailedShardAndAMergeThatHasNotRun) {
  const Manifest m = ThreeShards();
  Write(layout_.ShardExit("0"), "0\n");
  Write(layout_.ShardExit("1"), "1\n");
  Write(layout_.ShardLog("1", "err"), "starting\nrunx: error: it broke\n\n");
  const SubmissionStatus s =
      ReadStatus(layout_, m, Sacct("12_0|COMPLETED|0:0\n12_1|FAILED|1:0\n12_2|RUNNING|0:0\n13|PENDING|0:0\n"));
  EXPECT_EQ(s.source, "sacct");
  EXPECT_EQ(s.trials, 5);
  ASSERT_EQ(s.shards.size(), 3u);
  EXPECT_EQ(s.shards[0].name, "0");
  EXPECT_EQ(s.shards[0].job, "12_0");
  EXPECT_EQ(s.shards[0].state, "COMPLETED");
  EXPECT_EQ(s.shards[0].exit, 0);
  EXPECT_TRUE(s.shards[0].ok);
  EXPECT_EQ(s.shards[0].results, "no results store");
  EXPECT_EQ(s.shards[1].state, "FAILED");
  EXPECT_EQ(s.shards[1].exit, 1);
  EXPECT_FALSE(s.shards[1].ok);
  EXPECT_EQ(s.shards[1].results, "no results store; shard-1.err: runx: error: it broke");
  EXPECT_EQ(s.shards[2].state, "RUNNING");
  EXPECT_EQ(s.shards[2].exit, std::nullopt);
  EXPECT_EQ(s.shards[2].results, "no results store");
  EXPECT_EQ(s.merge.name, "merge");
  EXPECT_EQ(s.merge.job, "13");
  EXPECT_EQ(s.merge.state, "PENDING");
  EXPECT_EQ(s.merge.results, "runs when every array task has ended");
  EXPECT_EQ(s.ok_shards, 1);
  EXPECT_EQ(s.ended_shards, 2);
  EXPECT_FALSE(s.merged);
  EXPECT_FALSE(s.merge_did_not_run);
  EXPECT_FALSE(s.AllOk());
}

TEST_F(SlurmStatusDir, AShardKilledBySlurmAndAMergeThatDidNotRun) {
  Manifest m = ThreeShards();
  m.shards = 1;
  m.shard_trials = {2};
  const SubmissionStatus s = ReadStatus(layout_, m, Sacct("12_0|TIMEOUT|0:15\n13|CANCELLED|0:0\n"));
  EXPECT_EQ(s.shards[0].results, "no results store; shard-0.err: (empty)");  // ended, wrote no exit status
  EXPECT_EQ(s.ended_shards, 1);
  EXPECT_EQ(s.merge.results, "did not merge");
  EXPECT_TRUE(s.merge_did_not_run);
  m.merge_job = "";  // sbatch refused it
  const SubmissionStatus n = ReadStatus(layout_, m, QueueReport{{}, "", "sacct: not found on PATH"});
  EXPECT_EQ(n.source, "");
  EXPECT_EQ(n.problem, "sacct: not found on PATH");
  EXPECT_EQ(n.shards[0].state, "unknown");
  EXPECT_EQ(n.merge.job, "-");
  EXPECT_EQ(n.merge.state, "not submitted");
  EXPECT_TRUE(n.merge_did_not_run);
}

TEST_F(SlurmStatusDir, AllMerged) {
  Manifest m = ThreeShards();
  for (const char* i : {"0", "1", "2"}) Write(layout_.ShardExit(i), "0\n");
  Write(layout_.MergeExit(), "0\n");
  const SubmissionStatus quiet = ReadStatus(layout_, m, Squeue(""));
  EXPECT_EQ(quiet.merge.results, "see " + layout_.MergeLog("out"));  // an empty log
  Write(layout_.MergeLog("out"), "merged 2 runs\nadded 5 trials to /x/runx.db\n");
  const SubmissionStatus s = ReadStatus(layout_, m, Squeue(""));
  EXPECT_EQ(s.shards[0].state, "not known to squeue");
  EXPECT_EQ(s.merge.exit, 0);
  EXPECT_EQ(s.merge.results, "added 5 trials to /x/runx.db");
  EXPECT_TRUE(s.merged);
  EXPECT_EQ(s.ok_shards, 3);
  EXPECT_TRUE(s.AllOk());
}

TEST_F(SlurmStatusDir, ReadSubmissionAndTheLatestOne) {
  const auto refusal = [](auto read) -> std::string {
    try {
      read();
    } catch (const SubmitError& e) {
      return std::string(e.what()) + (e.hint().empty() ? "" : " | hint: " + e.hint());
    }
    return "";
  };
  const std::string store = (dir_ / "runx.db").string();
  EXPECT_EQ(refusal([&] { ReadSubmission(layout_); }),
            "'" + layout_.dir + "' is not a submission's folder (it has no submission.json)");
  EXPECT_EQ(refusal([&] { LatestSubmissionFor(store); }),
            "no submission in '" + (dir_ / "slurm").string() + "' | hint: name its folder: runx submit --status DIR");
  Write(layout_.Manifest(), "{}");
  EXPECT_EQ(refusal([&] { ReadSubmission(layout_); }).rfind("cannot read '" + layout_.Manifest() + "': ", 0), 0u);
  Manifest m = ThreeShards();
  m.submitted_at = "2026-12-03T15:37:00Z";
  Write(layout_.Manifest(), ToJson(m));
  EXPECT_EQ(ReadSubmission(layout_).array_job, "12");
  EXPECT_EQ(LatestSubmissionFor(store), layout_.dir);
}

}  // namespace
}  // namespace runx::slurm

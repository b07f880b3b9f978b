// The folder of a submission: its files, its manifest, naming a new one and finding the newest.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "../../remove_tree.h"
#include "slurm/layout.h"

namespace runx::slurm {
namespace {
namespace fs = std::filesystem;

TEST(SlurmLayout, Files) {
  const Layout l{"/r/slurm/x-1"};
  EXPECT_EQ(l.ArrayScript(), "/r/slurm/x-1/array.sbatch");
  EXPECT_EQ(l.MergeScript(), "/r/slurm/x-1/merge.sbatch");
  EXPECT_EQ(l.Manifest(), "/r/slurm/x-1/submission.json");
  EXPECT_EQ(l.ShardStore("3"), "/r/slurm/x-1/stores/shard-3.db");
  EXPECT_EQ(l.ShardLog("%a", "err"), "/r/slurm/x-1/logs/shard-%a.err");
  EXPECT_EQ(l.ShardExit("0"), "/r/slurm/x-1/exit/shard-0");
  EXPECT_EQ(l.MergeLog("out"), "/r/slurm/x-1/logs/merge.out");
  EXPECT_EQ(l.MergeExit(), "/r/slurm/x-1/exit/merge");
}

TEST(SlurmLayout, TrialsPerShard) {
  EXPECT_EQ(TrialsPerShard(4, 2), (std::vector<int>{2, 2}));
  EXPECT_EQ(TrialsPerShard(5, 3), (std::vector<int>{2, 2, 1}));
  EXPECT_EQ(TrialsPerShard(3, 3), (std::vector<int>{1, 1, 1}));
}

TEST(SlurmLayout, ManifestRoundTrip) {
  Manifest m;
  m.experiment = "/x/e.yaml";
  m.name = "tiny";
  m.store = "/x/results/runx.db";
  m.workdir = "/x";
  m.submitted_at = "2026-12-03T15:37:00Z";
  m.array_job = "12";
  m.merge_job = "13";
  m.shards = 2;
  m.max_parallel = 1;
  m.shard_trials = {2, 1};
  m.overrides = {"seed=3"};
  const Manifest back = ManifestFromJson(ToJson(m));
  EXPECT_EQ(ToJson(back), ToJson(m));
  EXPECT_EQ(back.shard_trials, m.shard_trials);
  EXPECT_THROW(ManifestFromJson("{}"), std::runtime_error);
  EXPECT_THROW(ManifestFromJson("not json"), std::runtime_error);
}

TEST(SlurmLayout, UnsafeForSbatch) {
  EXPECT_EQ(UnsafeForSbatch("/shared/results/slurm/tiny-20261203T153700Z"), std::nullopt);
  EXPECT_EQ(UnsafeForSbatch("/my results"), ' ');
  EXPECT_EQ(UnsafeForSbatch("/100%"), '%');  // a SLURM file name pattern
  EXPECT_EQ(UnsafeForSbatch("/it's"), '\'');
}

class SlurmDirs : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("runx_slurm_dirs_" + std::to_string(::getpid()));
    runx::testing::RemoveTree(dir_.string());
    fs::create_directories(dir_);
  }
  void TearDown() override { runx::testing::RemoveTree(dir_.string()); }
  void Submission(const std::string& dir, const std::string& at) {
    fs::create_directories(dir);
    Manifest m;
    m.submitted_at = at;
    m.shard_trials = {1};
    std::ofstream(Layout{dir}.Manifest()) << ToJson(m);
  }
  fs::path dir_;
};

TEST_F(SlurmDirs, NewAndLatest) {
  const std::string parent = (dir_ / "slurm").string();
  EXPECT_EQ(LatestSubmissionDir(parent), std::nullopt);  // no folder yet
  const std::string a = NewSubmissionDir(parent, "res net/50", "20261203T153700Z");
  EXPECT_EQ(a, parent + "/res-net-50-20261203T153700Z");
  Submission(a, "2026-12-03T15:37:00Z");
  const std::string b = NewSubmissionDir(parent, "res net/50", "20261203T153700Z");  // same second
  EXPECT_EQ(b, a + "-2");
  Submission(b, "2026-12-03T15:37:00Z");
  Submission(parent + "/older", "2026-12-01T10:00:00Z");
  fs::create_directories(parent + "/not-a-submission");
  EXPECT_EQ(LatestSubmissionDir(parent), b);
}

}  // namespace
}  // namespace runx::slurm

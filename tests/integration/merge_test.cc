// `runx merge` through the real binary: the two shards of a sweep, each run into a store of its
// own, merged into one store hold the trials the same sweep run unsharded holds, and merging again
// adds nothing; what is not a runx store is refused and left as it was.
#include <algorithm>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "../remove_tree.h"
#include "run_util.h"

namespace {
namespace fs = std::filesystem;
using runx::testing::Runx;

class Merge : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("runx_merge_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    runx::testing::RemoveTree(dir_.string());
    fs::create_directories(dir_);
    setenv("RUNX_PLUGIN_PATH", RUNX_TEST_PLUGIN_GOOD_DIR, 1);
  }
  void TearDown() override { unsetenv("RUNX_PLUGIN_PATH"); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  std::string Write(const std::string& name, const std::string& text) {
    std::ofstream(Path(name)) << text;
    return Path(name);
  }
  /// `runx query` of `sql` on `db` as CSV; fails the test when the query does.
  std::string Query(const std::string& db, const std::string& sql) {
    const auto r = Runx("query --db " + db + " --format csv \"" + sql + "\"");
    EXPECT_EQ(r.status, 0) << r.out;
    return r.out;
  }
  fs::path dir_;
};

// A tiny sweep: baseline and test_good, two repeats each (four trials); two shards of two.
const char* const kSweep =
    "name: sharded\n"
    "device: cpu\n"
    "model: {name: cnn, channels: [4, 8]}\n"
    "data: {source: synthetic, shape: [3, 8, 8], num_classes: 5, batch_size: 8}\n"
    "train: {warmup_steps: 1, steps: 4, optimizer: {name: sgd, lr: 0.01}}\n"
    "repeats: 2\n"
    "sweep: {mode: ablation, axes: {optimizations: [test_good]}}\n";

constexpr const char* kOkTrials =
    "SELECT config_hash, env_hash, repeat_index FROM trials WHERE status = 'ok' ORDER BY 1, 2, 3";

TEST_F(Merge, TheShardsOfASweepMergedEqualTheSweepRunWhole) {
  const std::string file = Write("sweep.yaml", kSweep);
  const std::string a = Path("a.db"), b = Path("b.db"), whole = Path("whole.db"), out = Path("out/merged.db");
  for (const auto& [db, shard] : {std::pair{a, " --shard 0/2"}, std::pair{b, " --shard 1/2"}, std::pair{whole, ""}}) {
    const auto r = Runx(file + " --db " + db + " -q" + shard);
    ASSERT_EQ(r.status, 0) << r.out;
  }
  const auto merged = Runx("merge " + out + " " + a + " " + b);
  ASSERT_EQ(merged.status, 0) << merged.out;
  EXPECT_EQ(merged.out, a + ": 1 run added, 0 already present; 2 trials added, 0 already present\n" + b +
                            ": 1 run added, 0 already present; 2 trials added, 0 already present\n"
                            "merged 2 stores into " +
                            out + " (new): 2 runs added, 0 already present; 4 trials added, 0 already present\n");
  // The same trials (configuration, environment, repeat) as the sweep run whole, each once.
  const std::string expected = Query(whole, kOkTrials);
  EXPECT_EQ(std::count(expected.begin(), expected.end(), '\n'), 5);  // header + 4 trials
  EXPECT_EQ(Query(out, kOkTrials), expected);
  // Each shard stays a run of its own, with its trials, steps and report figures.
  EXPECT_EQ(Query(out,
                  "SELECT r.shard, s.status, s.trials, s.ok_trials FROM runs r "
                  "JOIN run_summary s ON s.run_id = r.id ORDER BY r.shard"),
            "shard,status,trials,ok_trials\r\n0/2,ok,2,2\r\n1/2,ok,2,2\r\n");
  EXPECT_EQ(Query(out, "SELECT count(*) FROM steps"), Query(whole, "SELECT count(*) FROM steps"));
  EXPECT_EQ(Query(out, "SELECT count(DISTINCT uid) FROM trials"), "count(DISTINCT uid)\r\n4\r\n");

  // Merging again, in any order, adds nothing.
  const auto again = Runx("merge " + out + " " + b + " " + a);
  ASSERT_EQ(again.status, 0) << again.out;
  EXPECT_NE(again.out.find("merged 2 stores into " + out +
                           ": 0 runs added, 2 already present; 0 trials added, 4 already present"),
            std::string::npos)
      << again.out;
  EXPECT_EQ(Query(out, kOkTrials), expected);
  EXPECT_EQ(Query(out, "SELECT count(*) FROM trials"), "count(*)\r\n4\r\n");

  // A later run on the merged store reuses the merged trials: nothing runs again.
  const auto rerun = Runx(file + " --db " + out);
  ASSERT_EQ(rerun.status, 0) << rerun.out;
  EXPECT_NE(rerun.out.find("4 trials reused"), std::string::npos) << rerun.out;
  EXPECT_EQ(Query(out, "SELECT count(*) FROM trials"), "count(*)\r\n4\r\n");
}

TEST_F(Merge, RefusesWhatIsNotARunxStoreAndChangesNothing) {
  const std::string notes = Write("notes.txt", std::string(4096, 'x'));
  const std::string out = Path("out.db");
  const auto r = Runx("merge " + out + " " + notes);
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_EQ(r.out, "runx: error: cannot merge: cannot read results store '" + notes + "': file is not a database\n");
  EXPECT_FALSE(fs::exists(out));
  EXPECT_EQ(fs::file_size(notes), 4096u);
  const auto into = Runx("merge " + notes + " " + out);
  EXPECT_EQ(into.status, 2) << into.out;  // a missing store is invalid input, as for every command
  EXPECT_EQ(into.out, "runx: error: cannot merge '" + out + "': no such file\n");
  EXPECT_EQ(Runx("merge " + out).status, 2);  // no input named
}

}  // namespace

// FindRunProgress: `runx submit --status` finds the run an array task started in its shard store
// by the store named on its command line, among the runs copied there from the results store.
#include <gtest/gtest.h>

#include "store/run_progress.h"
#include "store/store.h"
#include "test_support.h"

namespace runx::store {
namespace {

using testing::MakeTrial;

class RunProgressTest : public testing::TempDirTest {};

TEST_F(RunProgressTest, TheNewestRunWhoseCommandNamesTheStore) {
  const std::string path = PathOf("shard-1.db");
  {
    Store s = Store::Open(path);
    const int64_t exp = s.AddExperiment("e", "e.yaml", "name: e\n", "sha");
    RunInfo copied;  // a run of the results store, copied in before the task's own
    copied.experiment_id = exp;
    copied.started_at = "2026-12-01T10:00:00Z";
    copied.command = "runx run e.yaml --shard 1/2 --db /r/slurm/old/stores/shard-1.db";
    const int64_t old = s.BeginRun(copied);
    s.RecordTrial(MakeTrial(old, 0, {"baseline", true, 0, "ok", "", 100, 10}));
    s.EndRun(old, RunStatus::kOk, "2026-12-01T10:01:00Z");
    RunInfo own = copied;
    own.started_at = "2026-12-02T10:00:00Z";
    own.command = "runx run e.yaml --shard 1/2 --db /r/slurm/new/stores/shard-1.db";
    const int64_t run = s.BeginRun(own);
    s.RecordTrial(MakeTrial(run, 0, {"baseline", true, 0, "ok", "", 100, 10}));
    s.RecordTrial(MakeTrial(run, 1, {"bf16", false, 0, "failed", "boom", 0, 0}));
  }
  const auto p = FindRunProgress(path, "--db /r/slurm/new/stores/shard-1.db");
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->run_id, 2);
  EXPECT_EQ(p->status, "running");
  EXPECT_EQ(p->trials, 2);
  EXPECT_EQ(p->ok_trials, 1);
  EXPECT_EQ(p->reused_trials, 0);
  const auto old = FindRunProgress(path, "--db /r/slurm/old/stores/shard-1.db");
  ASSERT_TRUE(old.has_value());
  EXPECT_EQ(old->run_id, 1);
  EXPECT_EQ(old->status, "ok");
  EXPECT_FALSE(FindRunProgress(path, "--db /r/slurm/other/stores/shard-1.db").has_value());
  EXPECT_FALSE(FindRunProgress(path, "it's").has_value());  // a quote in the text is no SQL
  EXPECT_THROW(FindRunProgress(PathOf("missing.db"), "x"), StoreError);
}

}  // namespace
}  // namespace runx::store

// Reading runs back for compare and history: run references (id, latest, previous, git
// revision), a run's overview, the runs of an experiment and its trials' identities.
#include "store/history.h"

#include <gtest/gtest.h>

#include "test_support.h"

namespace runx::store {
namespace {

using testing::FillExampleStore;
using testing::TempDirTest;

class History : public TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    db_ = PathOf("runx.db");
    FillExampleStore(db_);
  }
  // The message of the StoreError ResolveRun throws for `ref` ("" when it resolves).
  std::string Refused(Store& store, const std::string& ref, const std::string& experiment = "") {
    try {
      ResolveRun(store, ref, experiment);
    } catch (const StoreError& e) {
      return e.what();
    }
    return "";
  }
  // Adds a run of experiment `experiment_id` built from `sha`, started at `started_at`.
  int64_t AddRun(Store& store, int64_t experiment_id, const std::string& sha, const std::string& started_at,
                 const std::string& status = "ok") {
    RunInfo info;
    info.experiment_id = experiment_id;
    info.started_at = started_at;
    info.host = "box";
    info.git_sha = sha;
    const int64_t id = store.BeginRun(info);
    if (status != "running") store.EndRun(id, *ParseRunStatus(status), started_at);
    return id;
  }
  std::string db_;
};

// The example store: runs 1 (mlp_amp, aaaa111), 2 (mlp_amp, bbbb222), 3 (resnet_cl, bbbb222).
TEST_F(History, RunIdsLatestAndPrevious) {
  Store store = Store::Open(db_);
  EXPECT_EQ(ResolveRun(store, "2"), 2);
  EXPECT_EQ(Refused(store, "9"), "no run 9 in results store '" + db_ + "'");
  EXPECT_EQ(ResolveRun(store, "latest"), 3);
  EXPECT_EQ(ResolveRun(store, "latest", "mlp_amp"), 2);
  EXPECT_EQ(ResolveRun(store, "previous", "mlp_amp"), 1);
  // `previous` is the run before `latest` of the same experiment: resnet_cl has only one.
  EXPECT_EQ(Refused(store, "previous"),
            "no run before the latest (run 3) of its experiment in results store '" + db_ + "'");
  EXPECT_EQ(Refused(store, "latest", "nope"), "no finished run of experiment 'nope' in results store '" + db_ + "'");
}

TEST_F(History, LatestSkipsARunStillRunningAndOrdersByStart) {
  Store store = Store::Open(db_);
  AddRun(store, 1, "cccc333", "2026-12-09T10:00:00Z", "running");
  EXPECT_EQ(ResolveRun(store, "latest", "mlp_amp"), 2);
  // A run merged in later but started earlier is not the latest.
  const int64_t early = AddRun(store, 1, "dddd444", "2026-11-30T10:00:00Z");
  EXPECT_EQ(ResolveRun(store, "latest", "mlp_amp"), 2);
  EXPECT_EQ(ResolveRun(store, "previous", "mlp_amp"), 1);
  EXPECT_EQ(ListRuns(store, "mlp_amp", 0), (std::vector<int64_t>{4, 2, 1, early}));
  EXPECT_EQ(ListRuns(store, "mlp_amp", 2), (std::vector<int64_t>{4, 2}));
  EXPECT_TRUE(ListRuns(store, "nope", 0).empty());
}

TEST_F(History, GitRevisions) {
  Store store = Store::Open(db_);
  EXPECT_EQ(ResolveRun(store, "aaaa"), 1);
  EXPECT_EQ(ResolveRun(store, "AAAA111"), 1);
  EXPECT_EQ(ResolveRun(store, "aaaa111f00dfeed0123456789abcdef012345678"), 1);  // a full sha
  EXPECT_EQ(ResolveRun(store, "bbbb222"), 3);                                   // the newest run of that build
  EXPECT_EQ(ResolveRun(store, "bbbb", "mlp_amp"), 2);
  EXPECT_EQ(Refused(store, "abc"),
            "'abc' is not a run: expected a run id, 'latest', 'previous' or a git revision (4 or more hex digits of "
            "the commit runx was built from)");
  EXPECT_EQ(Refused(store, "cafe"), "no run was built from a git revision starting with 'cafe'");
  EXPECT_EQ(Refused(store, "aaaa", "resnet_cl"),
            "no run of experiment 'resnet_cl' was built from a git revision starting with 'aaaa'");
  AddRun(store, 1, "bbbb999", "2026-12-05T10:00:00Z");
  EXPECT_EQ(Refused(store, "bbbb"),
            "git revision 'bbbb' is ambiguous: runs were built from bbbb222, bbbb999; give more digits");
  EXPECT_EQ(ResolveRun(store, "bbbb9"), 4);
}

TEST_F(History, ARunsOverviewAndItsTrialsIdentities) {
  Store store = Store::Open(db_);
  const RunOverview r = ReadRunOverview(store, 1);
  EXPECT_EQ(r.id, 1);
  EXPECT_EQ(r.experiment, "mlp_amp");
  EXPECT_EQ(r.status, "ok");
  EXPECT_EQ(r.git_sha, "aaaa111");
  EXPECT_EQ(r.git_dirty, false);
  EXPECT_EQ(r.runx_build, "build-aaaa111");
  EXPECT_EQ(r.build_type, "Release");
  EXPECT_EQ(r.devices, std::vector<std::string>{"cpu"});
  EXPECT_EQ(r.platforms, std::vector<std::string>{"platform-box"});
  EXPECT_EQ(r.environment.at("libtorch_version"), "1.13.0");
  EXPECT_THROW(ReadRunOverview(store, 42), StoreError);
  const auto ids = ReadTrialIdentities(store, 1);
  ASSERT_EQ(ids.size(), 4u);
  EXPECT_EQ(ids.at(1).config_hash, "h-baseline");
  EXPECT_EQ(ids.at(3).config_hash, "h-bf16");
  EXPECT_EQ(ids.at(3).platform_hash, "platform-box");
  EXPECT_EQ(LatestExperiment(store), "resnet_cl");
}

}  // namespace
}  // namespace runx::store

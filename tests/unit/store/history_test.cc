// Reading runs back for compare and history: run references (id, latest, previous, git
// revision, tag), a run's overview, the runs of an experiment, sweeps of several runs, reuse-only
// runs, and the measurements a spread is estimated from.
#include "store/history.h"

#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>

#include "test_support.h"

namespace runx::store {
namespace {

using testing::ExampleTrial;
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
                 const std::string& status = "ok", const RunContext& context = {}, const std::string& plan = "",
                 const std::string& shard = "0/1") {
    RunInfo info;
    info.experiment_id = experiment_id;
    info.started_at = started_at;
    info.host = "box";
    info.git_sha = sha;
    info.context = context;
    info.plan_hash = plan;
    info.shard = shard;
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
  // Beyond int64: no run either, not an internal error (issue 30, point 10).
  EXPECT_EQ(Refused(store, "99999999999999999999"), "no run 99999999999999999999 in results store '" + db_ + "'");
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
  EXPECT_EQ(ListRuns(store, "mlp_amp", 0, true), (std::vector<int64_t>{4, 2, 1, early}));
  EXPECT_EQ(ListRuns(store, "mlp_amp", 2, true), (std::vector<int64_t>{4, 2}));
  // Runs 4 and `early` measured nothing (no trial of their own): not history points.
  EXPECT_EQ(ListRuns(store, "mlp_amp", 0), (std::vector<int64_t>{2, 1}));
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
            "'abc' is not a run: expected a run id, 'latest', 'previous', a tag (runx run --tag) or a git revision "
            "(4 or more hex digits of the commit of your experiment's repository or of runx's build)");
  EXPECT_EQ(Refused(store, "cafe"),
            "no run has the tag 'cafe' or was made at a git revision starting with 'cafe' (of your experiment's "
            "repository or of runx's build)");
  EXPECT_EQ(Refused(store, "aaaa", "resnet_cl"),
            "no run of experiment 'resnet_cl' has the tag 'aaaa' or was made at a git revision starting with 'aaaa' "
            "(of your experiment's repository or of runx's build)");
  AddRun(store, 1, "bbbb999", "2026-12-05T10:00:00Z");
  EXPECT_EQ(Refused(store, "bbbb"),
            "git revision 'bbbb' is ambiguous: runs were made at bbbb222, bbbb999; give more digits");
  EXPECT_EQ(ResolveRun(store, "bbbb9"), 4);
}

// The user's question is about their code: a revision also names the commit of the repository
// that held the experiment file, and a run can be named by its tag.
TEST_F(History, TheUsersRevisionsAndTags) {
  Store store = Store::Open(db_);
  RunContext mine;
  mine.user_git_sha = "1234567890abcdef1234567890abcdef12345678";
  mine.user_git_dirty = true;
  mine.tag = "before-fix";
  mine.note = "baseline before the data loader change";
  const int64_t before = AddRun(store, 1, "aaaa111", "2026-12-06T10:00:00Z", "ok", mine);
  mine.user_git_sha = "fedcba0987654321fedcba0987654321fedcba09";
  mine.user_git_dirty = false;
  mine.tag = "after-fix";
  mine.note = "";
  const int64_t after = AddRun(store, 1, "aaaa111", "2026-12-06T11:00:00Z", "ok", mine);
  EXPECT_EQ(ResolveRun(store, "before-fix"), before);
  EXPECT_EQ(ResolveRun(store, "after-fix"), after);
  EXPECT_EQ(ResolveRun(store, "1234567890a"), before);  // all digits would be a run id
  EXPECT_EQ(ResolveRun(store, "FEDCBA0987654321fedcba0987654321fedcba09"), after);
  EXPECT_EQ(ResolveRun(store, "aaaa111"), after);  // runx's own build: the newest run of it
  const RunOverview o = ReadRunOverview(store, before);
  EXPECT_EQ(o.user_git_sha, "1234567890abcdef1234567890abcdef12345678");
  EXPECT_EQ(o.user_git_dirty, true);
  EXPECT_EQ(o.tag, "before-fix");
  EXPECT_EQ(o.note, "baseline before the data loader change");
  EXPECT_EQ(ReadRunOverview(store, 1).user_git_sha, "");
  EXPECT_FALSE(ReadRunOverview(store, 1).user_git_dirty);
}

// Shards of one plan run into one store are one sweep: the second joins the first, readers see
// one run with both runs' trials, and a shard's id names the sweep.
TEST_F(History, ShardsOfOnePlanAreOneSweep) {
  Store store = Store::Open(db_);
  const int64_t zero = AddRun(store, 1, "cccc333", "2026-12-07T10:00:00Z", "ok", {}, "plan-x", "0/2");
  const int64_t one = AddRun(store, 1, "cccc333", "2026-12-07T10:00:01Z", "ok", {}, "plan-x", "1/2");
  ExampleTrial base{"baseline", true, 0, "ok", "", 1000, 60};
  ExampleTrial fast{"bf16", false, 0, "ok", "", 1900, 30};
  store.RecordTrial(testing::MakeTrial(zero, 0, base));
  store.RecordTrial(testing::MakeTrial(one, 1, fast));
  // A third shard 0/2 of the same plan starts a new sweep: this one has its shard 0.
  const int64_t again = AddRun(store, 1, "cccc333", "2026-12-08T10:00:00Z", "ok", {}, "plan-x", "0/2");
  store.RecordTrial(testing::MakeTrial(again, 0, base));
  // Another plan's shard joins nothing.
  const int64_t other = AddRun(store, 1, "cccc333", "2026-12-08T10:00:01Z", "ok", {}, "plan-y", "1/2");
  store.RecordTrial(testing::MakeTrial(other, 1, fast));

  const std::vector<RunTrial> trials = store.ReadRunTrials(one);
  ASSERT_EQ(trials.size(), 2u);
  EXPECT_EQ(trials[0].label, "baseline");
  EXPECT_EQ(trials[1].label, "bf16");
  EXPECT_EQ(store.ReadRunTrials(zero).size(), 2u);
  EXPECT_EQ(store.ReadRunTrials(again).size(), 1u);
  EXPECT_EQ(ResolveRun(store, std::to_string(one)), zero);
  const RunOverview o = ReadRunOverview(store, one);
  EXPECT_EQ(o.id, zero);
  EXPECT_EQ(o.runs, (std::vector<int64_t>{zero, one}));
  EXPECT_EQ(o.started_at, "2026-12-07T10:00:00Z");
  EXPECT_EQ(ListRuns(store, "mlp_amp", 0), (std::vector<int64_t>{other, again, zero, 2, 1}));
  // A sweep is running while one of its runs is.
  SQLite::Statement running(store.db(), "UPDATE runs SET status = 'running' WHERE id = ?");
  running.bind(1, one);
  running.exec();
  EXPECT_EQ(ReadRunOverview(store, zero).status, "running");
  EXPECT_EQ(ReadRunOverview(store, zero).finished_at, "");

  // An explicit sweep id (runx submit's array tasks, each in a store of its own, merged) groups
  // runs whatever their plan.
  RunContext joined;
  joined.sweep_uid = "sweep-42";
  const int64_t a = AddRun(store, 2, "cccc333", "2026-12-09T10:00:00Z", "ok", joined, "p", "0/2");
  const int64_t b = AddRun(store, 2, "cccc333", "2026-12-09T10:00:05Z", "ok", joined, "p", "1/2");
  EXPECT_EQ(ReadRunOverview(store, b).runs, (std::vector<int64_t>{a, b}));
}

// A run that only reused earlier results measured nothing: it is kept, but is no history point.
TEST_F(History, ARunThatOnlyReusedIsNoHistoryPoint) {
  Store store = Store::Open(db_);
  const int64_t reuse = AddRun(store, 1, "aaaa111", "2026-12-06T10:00:00Z", "running");
  const TrialKey key{"h-baseline", "env-box", "platform-box", 0};
  const Claim c = store.ClaimTrial(
      reuse, key, {"baseline", true, 0, 0}, [](const std::string&, int64_t, const std::string&) { return true; },
      "2026-12-06T10:00:01Z");
  ASSERT_EQ(c.outcome, ClaimOutcome::kReused);
  store.EndRun(reuse, RunStatus::kOk, "2026-12-06T10:00:02Z");
  EXPECT_FALSE(ReadRunOverview(store, reuse).measured);
  EXPECT_TRUE(store.ReadRunTrials(reuse)[0].reused);
  EXPECT_EQ(ListRuns(store, "mlp_amp", 0), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(ListRuns(store, "mlp_amp", 0, true), (std::vector<int64_t>{reuse, 2, 1}));
}

// Every ok measurement of some configurations, with its throughput metric and its load.
TEST_F(History, ProcessRatesOfConfigurations) {
  Store store = Store::Open(db_);
  const std::vector<ProcessRate> rates = ReadProcessRates(store, {"h-baseline", "h-bf16", "h-baseline", "nope", ""});
  // baseline: 2 in run 1, 1 in run 2 and 1 in run 3 (resnet_cl's has the same configuration here);
  // bf16: 1 in run 1, 1 in run 2; fp16 was not ok.
  ASSERT_EQ(rates.size(), 6u);
  EXPECT_EQ(rates[0].trial_id, 1);
  EXPECT_EQ(rates[0].config_hash, "h-baseline");
  EXPECT_EQ(rates[0].env_hash, "env-box");
  EXPECT_EQ(rates[0].host, "box");
  EXPECT_DOUBLE_EQ(rates[0].samples_per_s, 1000);
  EXPECT_FALSE(rates[0].other_cpus);
  EXPECT_EQ(rates[2].config_hash, "h-bf16");
  SQLite::Statement load(
      store.db(),
      "INSERT INTO metrics (trial_id, name, value, unit) VALUES (1, 'noise.other_cpus', 0.9, 'cpus'), "
      "(1, 'noise.cpus', 2, 'cpus')");
  load.exec();
  const std::vector<ProcessRate> again = ReadProcessRates(store, {"h-baseline"});
  ASSERT_EQ(again.size(), 4u);
  EXPECT_DOUBLE_EQ(*again[0].other_cpus, 0.9);
  EXPECT_DOUBLE_EQ(*again[0].cpus, 2);
  EXPECT_EQ(store.ReadRunTrials(1)[0].other_cpus, 0.9);
}

TEST_F(History, ARunsTrialsCarryTheirEnergyWhereMetered) {
  Store store = Store::Open(db_);
  EXPECT_FALSE(store.ReadRunTrials(1)[0].joules_per_sample);
  SQLite::Statement energy(store.db(),
                           "INSERT INTO metrics (trial_id, name, value, unit) VALUES "
                           "(1, 'joules_per_sample', 0.25, 'J/sample'), (1, 'power_w', 412.5, 'W')");
  energy.exec();
  const RunTrial t = store.ReadRunTrials(1)[0];
  EXPECT_EQ(t.joules_per_sample, 0.25);
  EXPECT_EQ(t.power_w, 412.5);
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
  const std::vector<RunTrial> trials = store.ReadRunTrials(1);
  ASSERT_EQ(trials.size(), 4u);
  EXPECT_EQ(trials[0].config_hash, "h-baseline");
  EXPECT_EQ(trials[2].config_hash, "h-bf16");
  EXPECT_EQ(trials[2].platform_hash, "platform-box");
  EXPECT_EQ(trials[2].env_hash, "env-box");
  EXPECT_EQ(trials[2].host, "box");
  EXPECT_FALSE(trials[2].reused);
  EXPECT_EQ(r.runs, std::vector<int64_t>{1});
  EXPECT_TRUE(r.measured);
  EXPECT_EQ(LatestExperiment(store), "resnet_cl");
}

}  // namespace
}  // namespace runx::store

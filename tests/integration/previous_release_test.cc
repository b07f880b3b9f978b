// A results store made by the release before issue 32's restructuring (tests/data/previous-release/
// README.md says which commit and how), opened by this runx: it reads the store, and running the
// same experiments again with --any-build reuses every trial, which it does only when each trial's
// config identity (config_hash) and platform identity came out the same as that release computed
// them. Nothing in the old store is lost or rewritten. The store was made on the development
// machine: where the platform differs (another CPU, another LibTorch), the reuse cannot be checked
// and the test says so instead of passing.
#include <filesystem>
#include <fstream>
#include <string>

#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>

#include "../remove_tree.h"
#include "run_util.h"

namespace {
namespace fs = std::filesystem;
using runx::testing::Runx;

const fs::path kFixture = fs::path(RUNX_SOURCE_DIR) / "tests" / "data" / "previous-release";

class PreviousRelease : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("runx_previous_release_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    runx::testing::RemoveTree(dir_.string());
    fs::create_directories(dir_);
    for (const char* f : {"cnn.yaml", "gpt.yaml", "text.txt", "runx.db"}) fs::copy_file(kFixture / f, dir_ / f);
    fs::permissions(dir_ / "runx.db", fs::perms::owner_read | fs::perms::owner_write);
    db_ = (dir_ / "runx.db").string();
  }
  /// runx ARGS from the copy's folder, where the experiments name text.txt (relative paths are the
  /// working directory's, as when the store was made).
  runx::testing::Result RunxHere(const std::string& args) {
    return runx::testing::Shell("cd '" + dir_.string() + "' && " + RUNX_BIN + " " + args);
  }
  std::string One(const std::string& sql) {
    SQLite::Database db(db_, SQLite::OPEN_READONLY);
    SQLite::Statement q(db, sql);
    return q.executeStep() && !q.getColumn(0).isNull() ? q.getColumn(0).getString() : "";
  }
  int64_t Count(const std::string& sql) { return std::stoll(One(sql)); }
  fs::path dir_;
  std::string db_;
};

TEST_F(PreviousRelease, ItsStoreIsReadAndItsTrialsAreReusedByThisRunx) {
  // What the old release stored, read before this runx touches the store.
  const int64_t trials = Count("SELECT count(*) FROM trials");
  const int64_t runs = Count("SELECT count(*) FROM runs");
  ASSERT_EQ(trials, 6) << "the fixture holds 4 cnn trials and 2 gpt trials";
  const std::string snapshot =
      "SELECT group_concat(id || ':' || config_hash || ':' || env_hash || ':' || platform_hash || ':' || status || ':' "
      "|| "
      "finished_at || ':' || length(config_json), ' ') FROM (SELECT * FROM trials WHERE id <= " +
      std::to_string(trials) + " ORDER BY id)";
  const std::string before = One(snapshot);
  const std::string metrics =
      "SELECT (SELECT count(*) || ':' || total(value) FROM metrics WHERE trial_id <= " + std::to_string(trials) +
      ") || ' ' || (SELECT count(*) || ':' || total(wall_ms) FROM steps WHERE trial_id <= " + std::to_string(trials) +
      ")";
  const std::string metrics_before = One(metrics);

  // The commands that only read: the old store as it is.
  const auto query = Runx("query --db " + db_ + " --format csv \"SELECT count(*) AS n FROM trial_summary\"");
  ASSERT_EQ(query.status, 0) << query.out;
  EXPECT_NE(query.out.find(std::to_string(trials)), std::string::npos) << query.out;
  const auto history = Runx("history --db " + db_ + " previous-release-cnn");
  ASSERT_EQ(history.status, 0) << history.out;
  EXPECT_NE(history.out.find("channels_last"), std::string::npos) << history.out;

  // The same experiments again, any build: every trial's identity must match the stored one.
  for (const char* file : {"cnn.yaml", "gpt.yaml"}) {
    const auto run = RunxHere(std::string(file) + " --db runx.db --any-build -q");
    ASSERT_EQ(run.status, 0) << file << ": " << run.out;
  }
  EXPECT_EQ(Count("SELECT count(*) FROM runs"), runs + 2);
  const int64_t ran = Count("SELECT count(*) FROM trials") - trials;
  if (ran > 0) {
    // A trial ran again. That is a changed identity on the same platform, and a failure; on
    // another platform it is expected, and the check cannot be made here.
    const int64_t same_platform =
        Count("SELECT count(*) FROM trials n WHERE n.id > " + std::to_string(trials) +
              " AND n.platform_hash IN (SELECT platform_hash FROM trials WHERE id <= " + std::to_string(trials) + ")");
    if (same_platform == 0)
      GTEST_SKIP() << "the fixture was made on another platform (CPU, OS or LibTorch): its trials cannot be "
                      "reused here, so their identities cannot be compared; the read-only commands passed";
    ADD_FAILURE() << ran << " trial(s) ran again on the platform that made the store: an identity changed. "
                  << "New trials (label, config_hash): "
                  << One("SELECT group_concat(label || ' ' || config_hash, ', ') FROM trial_summary WHERE trial_id > " +
                         std::to_string(trials));
  }
  EXPECT_EQ(One("SELECT group_concat(reused_trials, ' ') FROM (SELECT reused_trials FROM run_summary "
                "ORDER BY run_id DESC LIMIT 2)"),
            "2 4");
  // Nothing the old release stored changed.
  EXPECT_EQ(One(snapshot), before);
  EXPECT_EQ(One(metrics), metrics_before);
}

}  // namespace

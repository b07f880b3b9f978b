#pragma once
// A test fixture that runs experiments through the real runx binary into a fresh SQLite store in
// its own temporary directory, and reads trials, metrics and environment values back.
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>

#include "../remove_tree.h"
#include "run_util.h"

namespace runx::testing {

class StoreFixture : public ::testing::Test {
 protected:
  /// `prefix` names the temporary directory: <tmp>/<prefix>_<test name>.
  explicit StoreFixture(std::string prefix) : prefix_(std::move(prefix)) {}
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           (prefix_ + "_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    RemoveTree(dir_.string());
    std::filesystem::create_directories(dir_);
    db_ = (dir_ / "runx.db").string();
    setenv("RUNX_ARTIFACT_DIR", (dir_ / "artifacts").c_str(), 1);
  }
  void TearDown() override { unsetenv("RUNX_ARTIFACT_DIR"); }

  /// Writes `yaml` to <name>.yaml, runs it, and returns the id of the newest trial.
  int64_t Run(const std::string& yaml, const std::string& name = "exp") {
    const auto p = dir_ / (name + ".yaml");
    std::ofstream(p) << yaml;
    const auto r = Runx(p.string() + " --db " + db_ + " --force -q");
    last_output_ = r.out;
    last_status_ = r.status;
    SQLite::Database db(db_);
    return db.execAndGet("SELECT max(id) FROM trials").getInt64();
  }
  /// The first column of the first row of `sql`, with `trial` bound to its parameter.
  std::string Get(const std::string& sql, int64_t trial) {
    SQLite::Database db(db_);
    SQLite::Statement q(db, sql);
    q.bind(1, trial);
    return q.executeStep() ? q.getColumn(0).getString() : "";
  }
  double Metric(int64_t trial, const std::string& name) {
    const auto v =
        Get("SELECT value FROM metrics WHERE trial_id = ? AND step IS NULL AND name = '" + name + "'", trial);
    return v.empty() ? std::nan("") : std::stod(v);
  }
  std::string Env(int64_t trial, const std::string& key) {
    return Get("SELECT value FROM environment WHERE trial_id = ? AND key = '" + key + "'", trial);
  }
  std::string Status(int64_t trial) { return Get("SELECT status FROM trials WHERE id = ?", trial); }
  std::string Error(int64_t trial) { return Get("SELECT error FROM trials WHERE id = ?", trial); }

  std::filesystem::path dir_;
  std::string db_, last_output_;
  int last_status_ = 0;

 private:
  std::string prefix_;
};

}  // namespace runx::testing

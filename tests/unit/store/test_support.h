#pragma once
// Shared by the store tests: a temporary directory per test and a small, fully known store.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "store/store.h"

namespace runx::store::testing {

/// A fresh directory under the system temp dir, removed after the test.
class TempDirTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;
  /// A path inside the temp dir (nothing is created).
  std::string PathOf(const std::string& name) const { return (dir_ / name).string(); }
  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
};

/// Options of one trial of the example store.
struct ExampleTrial {
  std::string label;
  bool is_baseline = false;
  int repeat_index = 0;
  std::string status = "ok";
  std::string error;
  double samples_per_s = 0;  ///< 0: no metrics at all (a failed trial)
  double step_ms = 0;        ///< measured steps take step_ms, step_ms + 1, ... (5 of them)
};

/// A trial record with 2 warmup and 5 measured steps and the engine's summary metrics.
TrialRecord MakeTrial(int64_t run_id, int order_index, const ExampleTrial& t);

/// Fills `path` with the example store that docs/sql.md describes:
///   experiment 1 'mlp_amp': run 1 (baseline x2, bf16, fp16 incompatible), run 2 (baseline,
///   bf16); experiment 2 'resnet_cl': run 3 (baseline, channels_last); variant_stats of run 1.
void FillExampleStore(const std::string& path);

/// The variant_stats FillExampleStore writes for run 1: what the end-of-sweep report computes
/// from its steps with seed 0 and 2000 resamples (runx_report_test checks that).
std::vector<VariantStatsRow> ExampleVariantStats();

/// Number of rows in `table` of the store at `path`, read with the plain SQLite API.
int64_t CountRows(const std::string& path, const std::string& table);

/// The bytes of a file ("" when it does not exist).
std::string ReadFileBytes(const std::string& path);

/// The checked-in version 2 fixture (data/store_v2.sql, written by the released runx) loaded into
/// a database file at `path`, as that runx left it.
void LoadVersion2Fixture(const std::string& path);

}  // namespace runx::store::testing

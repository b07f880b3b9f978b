#pragma once
// The SQLite results store: one file (default results/runx.db), WAL, schema_version + migrations.
// No LibTorch here. Only the parent runx process writes; `runx query` opens it read-only.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "store/format.h"  // FormatResult, for callers that include only store.h
#include "store/query.h"   // QueryReadOnly, idem

namespace SQLite { class Database; }

namespace runx::store {

/// Expected failures (cannot open, query error, read-only violation): message is user-facing.
class StoreError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct StepRow {
  std::string phase;  ///< "warmup" | "measure" | "eval"
  int64_t step = 0;
  double wall_ms = 0;
  double data_ms = 0;
  int64_t samples = 0;
  std::optional<double> loss;
};

struct MetricRow {
  std::string name;  ///< e.g. samples_per_s, step_ms_median, peak_mem_bytes, accuracy, loss_scale
  double value = 0;
  std::string unit;  ///< "", "ms", "bytes", "samples/s", ...
  std::optional<int64_t> step;  ///< for per-step metrics emitted by techniques
};

/// Everything about one finished (or failed) trial, written in ONE transaction.
struct TrialRecord {
  int64_t sweep_id = 0;
  std::string config_hash;
  std::string config_json;
  std::string label;  ///< e.g. "baseline", "bf16+channels_last"
  bool is_baseline = false;
  int repeat_index = 0;
  int order_index = 0;
  std::string device;  ///< resolved, e.g. "cpu", "cuda:0"
  std::string status;  ///< ok | failed | crashed | oom | timeout | nan | incompatible | skipped
  std::string error;   ///< empty when ok
  std::string started_at;   ///< ISO-8601 UTC, e.g. 2026-12-02T13:08:01Z
  std::string finished_at;
  std::vector<StepRow> steps;
  std::vector<MetricRow> metrics;
  std::map<std::string, std::string> environment;
};

struct SweepInfo {
  int64_t experiment_id = 0;
  std::string started_at;
  std::string host;
  std::string runx_version;
  std::string git_sha;
  std::string command;  ///< the command line that started it
};

/// The figures of one variant (all repeats of one label) of a sweep, as the end-of-sweep report
/// computes them; one row of `variant_stats`. Empty optionals are stored as NULL.
struct VariantStatsRow {
  std::string label;
  bool is_baseline = false;
  int trials = 0;     ///< trials of the variant, whatever their status
  int ok_trials = 0;  ///< of which status 'ok'
  std::optional<double> step_ms_median;  ///< over all measured steps of the ok trials
  std::optional<double> step_ms_p10;
  std::optional<double> step_ms_p90;
  std::optional<double> samples_per_s;    ///< pooled: sum(samples) / sum(wall_ms) * 1000
  std::optional<double> speedup;          ///< vs the baseline; 1 for the baseline itself
  std::optional<double> speedup_ci_low;   ///< 95% bootstrap interval of `speedup`
  std::optional<double> speedup_ci_high;
  std::optional<bool> significant;        ///< the interval excludes 1
  std::optional<double> accuracy_delta;   ///< median accuracy minus the baseline's (absolute)
  std::optional<int64_t> resamples;       ///< bootstrap resamples behind the interval
  std::optional<uint64_t> seed;           ///< bootstrap seed (stored as its int64 bit pattern)
};

/// The schema version this runx writes and understands (the last migration's); a store with a
/// higher version is refused on open.
int LatestSchemaVersion();

/// The values the store accepts for TrialRecord::status, in the order messages list them.
const std::vector<std::string>& TrialStatuses();

class Store {
 public:
  /// Opens (creating the file and its directory if needed) and migrates to the latest schema.
  static Store Open(const std::string& path);
  Store(Store&&) noexcept;
  Store& operator=(Store&&) noexcept;
  ~Store();

  int schema_version() const;
  /// Returns the id of the experiment row for (name, path, sha256), inserting it if new.
  int64_t AddExperiment(const std::string& name, const std::string& path,
                        const std::string& yaml_text, const std::string& sha256);
  int64_t BeginSweep(const SweepInfo& info);
  void EndSweep(int64_t sweep_id, const std::string& status, const std::string& finished_at);
  void AddSweepEnvironment(int64_t sweep_id, const std::map<std::string, std::string>& env);
  /// Writes the trial with its steps, metrics and environment atomically; returns its id.
  int64_t RecordTrial(const TrialRecord& trial);

  /// The latest (highest id) trial, in any sweep, with this configuration hash and status 'ok':
  /// a trial to skip when resuming. Failed, crashed, ... trials never count.
  std::optional<int64_t> FindOkTrial(const std::string& config_hash);
  /// Marks every sweep still 'running' as 'interrupted' (its runx died or was killed), setting
  /// finished_at where it is NULL; returns how many. Call it only while no other runx writes
  /// to this store: a sweep another process is running would be marked too.
  int MarkInterruptedSweeps(const std::string& finished_at);
  /// Replaces the variant_stats rows of `sweep_id` by `rows`, in one transaction.
  void RecordVariantStats(int64_t sweep_id, const std::vector<VariantStatsRow>& rows);

  SQLite::Database& db();
  /// The path the store was opened from.
  const std::string& path() const { return path_; }

 private:
  Store(std::unique_ptr<SQLite::Database> db, std::string path);
  std::unique_ptr<SQLite::Database> db_;
  std::string path_;
};

}  // namespace runx::store

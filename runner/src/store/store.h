#pragma once
// The SQLite results store: one file (default results/runx.db), WAL, schema_version + migrations.
// No LibTorch here. Only the parent runx process writes; `runx query` opens it read-only.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "runx/status.h"
#include "store/format.h"  // FormatResult, for callers that include only store.h
#include "store/query.h"   // QueryReadOnly, idem

namespace SQLite {
class Database;
}

namespace runx::store {

/// Expected failures (cannot open, query error, read-only violation): message is user-facing.
class StoreError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A results store named for reading that does not exist: the user's input was wrong (the
/// command line exits 2 for it, 1 for other StoreErrors).
class MissingStoreError : public StoreError {
 public:
  using StoreError::StoreError;
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
  std::string unit;             ///< "", "ms", "bytes", "samples/s", ...
  std::optional<int64_t> step;  ///< for per-step metrics emitted by techniques
};

/// Everything about one finished (or failed) trial, written in ONE transaction.
struct TrialRecord {
  int64_t run_id = 0;              ///< the run that produced it
  std::string config_hash;         ///< the trial's config identity (docs/design.md)
  std::string env_hash;            ///< its environment identity: runx build + platform
  std::string platform_hash;       ///< the environment without the runx build (LibTorch, CUDA, cuDNN, device)
  std::string inputs_json = "{}";  ///< {"model.path": {"path": ..., "sha256": ...}, ...}
  std::string config_json;
  std::string label;  ///< e.g. "baseline", "bf16+channels_last"
  bool is_baseline = false;
  int repeat_index = 0;
  int order_index = 0;
  std::string device;  ///< resolved, e.g. "cpu", "cuda:0"
  TrialStatus status = TrialStatus::kOk;
  std::string error;         ///< the first line of the failure; empty when ok
  std::string error_detail;  ///< the whole failure text (and the child's stderr tail); may be empty
  std::string started_at;    ///< ISO-8601 UTC, e.g. 2026-12-02T13:08:01Z
  std::string finished_at;
  std::vector<StepRow> steps;
  std::vector<MetricRow> metrics;
  std::map<std::string, std::string> environment;
};

/// What a run is part of and what its user says of it, beyond the experiment and the build.
struct RunContext {
  /// The sweep this run is part of, shared by the runs of one sweep that ran as several runs
  /// (`runx submit`'s array tasks, `--sweep-id`); empty: a sweep of its own (stored as NULL),
  /// unless it is a shard that joins the other shards of its plan on this store (BeginRun).
  std::string sweep_uid;
  /// The commit of the git repository holding the experiment file, without a -dirty suffix;
  /// empty outside a repository.
  std::string user_git_sha;
  std::optional<bool> user_git_dirty;  ///< uncommitted changes to its tracked files
  std::string tag;                     ///< --tag; empty: none
  std::string note;                    ///< --note; empty: none
};

/// One invocation of runx: what ran, with which build, by which process.
struct RunInfo {
  int64_t experiment_id = 0;
  std::string started_at;
  std::string host;
  std::string command;                ///< the command line that started it
  std::string overrides_json = "[]";  ///< the --set values, in order, as a JSON array
  std::string runx_version;
  std::string git_sha;  ///< without a -dirty suffix
  std::optional<bool> git_dirty;
  std::string build_type;     ///< CMake build type, e.g. Release
  std::string runx_build;     ///< build identity: sha256 of the runx binary and its plugins
  int64_t pid = 0;            ///< the runx process
  std::string pid_token;      ///< tells this process from a later one with the same pid
  std::string plan_hash;      ///< identity of the whole (unsharded) plan: its trials' identities
  std::string shard = "0/1";  ///< the part of the plan this run runs (--shard i/n)
  bool force = false;         ///< reuse nothing recorded before this run
  bool any_build = false;     ///< reuse results of other runx builds
  RunContext context;
};

/// Whether the process (host, pid, pid_token) of a run is still alive. Runs of other hosts
/// cannot be checked and must be answered `true`.
using LivenessCheck = std::function<bool(const std::string& host, int64_t pid, const std::string& pid_token)>;

/// What identifies a trial's result: config, environment (or, across builds, platform), repeat.
struct TrialKey {
  std::string config_hash;
  std::string env_hash;
  std::string platform_hash;
  int repeat_index = 0;
};

/// A trial's place in a run's plan.
struct Membership {
  std::string label;
  bool is_baseline = false;
  int repeat_index = 0;
  int order_index = 0;
};

/// What ClaimTrial decided for a planned trial.
enum class ClaimOutcome {
  kClaimed,  ///< this run holds the claim: run the trial, then RecordTrial (which releases it)
  kReused,   ///< an ok result was found and added to this run (trial_id)
  kDone,     ///< this run already has the trial (a resumed run): nothing to do (trial_id)
  kBusy,     ///< another live runner holds the claim: try again later
};
struct Claim {
  ClaimOutcome outcome = ClaimOutcome::kClaimed;
  int64_t trial_id = 0;    ///< kReused, kDone
  int64_t holder_run = 0;  ///< kBusy: the run holding the claim
};

/// An interrupted run that `--resume` continues.
struct ResumableRun {
  int64_t id = 0;
  bool force = false;
  bool any_build = false;
};

/// One trial of a run as the report reads it: its place in the run, its identities, its status
/// and, for ok trials, its measured steps (wall ms, samples; positive wall times only, in step
/// order) and summary metrics.
struct RunTrial {
  int64_t trial_id = 0;
  std::string label;
  bool is_baseline = false;
  int repeat_index = 0;
  bool reused = false;  ///< the run reused it: another run measured it
  TrialStatus status = TrialStatus::kOk;
  std::string config_hash;  ///< '' for trials migrated from a schema 1 or 2 store
  std::string env_hash;
  std::string platform_hash;
  std::string host;   ///< of the run that measured it
  std::string sweep;  ///< the sweep key of the run that measured it (coalesce(sweep_uid, uid))
  std::vector<std::pair<double, double>> measured_steps;
  std::optional<double> peak_mem_bytes;
  std::optional<double> final_loss;
  std::optional<double> accuracy;
  /// What else ran during its measured steps (metrics noise.other_cpus, noise.cpus,
  /// noise.trial_cpus): the CPUs other processes used on average, the machine's CPUs, and the
  /// CPUs the trial's own process used.
  std::optional<double> other_cpus;
  std::optional<double> cpus;
  std::optional<double> trial_cpus;
  /// The energy of its measured steps (metrics joules_per_sample, power_w), where it was metered.
  std::optional<double> joules_per_sample;
  std::optional<double> power_w;
};

/// The figures of one variant (all repeats of one label) of a run, as the end-of-run report
/// computes them; one row of `variant_stats`. Empty optionals are stored as NULL.
struct VariantStatsRow {
  std::string label;
  bool is_baseline = false;
  int trials = 0;                        ///< trials of the variant, whatever their status
  int ok_trials = 0;                     ///< of which status 'ok'
  std::optional<double> step_ms_median;  ///< over all measured steps of the ok trials
  std::optional<double> step_ms_p10;
  std::optional<double> step_ms_p90;
  std::optional<double> samples_per_s;   ///< pooled: sum(samples) / sum(wall_ms) * 1000
  std::optional<double> speedup;         ///< vs the baseline; 1 for the baseline itself
  std::optional<double> speedup_ci_low;  ///< 95% bootstrap interval of `speedup`
  std::optional<double> speedup_ci_high;
  std::optional<bool> significant;       ///< the interval excludes 1
  std::optional<double> accuracy_delta;  ///< median accuracy minus the baseline's (absolute)
  std::optional<std::string> verdict;    ///< faster | slower | no change | inconclusive
  std::optional<double> speedup_se;      ///< standard error of ln(speedup) behind the interval
  std::optional<int64_t> speedup_df;     ///< its degrees of freedom
};

/// How long runx waits for another process's lock on a store (another runner's transaction, a
/// `sqlite3` shell, a backup) before giving up: long enough that a finished trial or a merge is not
/// lost to a lock held for minutes.
inline constexpr int kLockWaitMs = 10 * 60 * 1000;

/// The schema version this runx writes and understands (the last migration's); a store with a
/// higher version is refused on open.
int LatestSchemaVersion();

class Store {
 public:
  /// Opens (creating the file and its directory if needed) and migrates to the latest schema.
  /// A file that is not a runx store is refused before anything in it changes.
  /// `path` is a file's path: `:memory:`, "" and SQLite URIs (`file:...`) are refused (a store
  /// that keeps nothing, or one written somewhere else than the path runx prints).
  static Store Open(const std::string& path);
  /// For commands that only read (history, compare, report): Open where the store and its folder
  /// can be written (an older store is upgraded), else read-only as `runx query` reads (a folder
  /// the user cannot write, read-only media), where a store of an older schema is refused with
  /// the way out. Throws StoreError for a missing store.
  static Store OpenForReading(const std::string& path);
  Store(Store&&) noexcept;
  Store& operator=(Store&&) noexcept;
  ~Store();

  int schema_version() const;
  /// Returns the id of the experiment row for (name, path, sha256), inserting it if new.
  int64_t AddExperiment(const std::string& name, const std::string& path, const std::string& yaml_text,
                        const std::string& sha256);

  /// Starts a run (status 'running'). A forced run reuses no trial recorded before it started.
  /// A shard (shard i/n, n > 1) without a sweep_uid joins the sweep of the newest run of the
  /// same plan and shard count whose sweep has no shard i yet: shards run into one store are one
  /// sweep.
  int64_t BeginRun(const RunInfo& info);
  /// The latest interrupted run of `plan_hash` and `shard`, for --resume.
  std::optional<ResumableRun> FindInterruptedRun(const std::string& plan_hash, const std::string& shard);
  /// --resume: takes the latest interrupted run of (plan_hash, shard) and makes it 'running'
  /// again, owned by (host, pid, pid_token), in one transaction, so two runners never take the
  /// same run; nullopt when there is none.
  std::optional<ResumableRun> ResumeRun(const std::string& plan_hash, const std::string& shard, const std::string& host,
                                        int64_t pid, const std::string& pid_token);
  /// Ends the run with `status` (not kRunning). Releases the run's claims.
  void EndRun(int64_t run_id, RunStatus status, const std::string& finished_at);
  void AddRunEnvironment(int64_t run_id, const std::map<std::string, std::string>& env);
  /// Marks every 'running' run whose process `alive` says is gone as 'interrupted' (finished_at
  /// set where NULL) and drops its claims; returns how many.
  int MarkDeadRuns(const LivenessCheck& alive, const std::string& finished_at);

  /// Decides, atomically against every other runner of this store, what run `run_id` does with
  /// the planned trial `key`: reuse an ok result (same config, environment — or platform when
  /// the run allows any build — and repeat, recorded after the run's reuse floor), wait for
  /// another live runner's claim, or claim it. A claim whose run has died is taken over.
  /// A claim older than `stale_after_s` counts as dead whoever holds it (a runner on another
  /// host, whose process cannot be checked): a trial ends by its timeout well before that.
  Claim ClaimTrial(int64_t run_id, const TrialKey& key, const Membership& place, const LivenessCheck& alive,
                   const std::string& now, double stale_after_s = 1e9);
  /// Drops the claim of `key` if `run_id` holds it (an interrupted trial).
  void ReleaseClaim(int64_t run_id, const TrialKey& key);
  /// Writes the trial with its steps, metrics, environment and its membership in its run, and
  /// releases its claim, atomically; returns its id.
  int64_t RecordTrial(const TrialRecord& trial);

  /// The trials of run `run_id`'s sweep (executed and reused): of the run itself, or, when it is
  /// one of several runs of a sweep (shards, RunInfo::sweep_uid), of all of them, each trial once;
  /// `reused` when a run outside the sweep measured it. Ordered by order_index, then id. Throws
  /// StoreError when there is no such run.
  std::vector<RunTrial> ReadRunTrials(int64_t run_id);
  /// Replaces the variant_stats rows of `run_id` by `rows`, in one transaction.
  void RecordVariantStats(int64_t run_id, const std::vector<VariantStatsRow>& rows);

  /// For tests and the store's own modules only: the SQL connection.
  SQLite::Database& db();
  /// The path the store was opened from.
  const std::string& path() const { return path_; }
  /// Throws StoreError when `path()` no longer names the file opened (deleted, moved or replaced
  /// while runx had it open: what is written now would be lost). RecordTrial and EndRun check.
  void CheckStillAtPath() const;

 private:
  Store(std::unique_ptr<SQLite::Database> db, std::string path);
  std::unique_ptr<SQLite::Database> db_;
  std::string path_;
  uint64_t device_ = 0, inode_ = 0;  ///< the file opened, 0 when unknown
};

}  // namespace runx::store

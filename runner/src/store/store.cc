#include "store/store.h"

#include <SQLiteCpp/SQLiteCpp.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <set>
#include <system_error>
#include <thread>

#include "store/query.h"
#include "store/schema.h"
#include "store/sweeps.h"

namespace runx::store {
namespace {

constexpr int kBusyTimeoutMs = kLockWaitMs;

const std::vector<std::string>& StepPhases() {
  static const std::vector<std::string> kPhases = {"warmup", "measure", "eval"};
  return kPhases;
}

// Throws "<what> 'x' is not one of a, b, c" unless `value` is in `allowed`.
void CheckOneOf(const std::string& what, const std::string& value, const std::vector<std::string>& allowed) {
  if (std::find(allowed.begin(), allowed.end(), value) != allowed.end()) return;
  throw StoreError(
      fmt::format("{} '{}' is not one of {}", what, value, fmt::join(allowed.begin(), allowed.end(), ", ")));
}

// The status a trials row holds; a text this runx does not know is a damaged store.
TrialStatus ReadTrialStatus(const std::string& text, int64_t trial_id) {
  if (auto status = ParseTrialStatus(text)) return *status;
  throw StoreError(fmt::format("trial {} has the unknown status '{}'", trial_id, text));
}

// Binds a text that means "unknown" when empty as NULL.
void BindTextOrNull(SQLite::Statement& s, int index, const std::string& text) {
  if (text.empty()) {
    s.bind(index);
  } else {
    s.bind(index, text);
  }
}

void CreateParentDirectories(const std::string& path) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (parent.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(parent, ec);
  if (ec) {
    throw StoreError(
        fmt::format("cannot create the directory '{}' for the results store: {}", parent.string(), ec.message()));
  }
}

}  // namespace

int LatestSchemaVersion() { return Migrations().back().version; }

namespace {

void CheckStorePath(const std::string& path) {
  if (path.empty()) throw StoreError("the results store's path is empty: give --db PATH");
  if (path == ":memory:" || path.rfind("file:", 0) == 0)
    throw StoreError(
        fmt::format("'{}' is not a file path: runx keeps results in a file, and SQLite reads this as "
                    "{}; give the store's path (e.g. --db results/runx.db)",
                    path, path == ":memory:" ? "an in-memory database that keeps nothing" : "a URI"));
}

}  // namespace

Store Store::Open(const std::string& path) {
  CheckStorePath(path);
  CreateParentDirectories(path);
  // Opening may meet another runner creating or migrating the same store: switching a new file
  // to WAL and upgrading a read to a write return SQLITE_BUSY at once (SQLite skips the busy
  // handler where waiting could deadlock), so the whole opening is retried until the busy timeout.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kBusyTimeoutMs);
  for (int attempt = 0;; ++attempt) {
    std::unique_ptr<SQLite::Database> db;
    const char* doing = "open";
    try {
      db = std::make_unique<SQLite::Database>(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE, kBusyTimeoutMs);
      // Reading the schema is the first thing to touch the file: a file that is not a database,
      // or a database that is not a runx store, is refused before anything in it changes.
      ReadSchemaVersion(*db, path);
      db->exec("PRAGMA journal_mode = WAL");
      db->exec("PRAGMA synchronous = NORMAL");
      db->exec("PRAGMA foreign_keys = ON");
      doing = "read";
      Migrate(*db, Migrations(), path);
      return Store(std::move(db), path);
    } catch (const SQLite::Exception& e) {
      const int code = e.getErrorCode() & 0xff;
      if ((code == SQLITE_BUSY || code == SQLITE_LOCKED) && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(std::min(200, 5 << std::min(attempt, 6))));
        continue;
      }
      throw StoreError(fmt::format("cannot {} results store '{}': {}", doing, path, e.what()));
    }
  }
}

Store Store::OpenForReading(const std::string& path) {
  CheckStorePath(path);
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw StoreError(fmt::format("no results store at '{}' (--db names another)", path));
  const std::string dir = std::filesystem::absolute(path).parent_path().string();
  if (::access(path.c_str(), W_OK) == 0 && ::access(dir.c_str(), W_OK) == 0) return Open(path);
  const ReadOnlyOpening opening = ReadOnlyOpeningOf(path, "open the copy");
  try {
    auto db =
        std::make_unique<SQLite::Database>(opening.name, SQLite::OPEN_READONLY | SQLite::OPEN_URI, kBusyTimeoutMs);
    db->exec("PRAGMA query_only = ON");
    const int version = ReadSchemaVersion(*db, path);
    if (version != LatestSchemaVersion())
      throw StoreError(
          fmt::format("results store '{}' has schema version {} and this runx reads version {}; it cannot "
                      "be upgraded where it is (read-only): copy it to a writable place and open the copy",
                      path, version, LatestSchemaVersion()));
    return Store(std::move(db), path);
  } catch (const SQLite::Exception& e) {
    throw StoreError(fmt::format("cannot read results store '{}': {}", path, e.what()));
  }
}

Store::Store(std::unique_ptr<SQLite::Database> db, std::string path) : db_(std::move(db)), path_(std::move(path)) {
  struct stat st {};
  if (::stat(path_.c_str(), &st) == 0) {
    device_ = static_cast<uint64_t>(st.st_dev);
    inode_ = static_cast<uint64_t>(st.st_ino);
  }
}

void Store::CheckStillAtPath() const {
  if (inode_ == 0) return;
  struct stat st {};
  if (::stat(path_.c_str(), &st) == 0 && static_cast<uint64_t>(st.st_dev) == device_ &&
      static_cast<uint64_t>(st.st_ino) == inode_)
    return;
  throw StoreError(
      fmt::format("the results store '{}' was {} while runx had it open: what runx writes now "
                  "would be lost",
                  path_, ::access(path_.c_str(), F_OK) == 0 ? "replaced" : "deleted or moved"));
}
Store::Store(Store&&) noexcept = default;
Store& Store::operator=(Store&&) noexcept = default;
Store::~Store() = default;

SQLite::Database& Store::db() { return *db_; }

int Store::schema_version() const { return ReadSchemaVersion(*db_, path_); }

int64_t Store::AddExperiment(const std::string& name, const std::string& path, const std::string& yaml_text,
                             const std::string& sha256) {
  try {
    SQLite::Transaction tx(*db_, SQLite::TransactionBehavior::IMMEDIATE);
    SQLite::Statement insert(*db_,
                             "INSERT INTO experiments (name, path, sha256, yaml) "
                             "VALUES (?, ?, ?, ?) ON CONFLICT (name, path, sha256) DO NOTHING");
    insert.bind(1, name);
    insert.bind(2, path);
    insert.bind(3, sha256);
    insert.bind(4, yaml_text);
    insert.exec();
    SQLite::Statement find(*db_, "SELECT id FROM experiments WHERE name = ? AND path = ? AND sha256 = ?");
    find.bind(1, name);
    find.bind(2, path);
    find.bind(3, sha256);
    find.executeStep();
    const int64_t id = find.getColumn(0).getInt64();
    tx.commit();
    return id;
  } catch (const SQLite::Exception& e) {
    throw StoreError(fmt::format("cannot record experiment '{}' in '{}': {}", name, path_, e.what()));
  }
}

namespace {

// The sweep a shard joins: that of the newest run of its plan and shard count whose sweep has no
// run of this shard yet; "" for a run that is not a shard or finds none.
std::string JoinedSweep(SQLite::Database& db, const RunInfo& info) {
  const size_t slash = info.shard.find('/');
  if (slash == std::string::npos || info.shard.substr(slash + 1) == "1") return "";
  SQLite::Statement q(db,
                      "SELECT " RUNX_SWEEP_KEY("r") " FROM runs r WHERE r.plan_hash = ?1 AND r.shard <> ?2 "
                      "AND substr(r.shard, instr(r.shard, '/')) = ?3 AND NOT EXISTS (SELECT 1 FROM runs o WHERE "
                      RUNX_SWEEP_KEY("o") " = " RUNX_SWEEP_KEY("r") " AND o.shard = ?2) "
                      "ORDER BY r.started_at DESC, r.id DESC LIMIT 1");
  q.bind(1, info.plan_hash);
  q.bind(2, info.shard);
  q.bind(3, info.shard.substr(slash));
  return q.executeStep() ? q.getColumn(0).getString() : "";
}

}  // namespace

int64_t Store::BeginRun(const RunInfo& info) {
  try {
    SQLite::Transaction tx(*db_, SQLite::TransactionBehavior::IMMEDIATE);
    // A forced run reuses nothing that existed when it started: trials up to the floor.
    const int64_t floor = info.force ? db_->execAndGet("SELECT coalesce(max(id), 0) FROM trials").getInt64() : 0;
    SQLite::Statement insert(
        *db_,
        "INSERT INTO runs (experiment_id, started_at, status, host, runx_version, git_sha, "
        "command, overrides, git_dirty, build_type, runx_build, pid, pid_token, plan_hash, "
        "reuse_floor, any_build, force, shard, sweep_uid, user_git_sha, user_git_dirty, tag, note) "
        "VALUES (?, ?, 'running', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    insert.bind(1, info.experiment_id);
    insert.bind(2, info.started_at);
    insert.bind(3, info.host);
    insert.bind(4, info.runx_version);
    insert.bind(5, info.git_sha);
    insert.bind(6, info.command);
    insert.bind(7, info.overrides_json);
    if (info.git_dirty) {
      insert.bind(8, *info.git_dirty ? 1 : 0);
    } else {
      insert.bind(8);
    }
    insert.bind(9, info.build_type);
    insert.bind(10, info.runx_build);
    insert.bind(11, info.pid);
    insert.bind(12, info.pid_token);
    insert.bind(13, info.plan_hash);
    insert.bind(14, floor);
    insert.bind(15, info.any_build ? 1 : 0);
    insert.bind(16, info.force ? 1 : 0);
    insert.bind(17, info.shard);
    const auto text_or_null = [&](int index, const std::string& text) {
      if (text.empty()) {
        insert.bind(index);
      } else {
        insert.bind(index, text);
      }
    };
    const RunContext& c = info.context;
    text_or_null(18, c.sweep_uid.empty() ? JoinedSweep(*db_, info) : c.sweep_uid);
    text_or_null(19, c.user_git_sha);
    if (c.user_git_dirty) {
      insert.bind(20, *c.user_git_dirty ? 1 : 0);
    } else {
      insert.bind(20);
    }
    text_or_null(21, c.tag);
    text_or_null(22, c.note);
    insert.exec();
    const int64_t id = db_->getLastInsertRowid();
    tx.commit();
    return id;
  } catch (const SQLite::Exception& e) {
    throw StoreError(
        fmt::format("cannot record a run of experiment {} in '{}': {}", info.experiment_id, path_, e.what()));
  }
}

std::optional<ResumableRun> Store::FindInterruptedRun(const std::string& plan_hash, const std::string& shard) {
  try {
    SQLite::Statement q(*db_,
                        "SELECT id, force, any_build FROM runs WHERE plan_hash = ? AND shard = ? "
                        "AND status = 'interrupted' ORDER BY id DESC LIMIT 1");
    q.bind(1, plan_hash);
    q.bind(2, shard);
    if (!q.executeStep()) return std::nullopt;
    return ResumableRun{q.getColumn(0).getInt64(), q.getColumn(1).getInt() != 0, q.getColumn(2).getInt() != 0};
  } catch (const SQLite::Exception& e) {
    throw StoreError(fmt::format("cannot look for an interrupted run in '{}': {}", path_, e.what()));
  }
}

std::optional<ResumableRun> Store::ResumeRun(const std::string& plan_hash, const std::string& shard,
                                             const std::string& host, int64_t pid, const std::string& pid_token) {
  try {
    SQLite::Transaction tx(*db_, SQLite::TransactionBehavior::IMMEDIATE);
    const auto run = FindInterruptedRun(plan_hash, shard);
    if (!run) return std::nullopt;
    SQLite::Statement q(*db_,
                        "UPDATE runs SET status = 'running', finished_at = NULL, host = ?, pid = ?, "
                        "pid_token = ? WHERE id = ? AND status = 'interrupted'");
    q.bind(1, host);
    q.bind(2, pid);
    q.bind(3, pid_token);
    q.bind(4, run->id);
    q.exec();
    tx.commit();
    return run;
  } catch (const SQLite::Exception& e) {
    throw StoreError(fmt::format("cannot resume a run in '{}': {}", path_, e.what()));
  }
}

void Store::EndRun(int64_t run_id, RunStatus status, const std::string& finished_at) {
  if (status == RunStatus::kRunning) throw StoreError(fmt::format("run {} cannot end as 'running'", run_id));
  CheckStillAtPath();
  int changed = 0;
  try {
    SQLite::Transaction tx(*db_, SQLite::TransactionBehavior::IMMEDIATE);
    SQLite::Statement update(*db_, "UPDATE runs SET status = ?, finished_at = ? WHERE id = ?");
    update.bind(1, std::string(Name(status)));
    BindTextOrNull(update, 2, finished_at);
    update.bind(3, run_id);
    changed = update.exec();
    SQLite::Statement release(*db_, "DELETE FROM claims WHERE run_id = ?");
    release.bind(1, run_id);
    release.exec();
    tx.commit();
  } catch (const SQLite::Exception& e) {
    throw StoreError(fmt::format("cannot end run {} in '{}': {}", run_id, path_, e.what()));
  }
  if (changed == 0) {
    throw StoreError(fmt::format("cannot end run {} in '{}': no such run", run_id, path_));
  }
}

void Store::AddRunEnvironment(int64_t run_id, const std::map<std::string, std::string>& env) {
  try {
    SQLite::Transaction tx(*db_, SQLite::TransactionBehavior::IMMEDIATE);
    // A key recorded again replaces its value (the unique index is on (run_id, key)).
    SQLite::Statement insert(*db_,
                             "INSERT OR REPLACE INTO environment (run_id, trial_id, key, value) "
                             "VALUES (?, NULL, ?, ?)");
    for (const auto& [key, value] : env) {
      insert.bind(1, run_id);
      insert.bind(2, key);
      insert.bind(3, value);
      insert.exec();
      insert.reset();
    }
    tx.commit();
  } catch (const SQLite::Exception& e) {
    throw StoreError(fmt::format("cannot record the environment of run {} in '{}': {}", run_id, path_, e.what()));
  }
}

namespace {

struct Owner {
  int64_t run_id = 0;
  std::string host;
  int64_t pid = 0;
  std::string token;
};

// Runs still 'running', with their owners.
std::vector<Owner> RunningRuns(SQLite::Database& db) {
  std::vector<Owner> out;
  SQLite::Statement q(db, "SELECT id, host, coalesce(pid, 0), pid_token FROM runs WHERE status = 'running'");
  while (q.executeStep()) {
    out.push_back(
        {q.getColumn(0).getInt64(), q.getColumn(1).getString(), q.getColumn(2).getInt64(), q.getColumn(3).getString()});
  }
  return out;
}

// Marks run `id` interrupted and drops its claims (inside the caller's transaction).
void Interrupt(SQLite::Database& db, int64_t id, const std::string& finished_at) {
  SQLite::Statement update(db,
                           "UPDATE runs SET status = 'interrupted', "
                           "finished_at = coalesce(finished_at, ?) WHERE id = ?");
  BindTextOrNull(update, 1, finished_at);
  update.bind(2, id);
  update.exec();
  SQLite::Statement release(db, "DELETE FROM claims WHERE run_id = ?");
  release.bind(1, id);
  release.exec();
}

}  // namespace

int Store::MarkDeadRuns(const LivenessCheck& alive, const std::string& finished_at) {
  try {
    SQLite::Transaction tx(*db_, SQLite::TransactionBehavior::IMMEDIATE);
    int n = 0;
    for (const Owner& o : RunningRuns(*db_)) {
      if (alive(o.host, o.pid, o.token)) continue;
      Interrupt(*db_, o.run_id, finished_at);
      ++n;
    }
    tx.commit();
    return n;
  } catch (const SQLite::Exception& e) {
    throw StoreError(fmt::format("cannot mark interrupted runs in '{}': {}", path_, e.what()));
  }
}

namespace {

// Adds trial `trial_id` to run `run_id` at `place` (nothing when it is already there).
void AddMember(SQLite::Database& db, int64_t run_id, int64_t trial_id, const Membership& place, bool reused) {
  SQLite::Statement insert(db,
                           "INSERT OR IGNORE INTO run_trials (run_id, trial_id, label, is_baseline, "
                           "repeat_index, order_index, reused) VALUES (?, ?, ?, ?, ?, ?, ?)");
  insert.bind(1, run_id);
  insert.bind(2, trial_id);
  insert.bind(3, place.label);
  insert.bind(4, place.is_baseline ? 1 : 0);
  insert.bind(5, place.repeat_index);
  insert.bind(6, place.order_index);
  insert.bind(7, reused ? 1 : 0);
  insert.exec();
}

// Drops the claim of (config_hash, env_hash, repeat_index) held by run `run_id`.
void DeleteClaim(SQLite::Database& db, const std::string& config_hash, const std::string& env_hash, int repeat_index,
                 int64_t run_id) {
  SQLite::Statement release(db,
                            "DELETE FROM claims WHERE config_hash = ? AND env_hash = ? "
                            "AND repeat_index = ? AND run_id = ?");
  release.bind(1, config_hash);
  release.bind(2, env_hash);
  release.bind(3, repeat_index);
  release.bind(4, run_id);
  release.exec();
}

}  // namespace

Claim Store::ClaimTrial(int64_t run_id, const TrialKey& key, const Membership& place, const LivenessCheck& alive,
                        const std::string& now, double stale_after_s) {
  try {
    SQLite::Transaction tx(*db_, SQLite::TransactionBehavior::IMMEDIATE);
    // 1. A resumed run that has this trial already.
    SQLite::Statement member(*db_,
                             "SELECT t.id FROM run_trials rt JOIN trials t ON t.id = rt.trial_id "
                             "WHERE rt.run_id = ? AND rt.order_index = ? AND rt.repeat_index = ? "
                             "AND t.config_hash = ? LIMIT 1");
    member.bind(1, run_id);
    member.bind(2, place.order_index);
    member.bind(3, place.repeat_index);
    member.bind(4, key.config_hash);
    if (member.executeStep()) return {ClaimOutcome::kDone, member.getColumn(0).getInt64(), 0};

    // 2. An ok result to reuse: same config, environment (or platform, across builds), repeat.
    SQLite::Statement run(*db_, "SELECT reuse_floor, any_build FROM runs WHERE id = ?");
    run.bind(1, run_id);
    if (!run.executeStep()) throw StoreError(fmt::format("no run {} in '{}'", run_id, path_));
    const int64_t floor = run.getColumn(0).getInt64();
    const bool any_build = run.getColumn(1).getInt() != 0;
    // Results and claims match on the environment, or on the platform for a run of any build.
    const char* env_column = any_build ? "platform_hash" : "env_hash";
    SQLite::Statement ok(*db_, fmt::format("SELECT id FROM trials WHERE config_hash = ? AND {} = ? "
                                           "AND repeat_index = ? AND status = 'ok' AND id > ? "
                                           "ORDER BY id DESC LIMIT 1",
                                           env_column));
    ok.bind(1, key.config_hash);
    ok.bind(2, any_build ? key.platform_hash : key.env_hash);
    ok.bind(3, key.repeat_index);
    ok.bind(4, floor);
    if (ok.executeStep()) {
      const int64_t trial_id = ok.getColumn(0).getInt64();
      AddMember(*db_, run_id, trial_id, place, true);
      tx.commit();
      return {ClaimOutcome::kReused, trial_id, 0};
    }

    // 3. Another runner's claim on the same trial: wait while its run lives, take it over when
    // its process died (its run is then interrupted) or the claim went stale (a runner on another
    // host, whose run keeps its status: that host's next runx decides).
    SQLite::Statement held(*db_, fmt::format("SELECT c.run_id, r.status, r.host, coalesce(r.pid, 0), r.pid_token, "
                                             "(julianday(?) - julianday(c.claimed_at)) * 86400.0, c.env_hash "
                                             "FROM claims c JOIN runs r ON r.id = c.run_id "
                                             "WHERE c.config_hash = ? AND c.{} = ? AND c.repeat_index = ?",
                                             env_column));
    held.bind(1, now);
    held.bind(2, key.config_hash);
    held.bind(3, any_build ? key.platform_hash : key.env_hash);
    held.bind(4, key.repeat_index);
    struct Dead {
      int64_t run;
      std::string env_hash;
      bool process_gone;
    };
    std::vector<Dead> dead;
    while (held.executeStep()) {
      const int64_t holder = held.getColumn(0).getInt64();
      if (holder == run_id) continue;
      const bool running = held.getColumn(1).getString() == "running";
      const bool process_alive =
          alive(held.getColumn(2).getString(), held.getColumn(3).getInt64(), held.getColumn(4).getString());
      const double age_s = held.getColumn(5).isNull() ? 0.0 : held.getColumn(5).getDouble();
      if (running && process_alive && age_s <= stale_after_s) return {ClaimOutcome::kBusy, 0, holder};
      dead.push_back({holder, held.getColumn(6).getString(), running && !process_alive});
    }
    held.reset();
    for (const Dead& d : dead) {
      DeleteClaim(*db_, key.config_hash, d.env_hash, key.repeat_index, d.run);
      if (d.process_gone) Interrupt(*db_, d.run, now);
    }
    SQLite::Statement claim(*db_,
                            "INSERT OR REPLACE INTO claims (config_hash, env_hash, repeat_index, "
                            "run_id, claimed_at, platform_hash) VALUES (?, ?, ?, ?, ?, ?)");
    claim.bind(1, key.config_hash);
    claim.bind(2, key.env_hash);
    claim.bind(3, key.repeat_index);
    claim.bind(4, run_id);
    claim.bind(5, now);
    claim.bind(6, key.platform_hash);
    claim.exec();
    tx.commit();
    return {ClaimOutcome::kClaimed, 0, 0};
  } catch (const SQLite::Exception& e) {
    throw StoreError(fmt::format("cannot claim trial '{}' (repeat {}) for run {} in '{}': {}", place.label,
                                 place.repeat_index, run_id, path_, e.what()));
  }
}

void Store::ReleaseClaim(int64_t run_id, const TrialKey& key) {
  try {
    DeleteClaim(*db_, key.config_hash, key.env_hash, key.repeat_index, run_id);
  } catch (const SQLite::Exception& e) {
    throw StoreError(fmt::format("cannot release a claim of run {} in '{}': {}", run_id, path_, e.what()));
  }
}

int64_t Store::RecordTrial(const TrialRecord& trial) {
  const auto context = [&] {
    return fmt::format("cannot record trial '{}' (repeat {}) of run {} in '{}'", trial.label, trial.repeat_index,
                       trial.run_id, path_);
  };
  try {
    CheckStillAtPath();
  } catch (const StoreError& e) {
    throw StoreError(fmt::format("{}: {}", context(), e.what()));
  }
  try {
    for (const StepRow& s : trial.steps) CheckOneOf("step phase", s.phase, StepPhases());
  } catch (const StoreError& e) {
    throw StoreError(fmt::format("{}: {}", context(), e.what()));
  }
  try {
    // One transaction: a failure anywhere below leaves no trace of the trial.
    SQLite::Transaction tx(*db_, SQLite::TransactionBehavior::IMMEDIATE);
    SQLite::Statement insert_trial(
        *db_,
        "INSERT INTO trials (run_id, config_hash, config_json, label, is_baseline, "
        "repeat_index, order_index, device, status, error, started_at, finished_at, env_hash, "
        "platform_hash, inputs, error_detail) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    insert_trial.bind(1, trial.run_id);
    insert_trial.bind(2, trial.config_hash);
    insert_trial.bind(3, trial.config_json);
    insert_trial.bind(4, trial.label);
    insert_trial.bind(5, trial.is_baseline ? 1 : 0);
    insert_trial.bind(6, trial.repeat_index);
    insert_trial.bind(7, trial.order_index);
    insert_trial.bind(8, trial.device);
    insert_trial.bind(9, std::string(Name(trial.status)));
    BindTextOrNull(insert_trial, 10, trial.error);
    BindTextOrNull(insert_trial, 11, trial.started_at);
    BindTextOrNull(insert_trial, 12, trial.finished_at);
    insert_trial.bind(13, trial.env_hash);
    insert_trial.bind(14, trial.platform_hash);
    insert_trial.bind(15, trial.inputs_json.empty() ? std::string("{}") : trial.inputs_json);
    BindTextOrNull(insert_trial, 16, trial.error_detail);
    insert_trial.exec();
    const int64_t trial_id = db_->getLastInsertRowid();

    SQLite::Statement insert_step(*db_,
                                  "INSERT INTO steps (trial_id, phase, step, wall_ms, data_ms, samples, loss) "
                                  "VALUES (?, ?, ?, ?, ?, ?, ?)");
    for (const StepRow& s : trial.steps) {
      insert_step.bind(1, trial_id);
      insert_step.bind(2, s.phase);
      insert_step.bind(3, s.step);
      insert_step.bind(4, s.wall_ms);
      insert_step.bind(5, s.data_ms);
      insert_step.bind(6, s.samples);
      if (s.loss) {
        insert_step.bind(7, *s.loss);
      } else {
        insert_step.bind(7);
      }
      insert_step.exec();
      insert_step.reset();
    }

    SQLite::Statement insert_metric(*db_,
                                    "INSERT INTO metrics (trial_id, name, value, unit, step) VALUES (?, ?, ?, ?, ?)");
    for (const MetricRow& m : trial.metrics) {
      insert_metric.bind(1, trial_id);
      insert_metric.bind(2, m.name);
      insert_metric.bind(3, m.value);  // SQLite stores NaN as NULL
      insert_metric.bind(4, m.unit);
      if (m.step) {
        insert_metric.bind(5, *m.step);
      } else {
        insert_metric.bind(5);
      }
      insert_metric.exec();
      insert_metric.reset();
    }

    SQLite::Statement insert_env(*db_, "INSERT INTO environment (run_id, trial_id, key, value) VALUES (?, ?, ?, ?)");
    for (const auto& [key, value] : trial.environment) {
      insert_env.bind(1, trial.run_id);
      insert_env.bind(2, trial_id);
      insert_env.bind(3, key);
      insert_env.bind(4, value);
      insert_env.exec();
      insert_env.reset();
    }

    AddMember(*db_, trial.run_id, trial_id, {trial.label, trial.is_baseline, trial.repeat_index, trial.order_index},
              false);
    DeleteClaim(*db_, trial.config_hash, trial.env_hash, trial.repeat_index, trial.run_id);

    tx.commit();
    return trial_id;
  } catch (const SQLite::Exception& e) {
    throw StoreError(fmt::format("{}: {}", context(), e.what()));
  }
}

std::vector<RunTrial> Store::ReadRunTrials(int64_t run_id) {
  std::vector<RunTrial> out;
  try {
    SQLite::Statement run(*db_, "SELECT 1 FROM runs WHERE id = ?");
    run.bind(1, run_id);
    if (!run.executeStep()) {
      throw StoreError(fmt::format("no run {} in results store '{}'", run_id, path_));
    }
    // The trials of the run's sweep (its own when it ran alone), each once: a trial that two
    // shards share is reused by one of them. Reused means measured outside the sweep.
    SQLite::Statement trials(*db_,
                             "SELECT t.id, rt.label, rt.is_baseline, t.status, rt.repeat_index, "
                             "t.run_id NOT IN " RUNX_SWEEP_RUNS_OF("?1") ", "
                             "coalesce(t.config_hash, ''), coalesce(t.env_hash, ''), coalesce(t.platform_hash, ''), "
                             "coalesce(m.host, ''), coalesce(" RUNX_SWEEP_KEY("m") ", '') "
                             "FROM run_trials rt JOIN trials t ON t.id = rt.trial_id LEFT JOIN runs m ON m.id = t.run_id "
                             "WHERE rt.run_id IN " RUNX_SWEEP_RUNS_OF("?1") " ORDER BY rt.order_index, t.id");
    trials.bind(1, run_id);
    // A trial once per variant: shards share a trial under one label; two variants that are one
    // configuration (identical data at two paths) share it under two.
    std::set<std::pair<int64_t, std::string>> seen;
    SQLite::Statement steps(*db_,
                            "SELECT wall_ms, samples FROM steps WHERE trial_id = ? "
                            "AND phase = 'measure' AND wall_ms > 0 ORDER BY step");
    SQLite::Statement metrics(*db_,
                              "SELECT name, value FROM metrics WHERE trial_id = ? AND step IS NULL "
                              "AND value IS NOT NULL "
                              "AND name IN ('peak_mem_bytes', 'final_loss', 'accuracy', 'noise.other_cpus', "
                              "'noise.cpus', 'noise.trial_cpus', 'joules_per_sample', 'power_w')");
    while (trials.executeStep()) {
      RunTrial t;
      t.trial_id = trials.getColumn(0).getInt64();
      t.label = trials.getColumn(1).getString();
      if (!seen.insert({t.trial_id, t.label}).second) continue;
      t.is_baseline = trials.getColumn(2).getInt() != 0;
      t.status = ReadTrialStatus(trials.getColumn(3).getString(), t.trial_id);
      t.repeat_index = trials.getColumn(4).getInt();
      t.reused = trials.getColumn(5).getInt() != 0;
      t.config_hash = trials.getColumn(6).getString();
      t.env_hash = trials.getColumn(7).getString();
      t.platform_hash = trials.getColumn(8).getString();
      t.host = trials.getColumn(9).getString();
      t.sweep = trials.getColumn(10).getString();
      if (t.status == TrialStatus::kOk) {
        steps.bind(1, t.trial_id);
        while (steps.executeStep()) {
          t.measured_steps.emplace_back(steps.getColumn(0).getDouble(), steps.getColumn(1).getDouble());
        }
        steps.reset();
        metrics.bind(1, t.trial_id);
        while (metrics.executeStep()) {
          const std::string name = metrics.getColumn(0).getString();
          const double value = metrics.getColumn(1).getDouble();
          if (name == "peak_mem_bytes") t.peak_mem_bytes = value;
          if (name == "final_loss") t.final_loss = value;
          if (name == "accuracy") t.accuracy = value;
          if (name == "noise.other_cpus") t.other_cpus = value;
          if (name == "noise.cpus") t.cpus = value;
          if (name == "noise.trial_cpus") t.trial_cpus = value;
          if (name == "joules_per_sample") t.joules_per_sample = value;
          if (name == "power_w") t.power_w = value;
        }
        metrics.reset();
      }
      out.push_back(std::move(t));
    }
  } catch (const SQLite::Exception& e) {
    throw StoreError(fmt::format("cannot read run {} from results store '{}': {}", run_id, path_, e.what()));
  }
  return out;
}

namespace {

template <typename T>
void BindOptional(SQLite::Statement& s, int index, const std::optional<T>& value) {
  if (value) {
    s.bind(index, *value);
  } else {
    s.bind(index);
  }
}

}  // namespace

void Store::RecordVariantStats(int64_t run_id, const std::vector<VariantStatsRow>& rows) {
  try {
    SQLite::Transaction tx(*db_, SQLite::TransactionBehavior::IMMEDIATE);
    SQLite::Statement clear(*db_, "DELETE FROM variant_stats WHERE run_id = ?");
    clear.bind(1, run_id);
    clear.exec();
    SQLite::Statement insert(*db_,
                             "INSERT INTO variant_stats (run_id, label, is_baseline, trials, ok_trials, "
                             "step_ms_median, step_ms_p10, step_ms_p90, samples_per_s, speedup, speedup_ci_low, "
                             "speedup_ci_high, significant, accuracy_delta, verdict, speedup_se, speedup_df) "
                             "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    for (const VariantStatsRow& r : rows) {
      insert.bind(1, run_id);
      insert.bind(2, r.label);
      insert.bind(3, r.is_baseline ? 1 : 0);
      insert.bind(4, r.trials);
      insert.bind(5, r.ok_trials);
      BindOptional(insert, 6, r.step_ms_median);
      BindOptional(insert, 7, r.step_ms_p10);
      BindOptional(insert, 8, r.step_ms_p90);
      BindOptional(insert, 9, r.samples_per_s);
      BindOptional(insert, 10, r.speedup);
      BindOptional(insert, 11, r.speedup_ci_low);
      BindOptional(insert, 12, r.speedup_ci_high);
      BindOptional(insert, 13, r.significant ? std::optional<int>(*r.significant ? 1 : 0) : std::nullopt);
      BindOptional(insert, 14, r.accuracy_delta);
      BindOptional(insert, 15, r.verdict);
      BindOptional(insert, 16, r.speedup_se);
      BindOptional(insert, 17, r.speedup_df);
      insert.exec();
      insert.reset();
    }
    tx.commit();
  } catch (const SQLite::Exception& e) {
    throw StoreError(fmt::format("cannot record the variant figures of run {} in '{}': {}", run_id, path_, e.what()));
  }
}

}  // namespace runx::store

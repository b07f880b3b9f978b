#include "store/store.h"

#include <SQLiteCpp/SQLiteCpp.h>
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "store/schema.h"

namespace runx::store {
namespace {

constexpr int kBusyTimeoutMs = 5000;

const std::vector<std::string>& StepPhases() {
  static const std::vector<std::string> kPhases = {"warmup", "measure", "eval"};
  return kPhases;
}

const std::vector<std::string>& SweepStatuses() {
  static const std::vector<std::string> kStatuses = {"running", "ok", "failed", "interrupted"};
  return kStatuses;
}

// Throws "<what> 'x' is not one of a, b, c" unless `value` is in `allowed`.
void CheckOneOf(const std::string& what, const std::string& value,
                const std::vector<std::string>& allowed) {
  if (std::find(allowed.begin(), allowed.end(), value) != allowed.end()) return;
  throw StoreError(fmt::format("{} '{}' is not one of {}", what, value,
                               fmt::join(allowed.begin(), allowed.end(), ", ")));
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
    throw StoreError(fmt::format("cannot create the directory '{}' for the results store: {}",
                                 parent.string(), ec.message()));
  }
}

}  // namespace

int LatestSchemaVersion() { return Migrations().back().version; }

const std::vector<std::string>& TrialStatuses() {
  static const std::vector<std::string> kStatuses = {
      "ok", "failed", "crashed", "oom", "timeout", "nan", "incompatible", "skipped"};
  return kStatuses;
}

Store Store::Open(const std::string& path) {
  CreateParentDirectories(path);
  std::unique_ptr<SQLite::Database> db;
  try {
    db = std::make_unique<SQLite::Database>(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE,
                                            kBusyTimeoutMs);
    // journal_mode is the first statement to touch the file, so it is where a file that is
    // not a database is noticed.
    db->exec("PRAGMA journal_mode = WAL");
    db->exec("PRAGMA synchronous = NORMAL");
    db->exec("PRAGMA foreign_keys = ON");
  } catch (const SQLite::Exception& e) {
    throw StoreError(fmt::format("cannot open results store '{}': {}", path, e.what()));
  }
  try {
    Migrate(*db, Migrations(), path);
  } catch (const SQLite::Exception& e) {
    throw StoreError(fmt::format("cannot read results store '{}': {}", path, e.what()));
  }
  return Store(std::move(db), path);
}

Store::Store(std::unique_ptr<SQLite::Database> db, std::string path)
    : db_(std::move(db)), path_(std::move(path)) {}
Store::Store(Store&&) noexcept = default;
Store& Store::operator=(Store&&) noexcept = default;
Store::~Store() = default;

SQLite::Database& Store::db() { return *db_; }

int Store::schema_version() const { return ReadSchemaVersion(*db_, path_); }

int64_t Store::AddExperiment(const std::string& name, const std::string& path,
                             const std::string& yaml_text, const std::string& sha256) {
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
    SQLite::Statement find(*db_,
                           "SELECT id FROM experiments WHERE name = ? AND path = ? AND sha256 = ?");
    find.bind(1, name);
    find.bind(2, path);
    find.bind(3, sha256);
    find.executeStep();
    const int64_t id = find.getColumn(0).getInt64();
    tx.commit();
    return id;
  } catch (const SQLite::Exception& e) {
    throw StoreError(
        fmt::format("cannot record experiment '{}' in '{}': {}", name, path_, e.what()));
  }
}

int64_t Store::BeginSweep(const SweepInfo& info) {
  try {
    SQLite::Statement insert(
        *db_,
        "INSERT INTO sweeps (experiment_id, started_at, status, host, "
        "runx_version, git_sha, command) VALUES (?, ?, 'running', ?, ?, ?, ?)");
    insert.bind(1, info.experiment_id);
    insert.bind(2, info.started_at);
    insert.bind(3, info.host);
    insert.bind(4, info.runx_version);
    insert.bind(5, info.git_sha);
    insert.bind(6, info.command);
    insert.exec();
    return db_->getLastInsertRowid();
  } catch (const SQLite::Exception& e) {
    throw StoreError(fmt::format("cannot record a sweep of experiment {} in '{}': {}",
                                 info.experiment_id, path_, e.what()));
  }
}

void Store::EndSweep(int64_t sweep_id, const std::string& status, const std::string& finished_at) {
  CheckOneOf("sweep status", status, SweepStatuses());
  int changed = 0;
  try {
    SQLite::Statement update(*db_, "UPDATE sweeps SET status = ?, finished_at = ? WHERE id = ?");
    update.bind(1, status);
    BindTextOrNull(update, 2, finished_at);
    update.bind(3, sweep_id);
    changed = update.exec();
  } catch (const SQLite::Exception& e) {
    throw StoreError(fmt::format("cannot end sweep {} in '{}': {}", sweep_id, path_, e.what()));
  }
  if (changed == 0) {
    throw StoreError(fmt::format("cannot end sweep {} in '{}': no such sweep", sweep_id, path_));
  }
}

void Store::AddSweepEnvironment(int64_t sweep_id, const std::map<std::string, std::string>& env) {
  try {
    SQLite::Transaction tx(*db_, SQLite::TransactionBehavior::IMMEDIATE);
    // A key recorded again replaces its value (the unique index is on (sweep_id, key)).
    SQLite::Statement insert(*db_,
                             "INSERT OR REPLACE INTO environment (sweep_id, trial_id, key, value) "
                             "VALUES (?, NULL, ?, ?)");
    for (const auto& [key, value] : env) {
      insert.bind(1, sweep_id);
      insert.bind(2, key);
      insert.bind(3, value);
      insert.exec();
      insert.reset();
    }
    tx.commit();
  } catch (const SQLite::Exception& e) {
    throw StoreError(fmt::format("cannot record the environment of sweep {} in '{}': {}", sweep_id,
                                 path_, e.what()));
  }
}

int64_t Store::RecordTrial(const TrialRecord& trial) {
  const auto context = [&] {
    return fmt::format("cannot record trial '{}' (repeat {}) of sweep {} in '{}'", trial.label,
                       trial.repeat_index, trial.sweep_id, path_);
  };
  try {
    CheckOneOf("status", trial.status, TrialStatuses());
    for (const StepRow& s : trial.steps) CheckOneOf("step phase", s.phase, StepPhases());
  } catch (const StoreError& e) {
    throw StoreError(fmt::format("{}: {}", context(), e.what()));
  }
  try {
    // One transaction: a failure anywhere below leaves no trace of the trial.
    SQLite::Transaction tx(*db_, SQLite::TransactionBehavior::IMMEDIATE);
    SQLite::Statement insert_trial(
        *db_,
        "INSERT INTO trials (sweep_id, config_hash, config_json, label, is_baseline, "
        "repeat_index, order_index, device, status, error, started_at, finished_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    insert_trial.bind(1, trial.sweep_id);
    insert_trial.bind(2, trial.config_hash);
    insert_trial.bind(3, trial.config_json);
    insert_trial.bind(4, trial.label);
    insert_trial.bind(5, trial.is_baseline ? 1 : 0);
    insert_trial.bind(6, trial.repeat_index);
    insert_trial.bind(7, trial.order_index);
    insert_trial.bind(8, trial.device);
    insert_trial.bind(9, trial.status);
    BindTextOrNull(insert_trial, 10, trial.error);
    BindTextOrNull(insert_trial, 11, trial.started_at);
    BindTextOrNull(insert_trial, 12, trial.finished_at);
    insert_trial.exec();
    const int64_t trial_id = db_->getLastInsertRowid();

    SQLite::Statement insert_step(
        *db_,
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

    SQLite::Statement insert_metric(
        *db_, "INSERT INTO metrics (trial_id, name, value, unit, step) VALUES (?, ?, ?, ?, ?)");
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

    SQLite::Statement insert_env(
        *db_, "INSERT INTO environment (sweep_id, trial_id, key, value) VALUES (?, ?, ?, ?)");
    for (const auto& [key, value] : trial.environment) {
      insert_env.bind(1, trial.sweep_id);
      insert_env.bind(2, trial_id);
      insert_env.bind(3, key);
      insert_env.bind(4, value);
      insert_env.exec();
      insert_env.reset();
    }

    tx.commit();
    return trial_id;
  } catch (const SQLite::Exception& e) {
    throw StoreError(fmt::format("{}: {}", context(), e.what()));
  }
}

std::optional<int64_t> Store::FindOkTrial(const std::string& config_hash) {
  try {
    SQLite::Statement find(*db_,
                           "SELECT id FROM trials WHERE config_hash = ? AND status = 'ok' "
                           "ORDER BY id DESC LIMIT 1");
    find.bind(1, config_hash);
    if (!find.executeStep()) return std::nullopt;
    return find.getColumn(0).getInt64();
  } catch (const SQLite::Exception& e) {
    throw StoreError(fmt::format("cannot look up configuration '{}' in '{}': {}", config_hash,
                                 path_, e.what()));
  }
}

int Store::MarkInterruptedSweeps(const std::string& finished_at) {
  try {
    SQLite::Statement update(*db_,
                             "UPDATE sweeps SET status = 'interrupted', "
                             "finished_at = coalesce(finished_at, ?) WHERE status = 'running'");
    BindTextOrNull(update, 1, finished_at);
    return update.exec();
  } catch (const SQLite::Exception& e) {
    throw StoreError(
        fmt::format("cannot mark interrupted sweeps in '{}': {}", path_, e.what()));
  }
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

void Store::RecordVariantStats(int64_t sweep_id, const std::vector<VariantStatsRow>& rows) {
  try {
    SQLite::Transaction tx(*db_, SQLite::TransactionBehavior::IMMEDIATE);
    SQLite::Statement clear(*db_, "DELETE FROM variant_stats WHERE sweep_id = ?");
    clear.bind(1, sweep_id);
    clear.exec();
    SQLite::Statement insert(
        *db_,
        "INSERT INTO variant_stats (sweep_id, label, is_baseline, trials, ok_trials, "
        "step_ms_median, step_ms_p10, step_ms_p90, samples_per_s, speedup, speedup_ci_low, "
        "speedup_ci_high, significant, accuracy_delta, resamples, seed) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    for (const VariantStatsRow& r : rows) {
      insert.bind(1, sweep_id);
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
      BindOptional(insert, 13, r.significant ? std::optional<int>(*r.significant ? 1 : 0)
                                             : std::nullopt);
      BindOptional(insert, 14, r.accuracy_delta);
      BindOptional(insert, 15, r.resamples);
      // SQLite integers are signed: a seed >= 2^63 is stored as its two's-complement bits.
      BindOptional(insert, 16, r.seed ? std::optional<int64_t>(static_cast<int64_t>(*r.seed))
                                      : std::nullopt);
      insert.exec();
      insert.reset();
    }
    tx.commit();
  } catch (const SQLite::Exception& e) {
    throw StoreError(fmt::format("cannot record the variant figures of sweep {} in '{}': {}",
                                 sweep_id, path_, e.what()));
  }
}

}  // namespace runx::store

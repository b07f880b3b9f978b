#include "store/schema.h"

#include <SQLiteCpp/SQLiteCpp.h>
#include <fmt/format.h>
#include <sqlite3.h>

#include "base/sha256.h"
#include "store/store.h"
#include "store/views.h"

namespace runx::store {
namespace {

// Version 1: the initial schema. Documented, column by column, in docs/sql.md.
constexpr const char* kSchemaV1 = R"sql(
CREATE TABLE experiments (
  id         INTEGER PRIMARY KEY,
  name       TEXT NOT NULL,
  path       TEXT NOT NULL,
  sha256     TEXT NOT NULL,
  yaml       TEXT NOT NULL,
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
  UNIQUE (name, path, sha256)
);

CREATE TABLE sweeps (
  id            INTEGER PRIMARY KEY,
  experiment_id INTEGER NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
  started_at    TEXT NOT NULL,
  finished_at   TEXT,
  status        TEXT NOT NULL DEFAULT 'running'
                CHECK (status IN ('running', 'ok', 'failed', 'interrupted')),
  host          TEXT NOT NULL DEFAULT '',
  runx_version  TEXT NOT NULL DEFAULT '',
  git_sha       TEXT NOT NULL DEFAULT '',
  command       TEXT NOT NULL DEFAULT ''
);
CREATE INDEX sweeps_experiment_id ON sweeps(experiment_id);

CREATE TABLE trials (
  id           INTEGER PRIMARY KEY,
  sweep_id     INTEGER NOT NULL REFERENCES sweeps(id) ON DELETE CASCADE,
  config_hash  TEXT NOT NULL,
  config_json  TEXT NOT NULL,
  label        TEXT NOT NULL DEFAULT '',
  is_baseline  INTEGER NOT NULL DEFAULT 0 CHECK (is_baseline IN (0, 1)),
  repeat_index INTEGER NOT NULL DEFAULT 0 CHECK (repeat_index >= 0),
  order_index  INTEGER NOT NULL DEFAULT 0,
  device       TEXT NOT NULL DEFAULT '',
  status       TEXT NOT NULL
               CHECK (status IN ('ok', 'failed', 'crashed', 'oom', 'timeout', 'nan',
                                 'incompatible', 'skipped')),
  error        TEXT,
  started_at   TEXT,
  finished_at  TEXT
);
CREATE INDEX trials_config_hash ON trials(config_hash);
CREATE INDEX trials_sweep_id ON trials(sweep_id);

CREATE TABLE steps (
  trial_id INTEGER NOT NULL REFERENCES trials(id) ON DELETE CASCADE,
  phase    TEXT NOT NULL CHECK (phase IN ('warmup', 'measure', 'eval')),
  step     INTEGER NOT NULL CHECK (step >= 0),
  wall_ms  REAL NOT NULL,
  data_ms  REAL NOT NULL DEFAULT 0,
  samples  INTEGER NOT NULL DEFAULT 0 CHECK (samples >= 0),
  loss     REAL,
  PRIMARY KEY (trial_id, phase, step)
) WITHOUT ROWID;

CREATE TABLE metrics (
  trial_id INTEGER NOT NULL REFERENCES trials(id) ON DELETE CASCADE,
  name     TEXT NOT NULL CHECK (name <> ''),
  value    REAL,
  unit     TEXT NOT NULL DEFAULT '',
  step     INTEGER
);
CREATE UNIQUE INDEX metrics_trial_name ON metrics(trial_id, name) WHERE step IS NULL;
CREATE UNIQUE INDEX metrics_trial_name_step ON metrics(trial_id, name, step)
  WHERE step IS NOT NULL;

CREATE TABLE environment (
  sweep_id INTEGER NOT NULL REFERENCES sweeps(id) ON DELETE CASCADE,
  trial_id INTEGER REFERENCES trials(id) ON DELETE CASCADE,
  key      TEXT NOT NULL CHECK (key <> ''),
  value    TEXT NOT NULL
);
CREATE UNIQUE INDEX environment_sweep_key ON environment(sweep_id, key) WHERE trial_id IS NULL;
CREATE UNIQUE INDEX environment_trial_key ON environment(trial_id, key)
  WHERE trial_id IS NOT NULL;

)sql";

// Version 2: the report's per-variant figures (variant_stats).
constexpr const char* kSchemaV2 = R"sql(
CREATE TABLE variant_stats (
  sweep_id        INTEGER NOT NULL REFERENCES sweeps(id) ON DELETE CASCADE,
  label           TEXT NOT NULL,
  is_baseline     INTEGER NOT NULL DEFAULT 0 CHECK (is_baseline IN (0, 1)),
  trials          INTEGER NOT NULL CHECK (trials >= 0),
  ok_trials       INTEGER NOT NULL CHECK (ok_trials >= 0 AND ok_trials <= trials),
  step_ms_median  REAL,
  step_ms_p10     REAL,
  step_ms_p90     REAL,
  samples_per_s   REAL,
  speedup         REAL,
  speedup_ci_low  REAL,
  speedup_ci_high REAL,
  significant     INTEGER CHECK (significant IN (0, 1)),
  accuracy_delta  REAL,
  resamples       INTEGER,
  seed            INTEGER,
  PRIMARY KEY (sweep_id, label)
);

)sql";

// Version 3: the identity model (docs/design.md). A sweep row becomes a run (one invocation of
// runx, with its build identity, overrides and owner process); a trial's config_hash becomes the
// hash of its resolved config alone, with the environment in env_hash; the trials of a run are
// its memberships (run_trials), reused ones included; claims let concurrent runners share a
// sweep. Trials of older stores keep their combined identity in legacy_identity.
constexpr const char* kSchemaV3 = R"sql(
ALTER TABLE sweeps RENAME TO runs;
ALTER TABLE runs ADD COLUMN overrides   TEXT NOT NULL DEFAULT '[]';
ALTER TABLE runs ADD COLUMN git_dirty   INTEGER CHECK (git_dirty IN (0, 1));
ALTER TABLE runs ADD COLUMN build_type  TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN runx_build  TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN pid         INTEGER;
ALTER TABLE runs ADD COLUMN pid_token   TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN plan_hash   TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN shard       TEXT NOT NULL DEFAULT '0/1';
ALTER TABLE runs ADD COLUMN force       INTEGER NOT NULL DEFAULT 0 CHECK (force IN (0, 1));
ALTER TABLE runs ADD COLUMN reuse_floor INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN any_build   INTEGER NOT NULL DEFAULT 0 CHECK (any_build IN (0, 1));
UPDATE runs SET git_dirty = 1, git_sha = substr(git_sha, 1, length(git_sha) - 6)
  WHERE git_sha LIKE '%-dirty';
UPDATE runs SET status = 'interrupted', finished_at = coalesce(finished_at, started_at)
  WHERE status = 'running';
DROP INDEX sweeps_experiment_id;
CREATE INDEX runs_experiment_id ON runs(experiment_id);
CREATE INDEX runs_plan_hash ON runs(plan_hash);

ALTER TABLE trials RENAME COLUMN sweep_id TO run_id;
ALTER TABLE trials ADD COLUMN env_hash        TEXT NOT NULL DEFAULT '';
ALTER TABLE trials ADD COLUMN platform_hash   TEXT NOT NULL DEFAULT '';
ALTER TABLE trials ADD COLUMN inputs          TEXT NOT NULL DEFAULT '{}';
ALTER TABLE trials ADD COLUMN error_detail    TEXT;
ALTER TABLE trials ADD COLUMN legacy_identity TEXT;
UPDATE trials SET legacy_identity = config_hash, config_hash = '';
DROP INDEX trials_config_hash;
DROP INDEX trials_sweep_id;
CREATE INDEX trials_run_id ON trials(run_id);
CREATE INDEX trials_identity ON trials(config_hash, env_hash, repeat_index, status);

ALTER TABLE environment RENAME COLUMN sweep_id TO run_id;
ALTER TABLE variant_stats RENAME COLUMN sweep_id TO run_id;

CREATE TABLE run_trials (
  run_id       INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  trial_id     INTEGER NOT NULL REFERENCES trials(id) ON DELETE CASCADE,
  label        TEXT NOT NULL DEFAULT '',
  is_baseline  INTEGER NOT NULL DEFAULT 0 CHECK (is_baseline IN (0, 1)),
  repeat_index INTEGER NOT NULL DEFAULT 0 CHECK (repeat_index >= 0),
  order_index  INTEGER NOT NULL DEFAULT 0,
  reused       INTEGER NOT NULL DEFAULT 0 CHECK (reused IN (0, 1)),
  PRIMARY KEY (run_id, trial_id)
);
CREATE INDEX run_trials_trial_id ON run_trials(trial_id);
INSERT INTO run_trials (run_id, trial_id, label, is_baseline, repeat_index, order_index, reused)
  SELECT run_id, id, label, is_baseline, repeat_index, order_index, 0 FROM trials;

CREATE TABLE claims (
  config_hash  TEXT NOT NULL,
  env_hash     TEXT NOT NULL,
  repeat_index INTEGER NOT NULL,
  platform_hash TEXT NOT NULL DEFAULT '',
  run_id       INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  claimed_at   TEXT NOT NULL,
  PRIMARY KEY (config_hash, env_hash, repeat_index)
);
)sql";

// Version 4: global identities, so that stores written on other machines or by other shards can
// be merged (store/merge.h): every run and trial gets a `uid` that no other run or trial anywhere
// has. New rows get 128 random bits (the triggers, so that every writer, the sqlite3 shell
// included, gets one); rows of older stores get a uid derived from what identified them in their
// file (runx_uid, registered by Migrate), so that two copies of one store, or one old input merged
// twice, give their rows the same uids.
constexpr const char* kSchemaV4 = R"sql(
ALTER TABLE runs ADD COLUMN uid TEXT NOT NULL DEFAULT '';
UPDATE runs SET uid = runx_uid('run', id, started_at, host, pid, pid_token, plan_hash, shard, command);
CREATE UNIQUE INDEX runs_uid ON runs(uid);
CREATE TRIGGER runs_new_uid AFTER INSERT ON runs WHEN NEW.uid = ''
BEGIN
  UPDATE runs SET uid = lower(hex(randomblob(16))) WHERE id = NEW.id;
END;

ALTER TABLE trials ADD COLUMN uid TEXT NOT NULL DEFAULT '';
UPDATE trials SET uid = runx_uid('trial', (SELECT r.uid FROM runs r WHERE r.id = trials.run_id), id,
                                 started_at, label, repeat_index);
CREATE UNIQUE INDEX trials_uid ON trials(uid);
CREATE TRIGGER trials_new_uid AFTER INSERT ON trials WHEN NEW.uid = ''
BEGIN
  UPDATE trials SET uid = lower(hex(randomblob(16))) WHERE id = NEW.id;
END;
)sql";

// runx_uid(...): the first 128 bits of the sha256 of its arguments (each as text, with its
// length, NULL as '-'), as 32 lower-case hex digits: the uid of a row of an older store.
void RunxUid(sqlite3_context* context, int argc, sqlite3_value** argv) {
  std::string text;
  for (int i = 0; i < argc; ++i) {
    if (sqlite3_value_type(argv[i]) == SQLITE_NULL) {
      text += "-;";
      continue;
    }
    const auto* value = reinterpret_cast<const char*>(sqlite3_value_text(argv[i]));
    const int size = sqlite3_value_bytes(argv[i]);
    text += fmt::format("{}:", size);
    text.append(value ? value : "", static_cast<size_t>(size));
    text += ';';
  }
  const std::string hex = base::Sha256Hex(text).substr(0, 32);
  sqlite3_result_text(context, hex.c_str(), static_cast<int>(hex.size()), SQLITE_TRANSIENT);
}

void RegisterFunctions(SQLite::Database& db) {
  const int rc = sqlite3_create_function_v2(db.getHandle(), "runx_uid", -1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nullptr,
                                            &RunxUid, nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) throw SQLite::Exception(db.getHandle(), rc);
}

bool TableExists(SQLite::Database& db, const char* name) {
  SQLite::Statement q(db, "SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?");
  q.bind(1, name);
  return q.executeStep();
}

int CountUserTables(SQLite::Database& db) {
  return db
      .execAndGet(
          "SELECT count(*) FROM sqlite_schema WHERE type = 'table' "
          "AND name NOT LIKE 'sqlite_%'")
      .getInt();
}

// Throws when `version` cannot be served by a binary that knows up to `latest`.
void CheckNotNewer(int version, int latest, const std::string& path) {
  if (version > latest) {
    throw StoreError(fmt::format("results store '{}' has schema version {}, this runx supports up to {}; upgrade runx",
                                 path, version, latest));
  }
}

}  // namespace

// Version 5 changes no table: it brings the view `scaling` (data_parallel's scaling efficiency)
// to stores of version 4, whose views are only rebuilt by a migration.
constexpr const char* kSchemaV5 = "SELECT 1;";

// Version 6: what a verdict rests on, and runs as users know them (docs/design.md, "Verdicts").
// A run may be one shard of a sweep that ran as several runs (`--shard`, `runx submit`): the
// runs of one sweep share `sweep_uid` (NULL: the run is a sweep of its own). The commit of the
// user's repository holding the experiment file, a tag and a note. variant_stats keeps the
// verdict of the end-of-run table and the standard error of ln(speedup) behind its interval, from
// the spread between processes, with its degrees of freedom; its bootstrap
// columns (resamples, seed) stay for the rows of older runs.
constexpr const char* kSchemaV6 = R"sql(
ALTER TABLE runs ADD COLUMN sweep_uid      TEXT;
ALTER TABLE runs ADD COLUMN user_git_sha   TEXT;
ALTER TABLE runs ADD COLUMN user_git_dirty INTEGER CHECK (user_git_dirty IN (0, 1));
ALTER TABLE runs ADD COLUMN tag            TEXT;
ALTER TABLE runs ADD COLUMN note           TEXT;
CREATE INDEX runs_sweep_uid ON runs(sweep_uid);
CREATE INDEX runs_tag ON runs(tag);

ALTER TABLE variant_stats ADD COLUMN verdict    TEXT;
ALTER TABLE variant_stats ADD COLUMN speedup_se REAL;
ALTER TABLE variant_stats ADD COLUMN speedup_df INTEGER;
)sql";

// Version 7: a run holds a trial once per variant label. Two planned variants whose configurations
// are one (data files with the same content at two paths) share one measured trial; before, the
// second variant's membership was dropped and it vanished from its run's table and report. The
// table is rebuilt because SQLite cannot change a primary key in place.
constexpr const char* kSchemaV7 = R"sql(
CREATE TABLE run_trials_v7 (
  run_id       INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  trial_id     INTEGER NOT NULL REFERENCES trials(id) ON DELETE CASCADE,
  label        TEXT NOT NULL DEFAULT '',
  is_baseline  INTEGER NOT NULL DEFAULT 0 CHECK (is_baseline IN (0, 1)),
  repeat_index INTEGER NOT NULL DEFAULT 0 CHECK (repeat_index >= 0),
  order_index  INTEGER NOT NULL DEFAULT 0,
  reused       INTEGER NOT NULL DEFAULT 0 CHECK (reused IN (0, 1)),
  PRIMARY KEY (run_id, trial_id, label)
);
INSERT INTO run_trials_v7 (run_id, trial_id, label, is_baseline, repeat_index, order_index, reused)
  SELECT run_id, trial_id, label, is_baseline, repeat_index, order_index, reused FROM run_trials;
DROP TABLE run_trials;
ALTER TABLE run_trials_v7 RENAME TO run_trials;
CREATE INDEX run_trials_trial_id ON run_trials(trial_id);
)sql";

const std::vector<Migration>& Migrations() {
  static const std::vector<Migration> kMigrations = {
      {1, kSchemaV1}, {2, kSchemaV2}, {3, kSchemaV3}, {4, kSchemaV4}, {5, kSchemaV5}, {6, kSchemaV6}, {7, kSchemaV7},
  };
  return kMigrations;
}

int ReadSchemaVersion(SQLite::Database& db, const std::string& path) {
  // One snapshot for every query below (a savepoint nests in a caller's transaction): otherwise a
  // runner creating the store between two of them shows tables without a schema_version.
  struct Snapshot {
    SQLite::Database& db;
    explicit Snapshot(SQLite::Database& d) : db(d) { db.exec("SAVEPOINT read_schema_version"); }
    ~Snapshot() {
      try {
        db.exec("RELEASE read_schema_version");
      } catch (const SQLite::Exception&) {  // only read: nothing to keep
      }
    }
  } snapshot(db);
  if (!TableExists(db, "schema_version")) {
    if (CountUserTables(db) > 0) {
      throw StoreError(
          fmt::format("'{}' is not a runx results store: it has tables but no schema_version; "
                      "pass --db with another path",
                      path));
    }
    return 0;
  }
  SQLite::Statement q(db, "SELECT version FROM schema_version");
  if (!q.executeStep()) {
    throw StoreError(fmt::format("results store '{}' is damaged: its schema_version table is empty", path));
  }
  return q.getColumn(0).getInt();
}

void Migrate(SQLite::Database& db, const std::vector<Migration>& migrations, const std::string& path) {
  // Views are written for the latest schema only; a shorter list (tests of old versions) has none.
  const bool create_views = !migrations.empty() && migrations.back().version == Migrations().back().version;
  const int latest = migrations.empty() ? 0 : migrations.back().version;
  const int found = ReadSchemaVersion(db, path);
  CheckNotNewer(found, latest, path);
  if (found == latest) return;
  RegisterFunctions(db);
  for (const Migration& m : migrations) {
    // IMMEDIATE takes the write lock first, so two processes opening a new store at once
    // do not both apply the same step: the second one re-reads the version and skips it.
    SQLite::Transaction tx(db, SQLite::TransactionBehavior::IMMEDIATE);
    const int current = ReadSchemaVersion(db, path);
    CheckNotNewer(current, latest, path);
    if (current >= m.version) continue;  // tx rolls back: nothing was written
    if (m.version != current + 1) {
      throw StoreError(fmt::format("internal error: migration to version {} follows version {}", m.version, current));
    }
    try {
      if (current == 0) {
        db.exec(
            "CREATE TABLE schema_version ("
            "  id INTEGER PRIMARY KEY CHECK (id = 1),"
            "  version INTEGER NOT NULL);"
            "INSERT INTO schema_version (id, version) VALUES (1, 0);");
      }
      // Views are no part of any migration: they are dropped before the first step and created,
      // in their latest form, in the transaction of the last one (store/views.cc).
      DropViews(db);
      db.exec(m.sql);
      SQLite::Statement bump(db, "UPDATE schema_version SET version = ?");
      bump.bind(1, m.version);
      bump.exec();
      if (m.version == latest && create_views) CreateViews(db);
    } catch (const SQLite::Exception& e) {
      throw StoreError(
          fmt::format("cannot migrate results store '{}' to schema version {}: {}", path, m.version, e.what()));
    }
    tx.commit();
  }
}

}  // namespace runx::store

#include "store/schema.h"

#include <SQLiteCpp/SQLiteCpp.h>
#include <fmt/format.h>

#include "store/store.h"

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

CREATE VIEW trial_summary AS
SELECT
  t.id AS trial_id,
  t.sweep_id AS sweep_id,
  e.name AS experiment,
  t.label AS label,
  t.status AS status,
  t.device AS device,
  (SELECT m.value FROM metrics m
    WHERE m.trial_id = t.id AND m.step IS NULL AND m.name = 'samples_per_s') AS samples_per_s,
  (SELECT m.value FROM metrics m
    WHERE m.trial_id = t.id AND m.step IS NULL AND m.name = 'step_ms_median') AS step_ms_median,
  (SELECT m.value FROM metrics m
    WHERE m.trial_id = t.id AND m.step IS NULL AND m.name = 'step_ms_p10') AS step_ms_p10,
  (SELECT m.value FROM metrics m
    WHERE m.trial_id = t.id AND m.step IS NULL AND m.name = 'step_ms_p90') AS step_ms_p90,
  (SELECT CAST(m.value AS INTEGER) FROM metrics m
    WHERE m.trial_id = t.id AND m.step IS NULL AND m.name = 'peak_mem_bytes') AS peak_mem_bytes,
  (SELECT m.value FROM metrics m
    WHERE m.trial_id = t.id AND m.step IS NULL AND m.name = 'final_loss') AS final_loss,
  (SELECT m.value FROM metrics m
    WHERE m.trial_id = t.id AND m.step IS NULL AND m.name = 'accuracy') AS accuracy,
  t.started_at AS started_at,
  t.error AS error,
  t.config_hash AS config_hash,
  t.finished_at AS finished_at,
  t.is_baseline AS is_baseline,
  t.repeat_index AS repeat_index
FROM trials t
JOIN sweeps s ON s.id = t.sweep_id
JOIN experiments e ON e.id = s.experiment_id;

CREATE VIEW speedups AS
WITH baseline AS (
  SELECT sweep_id, AVG(samples_per_s) AS samples_per_s, AVG(step_ms_median) AS step_ms_median
  FROM trial_summary
  WHERE is_baseline = 1 AND status = 'ok'
  GROUP BY sweep_id
)
SELECT
  ts.trial_id AS trial_id,
  ts.sweep_id AS sweep_id,
  ts.experiment AS experiment,
  ts.label AS label,
  ts.status AS status,
  ts.samples_per_s AS samples_per_s,
  b.samples_per_s AS baseline_samples_per_s,
  ts.samples_per_s / b.samples_per_s AS speedup,
  ts.step_ms_median AS step_ms_median,
  b.step_ms_median AS baseline_step_ms_median,
  ts.is_baseline AS is_baseline,
  ts.repeat_index AS repeat_index
FROM trial_summary ts
LEFT JOIN baseline b ON b.sweep_id = ts.sweep_id;

CREATE VIEW steps_measured AS
SELECT
  st.trial_id AS trial_id,
  st.step AS step,
  st.wall_ms AS wall_ms,
  st.data_ms AS data_ms,
  st.samples AS samples,
  st.loss AS loss,
  CASE WHEN st.wall_ms > 0 THEN st.samples * 1000.0 / st.wall_ms END AS samples_per_s
FROM steps st
WHERE st.phase = 'measure';
)sql";

// Version 2: the report's per-variant figures (variant_stats) and the speedups view with the
// variant's bootstrap interval appended after its version 1 columns.
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

DROP VIEW speedups;
CREATE VIEW speedups AS
WITH baseline AS (
  SELECT sweep_id, AVG(samples_per_s) AS samples_per_s, AVG(step_ms_median) AS step_ms_median
  FROM trial_summary
  WHERE is_baseline = 1 AND status = 'ok'
  GROUP BY sweep_id
)
SELECT
  ts.trial_id AS trial_id,
  ts.sweep_id AS sweep_id,
  ts.experiment AS experiment,
  ts.label AS label,
  ts.status AS status,
  ts.samples_per_s AS samples_per_s,
  b.samples_per_s AS baseline_samples_per_s,
  ts.samples_per_s / b.samples_per_s AS speedup,
  ts.step_ms_median AS step_ms_median,
  b.step_ms_median AS baseline_step_ms_median,
  ts.is_baseline AS is_baseline,
  ts.repeat_index AS repeat_index,
  vs.speedup_ci_low AS speedup_ci_low,
  vs.speedup_ci_high AS speedup_ci_high,
  vs.significant AS significant
FROM trial_summary ts
LEFT JOIN baseline b ON b.sweep_id = ts.sweep_id
LEFT JOIN variant_stats vs ON vs.sweep_id = ts.sweep_id AND vs.label = ts.label;
)sql";

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
    throw StoreError(fmt::format(
        "results store '{}' has schema version {}, this runx supports up to {}; upgrade runx", path,
        version, latest));
  }
}

}  // namespace

const std::vector<Migration>& Migrations() {
  static const std::vector<Migration> kMigrations = {
      {1, kSchemaV1},
      {2, kSchemaV2},
  };
  return kMigrations;
}

int ReadSchemaVersion(SQLite::Database& db, const std::string& path) {
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
    throw StoreError(
        fmt::format("results store '{}' is damaged: its schema_version table is empty", path));
  }
  return q.getColumn(0).getInt();
}

void Migrate(SQLite::Database& db, const std::vector<Migration>& migrations,
             const std::string& path) {
  const int latest = migrations.empty() ? 0 : migrations.back().version;
  const int found = ReadSchemaVersion(db, path);
  CheckNotNewer(found, latest, path);
  if (found == latest) return;
  for (const Migration& m : migrations) {
    // IMMEDIATE takes the write lock first, so two processes opening a new store at once
    // do not both apply the same step: the second one re-reads the version and skips it.
    SQLite::Transaction tx(db, SQLite::TransactionBehavior::IMMEDIATE);
    const int current = ReadSchemaVersion(db, path);
    CheckNotNewer(current, latest, path);
    if (current >= m.version) continue;  // tx rolls back: nothing was written
    if (m.version != current + 1) {
      throw StoreError(fmt::format("internal error: migration to version {} follows version {}",
                                   m.version, current));
    }
    try {
      if (current == 0) {
        db.exec(
            "CREATE TABLE schema_version ("
            "  id INTEGER PRIMARY KEY CHECK (id = 1),"
            "  version INTEGER NOT NULL);"
            "INSERT INTO schema_version (id, version) VALUES (1, 0);");
      }
      db.exec(m.sql);
      SQLite::Statement bump(db, "UPDATE schema_version SET version = ?");
      bump.bind(1, m.version);
      bump.exec();
    } catch (const SQLite::Exception& e) {
      throw StoreError(fmt::format("cannot migrate results store '{}' to schema version {}: {}",
                                   path, m.version, e.what()));
    }
    tx.commit();
  }
}

}  // namespace runx::store

#include "store/views.h"

#include <SQLiteCpp/SQLiteCpp.h>

#include <string>
#include <vector>

namespace runx::store {
namespace {

// The one definition of every view. Columns are only ever appended, so that queries written
// against an older store keep working; docs/sql.md documents each column.
//
// A run's trials are its memberships (run_trials): the trials it ran and the trials it reused
// from earlier runs. Labels, baselines and repeat indexes are the run's own, so two runs of one
// file with different overrides never share a baseline.
constexpr const char* kViews = R"sql(
CREATE VIEW trial_summary AS
SELECT
  t.id AS trial_id,
  rt.run_id AS sweep_id,
  e.name AS experiment,
  rt.label AS label,
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
  rt.is_baseline AS is_baseline,
  rt.repeat_index AS repeat_index,
  rt.run_id AS run_id,
  rt.reused AS reused,
  t.run_id AS produced_by_run,
  t.env_hash AS env_hash,
  t.error_detail AS error_detail
FROM run_trials rt
JOIN trials t ON t.id = rt.trial_id
JOIN runs r ON r.id = rt.run_id
JOIN experiments e ON e.id = r.experiment_id;

CREATE VIEW speedups AS
WITH baseline AS (
  SELECT run_id, AVG(samples_per_s) AS samples_per_s, AVG(step_ms_median) AS step_ms_median
  FROM trial_summary
  WHERE is_baseline = 1 AND status = 'ok'
  GROUP BY run_id
)
SELECT
  ts.trial_id AS trial_id,
  ts.run_id AS sweep_id,
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
  vs.significant AS significant,
  ts.run_id AS run_id,
  ts.reused AS reused
FROM trial_summary ts
LEFT JOIN baseline b ON b.run_id = ts.run_id
LEFT JOIN variant_stats vs ON vs.run_id = ts.run_id AND vs.label = ts.label;

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

CREATE VIEW run_summary AS
SELECT
  r.id AS run_id,
  e.name AS experiment,
  r.status AS status,
  r.started_at AS started_at,
  r.finished_at AS finished_at,
  r.command AS command,
  r.overrides AS overrides,
  r.runx_version AS runx_version,
  r.git_sha AS git_sha,
  r.git_dirty AS git_dirty,
  r.build_type AS build_type,
  r.runx_build AS runx_build,
  r.host AS host,
  (SELECT count(*) FROM run_trials rt WHERE rt.run_id = r.id) AS trials,
  (SELECT count(*) FROM run_trials rt JOIN trials t ON t.id = rt.trial_id
    WHERE rt.run_id = r.id AND t.status = 'ok') AS ok_trials,
  (SELECT count(*) FROM run_trials rt WHERE rt.run_id = r.id AND rt.reused = 1) AS reused_trials
FROM runs r
JOIN experiments e ON e.id = r.experiment_id;

CREATE VIEW variant_changes AS
WITH v AS (
  SELECT
    vs.run_id AS run_id,
    e.name AS experiment,
    r.started_at AS started_at,
    r.git_sha AS git_sha,
    r.host AS host,
    vs.label AS label,
    (SELECT t.config_hash FROM run_trials rt JOIN trials t ON t.id = rt.trial_id
      WHERE rt.run_id = vs.run_id AND rt.label = vs.label ORDER BY rt.trial_id LIMIT 1) AS config_hash,
    vs.samples_per_s AS samples_per_s,
    vs.step_ms_median AS step_ms_median
  FROM variant_stats vs
  JOIN runs r ON r.id = vs.run_id
  JOIN experiments e ON e.id = r.experiment_id
  WHERE vs.samples_per_s IS NOT NULL
)
SELECT
  b.run_id AS run_id,
  b.experiment AS experiment,
  b.label AS label,
  b.config_hash AS config_hash,
  a.run_id AS previous_run_id,
  a.label AS previous_label,
  a.git_sha AS previous_git_sha,
  b.git_sha AS git_sha,
  a.host AS previous_host,
  b.host AS host,
  a.samples_per_s AS previous_samples_per_s,
  b.samples_per_s AS samples_per_s,
  b.samples_per_s / a.samples_per_s AS ratio,
  a.step_ms_median AS previous_step_ms_median,
  b.step_ms_median AS step_ms_median
FROM v b
JOIN v a ON a.run_id = (
  SELECT p.run_id FROM v p
  WHERE p.experiment = b.experiment AND p.config_hash = b.config_hash
    AND (p.started_at < b.started_at OR (p.started_at = b.started_at AND p.run_id < b.run_id))
  ORDER BY p.started_at DESC, p.run_id DESC LIMIT 1)
 AND a.config_hash = b.config_hash;

CREATE VIEW scaling AS
WITH t AS (
  SELECT
    ts.run_id AS run_id,
    ts.trial_id AS trial_id,
    ts.experiment AS experiment,
    ts.label AS label,
    ts.repeat_index AS repeat_index,
    ts.samples_per_s AS samples_per_s,
    COALESCE(CAST(json_extract(tr.config_json, '$.optimizations.data_parallel.world_size') AS INTEGER), 1)
      AS world_size,
    json_type(tr.config_json, '$.optimizations.data_parallel') IS NOT NULL AS data_parallel,
    json_remove(tr.config_json, '$.optimizations.data_parallel') AS scaling_group
  FROM trial_summary ts
  JOIN trials tr ON tr.id = ts.trial_id
  WHERE ts.status = 'ok' AND ts.samples_per_s IS NOT NULL
),
reference AS (
  SELECT run_id, scaling_group, data_parallel, AVG(samples_per_s) AS samples_per_s
  FROM t
  WHERE world_size = 1
  GROUP BY run_id, scaling_group, data_parallel
)
SELECT
  t.run_id AS run_id,
  t.trial_id AS trial_id,
  t.experiment AS experiment,
  t.label AS label,
  t.repeat_index AS repeat_index,
  t.world_size AS world_size,
  t.samples_per_s AS samples_per_s,
  r.samples_per_s AS reference_samples_per_s,
  r.data_parallel AS reference_data_parallel,
  t.samples_per_s / r.samples_per_s AS speedup,
  t.samples_per_s / (t.world_size * r.samples_per_s) AS scaling_efficiency
FROM t
JOIN reference r ON r.run_id = t.run_id AND r.scaling_group = t.scaling_group
 AND r.data_parallel = (SELECT MAX(r2.data_parallel) FROM reference r2
                        WHERE r2.run_id = t.run_id AND r2.scaling_group = t.scaling_group);
)sql";

}  // namespace

void DropViews(SQLite::Database& db) {
  std::vector<std::string> names;
  {
    SQLite::Statement q(db, "SELECT name FROM sqlite_schema WHERE type = 'view'");
    while (q.executeStep()) names.push_back(q.getColumn(0).getString());
  }
  for (const std::string& name : names) db.exec("DROP VIEW \"" + name + "\"");
}

void CreateViews(SQLite::Database& db) { db.exec(kViews); }

}  // namespace runx::store

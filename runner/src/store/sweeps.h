#pragma once
// SQL for sweeps that ran as several runs (schema v6): the shards of a plan run by `--shard` on
// one store or by a `runx submit` array, merged. A run's sweep key is coalesce(sweep_uid, uid):
// a run whose sweep_uid is NULL is a sweep of its own. Macros, so that they join the string
// literals of a statement. Internal to the store.

/// The sweep key of run alias `r`.
#define RUNX_SWEEP_KEY(r) "coalesce(" r ".sweep_uid, " r ".uid)"

/// The ids of the runs of the sweep of run `param` (a parameter, e.g. "?" or "?1").
#define RUNX_SWEEP_RUNS_OF(param)                                                        \
  "(SELECT sw.id FROM runs sw WHERE " RUNX_SWEEP_KEY("sw") " = (SELECT " RUNX_SWEEP_KEY( \
      "sr") " FROM runs sr WHERE sr.id = " param "))"

/// The ids of the trials of the sweep of run `param`, each once (a trial two shards share is in both).
#define RUNX_SWEEP_TRIALS_OF(param) \
  "(SELECT DISTINCT st.trial_id FROM run_trials st WHERE st.run_id IN " RUNX_SWEEP_RUNS_OF(param) ")"

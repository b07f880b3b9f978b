#include "store/run_series.h"

#include <SQLiteCpp/SQLiteCpp.h>
#include <fmt/format.h>

#include "store/sweeps.h"

namespace runx::store {
namespace {

void RequireRun(Store& store, int64_t run_id) {
  SQLite::Statement q(store.db(), "SELECT 1 FROM runs WHERE id = ?");
  q.bind(1, run_id);
  if (!q.executeStep()) throw StoreError(fmt::format("no run {} in results store '{}'", run_id, store.path()));
}

StoreError ReadError(Store& store, int64_t run_id, const char* what, const SQLite::Exception& e) {
  return StoreError(
      fmt::format("cannot read the {} of run {} from results store '{}': {}", what, run_id, store.path(), e.what()));
}

}  // namespace

std::map<int64_t, std::vector<LossPoint>> ReadLossCurves(Store& store, int64_t run_id) {
  std::map<int64_t, std::vector<LossPoint>> out;
  try {
    RequireRun(store, run_id);
    SQLite::Statement q(store.db(),
                        "SELECT s.trial_id, s.loss FROM steps s "
                        "WHERE s.trial_id IN " RUNX_SWEEP_TRIALS_OF("?") " AND s.phase IN ('warmup', 'measure') "
                        "ORDER BY s.trial_id, s.phase = 'measure', s.step");
    q.bind(1, run_id);
    int64_t trial = -1;
    int64_t position = 0;
    while (q.executeStep()) {
      const int64_t id = q.getColumn(0).getInt64();
      if (id != trial) trial = id, position = 0;
      if (!q.getColumn(1).isNull()) out[id].push_back({position, q.getColumn(1).getDouble()});
      ++position;
    }
  } catch (const SQLite::Exception& e) {
    throw ReadError(store, run_id, "losses", e);
  }
  return out;
}

std::map<int64_t, std::map<std::string, double>> ReadSummaryMetrics(Store& store, int64_t run_id,
                                                                    const std::vector<std::string>& names) {
  std::map<int64_t, std::map<std::string, double>> out;
  try {
    RequireRun(store, run_id);
    SQLite::Statement q(store.db(),
                        "SELECT m.trial_id, m.value FROM metrics m "
                        "WHERE m.trial_id IN " RUNX_SWEEP_TRIALS_OF("?") " AND m.step IS NULL AND m.value IS NOT NULL "
                        "AND m.name = ? "
                        "ORDER BY m.trial_id");
    for (const std::string& name : names) {
      q.bind(1, run_id);
      q.bind(2, name);
      while (q.executeStep()) out[q.getColumn(0).getInt64()][name] = q.getColumn(1).getDouble();
      q.reset();
    }
  } catch (const SQLite::Exception& e) {
    throw ReadError(store, run_id, "metrics", e);
  }
  return out;
}

std::vector<StepMetric> ReadStepMetrics(Store& store, int64_t run_id, const std::string& prefix) {
  std::vector<StepMetric> out;
  try {
    RequireRun(store, run_id);
    // substr rather than LIKE: '_' in a prefix such as auto_batch is no wildcard.
    SQLite::Statement q(store.db(),
                        "SELECT m.trial_id, m.name, m.step, m.value FROM metrics m "
                        "WHERE m.trial_id IN " RUNX_SWEEP_TRIALS_OF("?1") " AND m.step IS NOT NULL AND m.value IS NOT NULL "
                        "AND substr(m.name, 1, length(?2)) = ?2 ORDER BY m.trial_id, m.step, m.name");
    q.bind(1, run_id);
    q.bind(2, prefix);
    while (q.executeStep()) {
      out.push_back({q.getColumn(0).getInt64(), q.getColumn(1).getString(), q.getColumn(2).getInt64(),
                     q.getColumn(3).getDouble()});
    }
  } catch (const SQLite::Exception& e) {
    throw ReadError(store, run_id, "per-step metrics", e);
  }
  return out;
}

}  // namespace runx::store

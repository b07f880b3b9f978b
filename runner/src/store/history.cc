#include "store/history.h"

#include <SQLiteCpp/SQLiteCpp.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>

namespace runx::store {
namespace {

// Runs are ordered by when they started, then by id (a store merged from several machines has ids
// in merge order, not in time order).
constexpr const char* kNewestFirst = "ORDER BY r.started_at DESC, r.id DESC";

bool AllDigits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

bool AllHex(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isxdigit(c); });
}

std::string OfExperiment(const std::string& experiment) {
  return experiment.empty() ? "" : fmt::format(" of experiment '{}'", experiment);
}

// The newest run that is not running (of `experiment` when not empty).
std::optional<int64_t> Latest(SQLite::Database& db, const std::string& experiment) {
  SQLite::Statement q(db, fmt::format("SELECT r.id FROM runs r JOIN experiments e ON e.id = r.experiment_id "
                                      "WHERE r.status <> 'running' AND (? = '' OR e.name = ?) {} LIMIT 1",
                                      kNewestFirst));
  q.bind(1, experiment);
  q.bind(2, experiment);
  if (!q.executeStep()) return std::nullopt;
  return q.getColumn(0).getInt64();
}

// The newest run before run `latest` (not running) of the same experiment name.
std::optional<int64_t> Before(SQLite::Database& db, int64_t latest) {
  SQLite::Statement q(db,
                      fmt::format("SELECT r.id FROM runs r JOIN experiments e ON e.id = r.experiment_id, "
                                  "runs l JOIN experiments le ON le.id = l.experiment_id "
                                  "WHERE l.id = ? AND e.name = le.name AND r.status <> 'running' "
                                  "AND (r.started_at < l.started_at OR (r.started_at = l.started_at AND r.id < l.id)) "
                                  "{} LIMIT 1",
                                  kNewestFirst));
  q.bind(1, latest);
  if (!q.executeStep()) return std::nullopt;
  return q.getColumn(0).getInt64();
}

int64_t ByGitRevision(SQLite::Database& db, const std::string& ref, const std::string& experiment) {
  std::string prefix = ref;
  std::transform(prefix.begin(), prefix.end(), prefix.begin(), [](unsigned char c) { return std::tolower(c); });
  if (prefix.size() < 4 || !AllHex(prefix)) {
    throw StoreError(
        fmt::format("'{}' is not a run: expected a run id, 'latest', 'previous' or a git revision "
                    "(4 or more hex digits of the commit runx was built from)",
                    ref));
  }
  // runx records a 12-digit sha: a longer revision (a full `git rev-parse`) matches it too.
  SQLite::Statement shas(db,
                         "SELECT DISTINCT r.git_sha FROM runs r JOIN experiments e ON e.id = r.experiment_id "
                         "WHERE (substr(lower(r.git_sha), 1, ?1) = ?2 OR (length(r.git_sha) >= 7 "
                         "AND substr(?2, 1, length(r.git_sha)) = lower(r.git_sha))) "
                         "AND (?3 = '' OR e.name = ?3) ORDER BY r.git_sha");
  shas.bind(1, static_cast<int64_t>(prefix.size()));
  shas.bind(2, prefix);
  shas.bind(3, experiment);
  std::vector<std::string> found;
  while (shas.executeStep()) found.push_back(shas.getColumn(0).getString());
  if (found.empty()) {
    throw StoreError(
        fmt::format("no run{} was built from a git revision starting with '{}'", OfExperiment(experiment), ref));
  }
  if (found.size() > 1) {
    throw StoreError(fmt::format("git revision '{}' is ambiguous: runs were built from {}; give more digits", ref,
                                 fmt::join(found, ", ")));
  }
  SQLite::Statement run(db, fmt::format("SELECT r.id FROM runs r JOIN experiments e ON e.id = r.experiment_id "
                                        "WHERE r.git_sha = ? AND (? = '' OR e.name = ?) {} LIMIT 1",
                                        kNewestFirst));
  run.bind(1, found[0]);
  run.bind(2, experiment);
  run.bind(3, experiment);
  run.executeStep();
  return run.getColumn(0).getInt64();
}

std::vector<std::string> Strings(SQLite::Statement& q) {
  std::vector<std::string> out;
  while (q.executeStep()) out.push_back(q.getColumn(0).getString());
  return out;
}

}  // namespace

int64_t ResolveRun(Store& store, const std::string& ref, const std::string& experiment) {
  SQLite::Database& db = store.db();
  try {
    if (AllDigits(ref)) {
      SQLite::Statement q(db, "SELECT 1 FROM runs WHERE id = ?");
      q.bind(1, static_cast<int64_t>(std::stoll(ref)));
      if (!q.executeStep()) throw StoreError(fmt::format("no run {} in results store '{}'", ref, store.path()));
      return std::stoll(ref);
    }
    if (ref == "latest" || ref == "previous") {
      const auto latest = Latest(db, experiment);
      if (!latest) {
        throw StoreError(
            fmt::format("no finished run{} in results store '{}'", OfExperiment(experiment), store.path()));
      }
      if (ref == "latest") return *latest;
      const auto before = Before(db, *latest);
      if (!before) {
        throw StoreError(fmt::format("no run before the latest (run {}) of its experiment in results store '{}'",
                                     *latest, store.path()));
      }
      return *before;
    }
    return ByGitRevision(db, ref, experiment);
  } catch (const SQLite::Exception& e) {
    throw StoreError(fmt::format("cannot look for run '{}' in '{}': {}", ref, store.path(), e.what()));
  }
}

RunOverview ReadRunOverview(Store& store, int64_t run_id) {
  SQLite::Database& db = store.db();
  RunOverview o;
  try {
    SQLite::Statement q(
        db,
        "SELECT r.id, e.name, r.status, r.started_at, coalesce(r.finished_at, ''), r.host, "
        "coalesce(r.runx_version, ''), coalesce(r.git_sha, ''), r.git_dirty, coalesce(r.build_type, ''), "
        "coalesce(r.runx_build, ''), coalesce(r.overrides, '[]') "
        "FROM runs r JOIN experiments e ON e.id = r.experiment_id WHERE r.id = ?");
    q.bind(1, run_id);
    if (!q.executeStep()) throw StoreError(fmt::format("no run {} in results store '{}'", run_id, store.path()));
    o.id = q.getColumn(0).getInt64();
    o.experiment = q.getColumn(1).getString();
    o.status = q.getColumn(2).getString();
    o.started_at = q.getColumn(3).getString();
    o.finished_at = q.getColumn(4).getString();
    o.host = q.getColumn(5).getString();
    o.runx_version = q.getColumn(6).getString();
    o.git_sha = q.getColumn(7).getString();
    if (!q.getColumn(8).isNull()) o.git_dirty = q.getColumn(8).getInt() != 0;
    o.build_type = q.getColumn(9).getString();
    o.runx_build = q.getColumn(10).getString();
    o.overrides_json = q.getColumn(11).getString();
    SQLite::Statement devices(db,
                              "SELECT DISTINCT t.device FROM run_trials rt JOIN trials t ON t.id = rt.trial_id "
                              "WHERE rt.run_id = ? AND t.device <> '' ORDER BY t.device");
    devices.bind(1, run_id);
    o.devices = Strings(devices);
    SQLite::Statement platforms(
        db,
        "SELECT DISTINCT t.platform_hash FROM run_trials rt JOIN trials t ON t.id = rt.trial_id "
        "WHERE rt.run_id = ? AND t.status = 'ok' AND coalesce(t.platform_hash, '') <> '' "
        "ORDER BY t.platform_hash");
    platforms.bind(1, run_id);
    o.platforms = Strings(platforms);
    SQLite::Statement env(db, "SELECT key, value FROM environment WHERE run_id = ? AND trial_id IS NULL");
    env.bind(1, run_id);
    while (env.executeStep()) o.environment[env.getColumn(0).getString()] = env.getColumn(1).getString();
  } catch (const SQLite::Exception& e) {
    throw StoreError(fmt::format("cannot read run {} from results store '{}': {}", run_id, store.path(), e.what()));
  }
  return o;
}

std::vector<int64_t> ListRuns(Store& store, const std::string& experiment, int limit) {
  std::vector<int64_t> out;
  try {
    SQLite::Statement q(store.db(), fmt::format("SELECT r.id FROM runs r JOIN experiments e ON e.id = r.experiment_id "
                                                "WHERE e.name = ? {} LIMIT ?",
                                                kNewestFirst));
    q.bind(1, experiment);
    q.bind(2, static_cast<int64_t>(limit > 0 ? limit : -1));
    while (q.executeStep()) out.push_back(q.getColumn(0).getInt64());
  } catch (const SQLite::Exception& e) {
    throw StoreError(fmt::format("cannot list the runs of '{}' in '{}': {}", experiment, store.path(), e.what()));
  }
  return out;
}

std::optional<std::string> LatestExperiment(Store& store) {
  try {
    SQLite::Statement q(store.db(),
                        fmt::format("SELECT e.name FROM runs r JOIN experiments e ON e.id = r.experiment_id "
                                    "{} LIMIT 1",
                                    kNewestFirst));
    if (!q.executeStep()) return std::nullopt;
    return q.getColumn(0).getString();
  } catch (const SQLite::Exception& e) {
    throw StoreError(fmt::format("cannot read the runs of '{}': {}", store.path(), e.what()));
  }
}

std::map<int64_t, TrialIdentity> ReadTrialIdentities(Store& store, int64_t run_id) {
  std::map<int64_t, TrialIdentity> out;
  try {
    SQLite::Statement q(store.db(),
                        "SELECT t.id, coalesce(t.config_hash, ''), coalesce(t.platform_hash, '') "
                        "FROM run_trials rt JOIN trials t ON t.id = rt.trial_id WHERE rt.run_id = ?");
    q.bind(1, run_id);
    while (q.executeStep()) {
      out[q.getColumn(0).getInt64()] = {q.getColumn(1).getString(), q.getColumn(2).getString()};
    }
  } catch (const SQLite::Exception& e) {
    throw StoreError(fmt::format("cannot read the trials of run {} from '{}': {}", run_id, store.path(), e.what()));
  }
  return out;
}

}  // namespace runx::store

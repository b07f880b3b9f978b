#include "store/history.h"

#include "store/sweeps.h"

#include "base/spelling.h"

#include <SQLiteCpp/SQLiteCpp.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <set>

namespace runx::store {
namespace {

// A sweep (the runs that share a sweep key: one run, or the shards of one plan) as a row: its first
// run's id, when its first run started, whether a run of it is still running, its experiment's
// name, and whether a run of it measured anything (a run that only reused earlier results did not).
// Sweeps are ordered by when they started, then by id (a store merged from several machines has ids
// in merge order, not in time order).
#define RUNX_SWEEPS \
  "WITH sweeps AS (SELECT min(r.id) AS id, min(r.started_at) AS started_at, "                         \
  "max(r.status = 'running') AS running, min(e.name) AS experiment, "                                 \
  "max(EXISTS (SELECT 1 FROM trials t WHERE t.run_id = r.id)) AS measured, " RUNX_SWEEP_KEY("r") " AS sweep_key " \
  "FROM runs r JOIN experiments e ON e.id = r.experiment_id GROUP BY " RUNX_SWEEP_KEY("r") ") "
constexpr const char* kNewestFirst = "ORDER BY s.started_at DESC, s.id DESC";

bool AllDigits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

bool AllHex(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isxdigit(c); });
}

std::string OfExperiment(const std::string& experiment) {
  return experiment.empty() ? "" : fmt::format(" of experiment '{}'", experiment);
}

// The newest sweep that is not running (of `experiment` when not empty).
std::optional<int64_t> Latest(SQLite::Database& db, const std::string& experiment) {
  SQLite::Statement q(db, fmt::format(RUNX_SWEEPS "SELECT s.id FROM sweeps s WHERE NOT s.running AND (?1 = '' OR "
                                                  "s.experiment = ?1) {} LIMIT 1",
                                      kNewestFirst));
  q.bind(1, experiment);
  if (!q.executeStep()) return std::nullopt;
  return q.getColumn(0).getInt64();
}

// The newest sweep before sweep `latest` (not running) of the same experiment name.
std::optional<int64_t> Before(SQLite::Database& db, int64_t latest) {
  SQLite::Statement q(db, fmt::format(RUNX_SWEEPS "SELECT s.id FROM sweeps s, sweeps l WHERE l.id = ? AND "
                                                  "s.experiment = l.experiment AND NOT s.running "
                                                  "AND (s.started_at < l.started_at OR (s.started_at = l.started_at "
                                                  "AND s.id < l.id)) {} LIMIT 1",
                                      kNewestFirst));
  q.bind(1, latest);
  if (!q.executeStep()) return std::nullopt;
  return q.getColumn(0).getInt64();
}

// The first run of run `id`'s sweep.
int64_t SweepOf(SQLite::Database& db, int64_t id) {
  SQLite::Statement q(db, "SELECT min(sw.id) FROM runs sw WHERE sw.id IN " RUNX_SWEEP_RUNS_OF("?"));
  q.bind(1, id);
  q.executeStep();
  return q.getColumn(0).getInt64();
}

// The newest sweep with a run that `where` (a condition on run alias r, parameters ?1 and ?2)
// selects, of experiment ?3 when not empty.
std::optional<int64_t> NewestWhere(SQLite::Database& db, const std::string& where, const std::string& p1,
                                   const std::string& p2, const std::string& experiment) {
  SQLite::Statement q(db, fmt::format(RUNX_SWEEPS "SELECT s.id FROM sweeps s WHERE (?3 = '' OR s.experiment = ?3) "
                                                  "AND EXISTS (SELECT 1 FROM runs r WHERE " RUNX_SWEEP_KEY(
                                                      "r") " = s.sweep_key AND ({})) {} LIMIT 1",
                                      where, kNewestFirst));
  q.bind(1, p1);
  q.bind(2, p2);
  q.bind(3, experiment);
  if (!q.executeStep()) return std::nullopt;
  return q.getColumn(0).getInt64();
}

int64_t ByRevisionOrTag(SQLite::Database& db, const std::string& ref, const std::string& experiment) {
  if (const auto tagged = NewestWhere(db, "r.tag = ?1", ref, "", experiment)) return *tagged;
  std::string prefix = ref;
  std::transform(prefix.begin(), prefix.end(), prefix.begin(), [](unsigned char c) { return std::tolower(c); });
  if (prefix.size() < 4 || !AllHex(prefix)) {
    // A mistyped 'latest' or tag gets the closest name.
    std::vector<std::string> names = {"latest", "previous"};
    SQLite::Statement tags(db,
                           "SELECT DISTINCT r.tag FROM runs r JOIN experiments e ON e.id = r.experiment_id "
                           "WHERE r.tag IS NOT NULL AND r.tag <> '' AND (?1 = '' OR e.name = ?1)");
    tags.bind(1, experiment);
    while (tags.executeStep()) names.push_back(tags.getColumn(0).getString());
    const std::string guess = base::SuggestName(ref, names);
    throw StoreError(fmt::format(
        "'{}' is not a run: expected a run id, 'latest', 'previous', a tag (runx run --tag) or a git "
        "revision (4 or more hex digits of the commit of your experiment's repository or of runx's build){}",
        ref, guess.empty() ? "" : fmt::format("; did you mean '{}'?", guess)));
  }
  // runx records a 12-digit sha of itself: a longer revision (a full `git rev-parse`) matches it too.
  const char* matches =
      "(substr(lower({0}), 1, length(?1)) = ?1 OR (length({0}) >= 7 AND substr(?1, 1, length({0})) = lower({0})))";
  SQLite::Statement shas(db, fmt::format("SELECT DISTINCT sha FROM (SELECT r.user_git_sha AS sha, r.experiment_id "
                                         "FROM runs r WHERE {} UNION SELECT r.git_sha, r.experiment_id FROM runs r "
                                         "WHERE {}) x JOIN experiments e ON e.id = x.experiment_id "
                                         "WHERE (?2 = '' OR e.name = ?2) ORDER BY sha",
                                         fmt::format(matches, "r.user_git_sha"), fmt::format(matches, "r.git_sha")));
  shas.bind(1, prefix);
  shas.bind(2, experiment);
  std::vector<std::string> found;
  while (shas.executeStep()) found.push_back(shas.getColumn(0).getString());
  if (found.empty()) {
    throw StoreError(
        fmt::format("no run{} has the tag '{}' or was made at a git revision starting with '{}' (of your "
                    "experiment's repository or of runx's build)",
                    OfExperiment(experiment), ref, ref));
  }
  if (found.size() > 1) {
    throw StoreError(fmt::format("git revision '{}' is ambiguous: runs were made at {}; give more digits", ref,
                                 fmt::join(found, ", ")));
  }
  return *NewestWhere(db, "r.user_git_sha = ?1 OR r.git_sha = ?1", found[0], "", experiment);
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
      // A number beyond int64 is no run either (not an internal error).
      int64_t id = 0;
      const auto [end, ec] = std::from_chars(ref.data(), ref.data() + ref.size(), id);
      SQLite::Statement q(db, "SELECT 1 FROM runs WHERE id = ?");
      q.bind(1, id);
      if (ec != std::errc() || end != ref.data() + ref.size() || !q.executeStep()) {
        throw StoreError(fmt::format("no run {} in results store '{}'", ref, store.path()));
      }
      return SweepOf(db, id);
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
    return ByRevisionOrTag(db, ref, experiment);
  } catch (const SQLite::Exception& e) {
    throw StoreError(fmt::format("cannot look for run '{}' in '{}': {}", ref, store.path(), e.what()));
  }
}

RunOverview ReadRunOverview(Store& store, int64_t run_id) {
  SQLite::Database& db = store.db();
  RunOverview o;
  try {
    SQLite::Statement exists(db, "SELECT 1 FROM runs WHERE id = ?");
    exists.bind(1, run_id);
    if (!exists.executeStep()) throw StoreError(fmt::format("no run {} in results store '{}'", run_id, store.path()));
    SQLite::Statement q(
        db,
        "SELECT r.id, e.name, r.status, r.started_at, coalesce(r.finished_at, ''), r.host, "
        "coalesce(r.runx_version, ''), coalesce(r.git_sha, ''), r.git_dirty, coalesce(r.build_type, ''), "
        "coalesce(r.runx_build, ''), coalesce(r.overrides, '[]'), coalesce(r.user_git_sha, ''), r.user_git_dirty, "
        "coalesce(r.tag, ''), coalesce(r.note, ''), EXISTS (SELECT 1 FROM trials t WHERE t.run_id = r.id) "
        "FROM runs r JOIN experiments e ON e.id = r.experiment_id WHERE r.id IN " RUNX_SWEEP_RUNS_OF(
            "?") " ORDER BY r.id");
    q.bind(1, run_id);
    std::set<std::string> statuses, hosts, tags, notes;
    o.measured = false;
    while (q.executeStep()) {
      const int64_t id = q.getColumn(0).getInt64();
      o.runs.push_back(id);
      statuses.insert(q.getColumn(2).getString());
      hosts.insert(q.getColumn(5).getString());
      if (!q.getColumn(14).getString().empty()) tags.insert(q.getColumn(14).getString());
      if (!q.getColumn(15).getString().empty()) notes.insert(q.getColumn(15).getString());
      o.measured = o.measured || q.getColumn(16).getInt() != 0;
      o.started_at =
          o.started_at.empty() ? q.getColumn(3).getString() : std::min(o.started_at, q.getColumn(3).getString());
      o.finished_at = std::max(o.finished_at, q.getColumn(4).getString());
      if (o.runs.size() > 1) continue;  // the rest describes the sweep's first run
      o.id = id;
      o.experiment = q.getColumn(1).getString();
      o.runx_version = q.getColumn(6).getString();
      o.git_sha = q.getColumn(7).getString();
      if (!q.getColumn(8).isNull()) o.git_dirty = q.getColumn(8).getInt() != 0;
      o.build_type = q.getColumn(9).getString();
      o.runx_build = q.getColumn(10).getString();
      o.overrides_json = q.getColumn(11).getString();
      o.user_git_sha = q.getColumn(12).getString();
      if (!q.getColumn(13).isNull()) o.user_git_dirty = q.getColumn(13).getInt() != 0;
    }
    // A sweep is running while any of its runs is, and otherwise as far as its least finished run.
    for (const char* status : {"running", "interrupted", "failed", "ok"}) {
      if (statuses.count(status)) {
        o.status = status;
        break;
      }
    }
    if (o.status.empty() && !statuses.empty()) o.status = *statuses.begin();
    if (o.status == "running") o.finished_at = "";
    o.host = fmt::format("{}", fmt::join(hosts, ","));
    o.tag = fmt::format("{}", fmt::join(tags, ","));
    o.note = fmt::format("{}", fmt::join(notes, "; "));
    SQLite::Statement devices(db, "SELECT DISTINCT t.device FROM trials t WHERE t.id IN " RUNX_SWEEP_TRIALS_OF(
                                      "?") " AND t.device <> '' ORDER BY t.device");
    devices.bind(1, run_id);
    o.devices = Strings(devices);
    SQLite::Statement platforms(
        db, "SELECT DISTINCT t.platform_hash FROM trials t WHERE t.id IN " RUNX_SWEEP_TRIALS_OF(
                "?") " AND t.status = 'ok' AND coalesce(t.platform_hash, '') <> '' ORDER BY t.platform_hash");
    platforms.bind(1, run_id);
    o.platforms = Strings(platforms);
    SQLite::Statement env(db, "SELECT key, value FROM environment WHERE run_id = ? AND trial_id IS NULL");
    env.bind(1, o.id);
    while (env.executeStep()) o.environment[env.getColumn(0).getString()] = env.getColumn(1).getString();
  } catch (const SQLite::Exception& e) {
    throw StoreError(fmt::format("cannot read run {} from results store '{}': {}", run_id, store.path(), e.what()));
  }
  return o;
}

std::vector<int64_t> ListRuns(Store& store, const std::string& experiment, int limit, bool with_reuse) {
  std::vector<int64_t> out;
  try {
    SQLite::Statement q(store.db(), fmt::format(RUNX_SWEEPS "SELECT s.id FROM sweeps s WHERE s.experiment = ? AND "
                                                            "(? OR s.measured) {} LIMIT ?",
                                                kNewestFirst));
    q.bind(1, experiment);
    q.bind(2, with_reuse ? 1 : 0);
    q.bind(3, static_cast<int64_t>(limit > 0 ? limit : -1));
    while (q.executeStep()) out.push_back(q.getColumn(0).getInt64());
  } catch (const SQLite::Exception& e) {
    throw StoreError(fmt::format("cannot list the runs of '{}' in '{}': {}", experiment, store.path(), e.what()));
  }
  return out;
}

std::optional<std::string> LatestExperiment(Store& store) {
  try {
    SQLite::Statement q(store.db(),
                        "SELECT e.name FROM runs r JOIN experiments e ON e.id = r.experiment_id "
                        "ORDER BY r.started_at DESC, r.id DESC LIMIT 1");
    if (!q.executeStep()) return std::nullopt;
    return q.getColumn(0).getString();
  } catch (const SQLite::Exception& e) {
    throw StoreError(fmt::format("cannot read the runs of '{}': {}", store.path(), e.what()));
  }
}

std::vector<std::string> ListExperiments(Store& store) {
  std::vector<std::string> names;
  try {
    SQLite::Statement q(store.db(),
                        "SELECT DISTINCT e.name FROM experiments e JOIN runs r ON r.experiment_id = e.id "
                        "ORDER BY e.name");
    while (q.executeStep()) names.push_back(q.getColumn(0).getString());
  } catch (const SQLite::Exception& e) {
    throw StoreError(fmt::format("cannot read the experiments of '{}': {}", store.path(), e.what()));
  }
  return names;
}

std::vector<ProcessRate> ReadProcessRates(Store& store, const std::vector<std::string>& config_hashes) {
  std::vector<ProcessRate> out;
  try {
    // One statement per configuration: the trials_identity index finds its trials.
    SQLite::Statement q(store.db(),
                        "SELECT t.id, t.config_hash, t.env_hash, coalesce(r.host, ''), "
                        "coalesce(" RUNX_SWEEP_KEY("r") ", ''), rate.value, "
                        "(SELECT value FROM metrics m WHERE m.trial_id = t.id AND m.step IS NULL "
                        " AND m.name = 'noise.other_cpus'), "
                        "(SELECT value FROM metrics m WHERE m.trial_id = t.id AND m.step IS NULL "
                        " AND m.name = 'noise.cpus') "
                        "FROM trials t JOIN metrics rate ON rate.trial_id = t.id AND rate.step IS NULL "
                        "AND rate.name = 'samples_per_s' AND rate.value > 0 "
                        "LEFT JOIN runs r ON r.id = t.run_id "
                        "WHERE t.config_hash = ? AND t.status = 'ok' ORDER BY t.id");
    std::set<std::string> seen;
    for (const std::string& hash : config_hashes) {
      if (hash.empty() || !seen.insert(hash).second) continue;
      q.bind(1, hash);
      while (q.executeStep()) {
        ProcessRate p;
        p.trial_id = q.getColumn(0).getInt64();
        p.config_hash = q.getColumn(1).getString();
        p.env_hash = q.getColumn(2).getString();
        p.host = q.getColumn(3).getString();
        p.sweep = q.getColumn(4).getString();
        p.samples_per_s = q.getColumn(5).getDouble();
        if (!q.getColumn(6).isNull()) p.other_cpus = q.getColumn(6).getDouble();
        if (!q.getColumn(7).isNull()) p.cpus = q.getColumn(7).getDouble();
        out.push_back(std::move(p));
      }
      q.reset();
    }
  } catch (const SQLite::Exception& e) {
    throw StoreError(fmt::format("cannot read the measurements of '{}': {}", store.path(), e.what()));
  }
  std::sort(out.begin(), out.end(), [](const ProcessRate& a, const ProcessRate& b) { return a.trial_id < b.trial_id; });
  return out;
}

}  // namespace runx::store

#pragma once
// Reading runs back for `runx compare` and `runx history`: which run a reference names (`latest`,
// `previous`, a run id, a git revision), what a run was (build, host, devices, environment), the
// runs of an experiment, and the identities of a run's trials. No LibTorch.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "store/store.h"

namespace runx::store {

/// A run as compare and history describe it.
struct RunOverview {
  int64_t id = 0;
  std::string experiment;  ///< experiments.name
  std::string status;      ///< running | ok | failed | interrupted
  std::string started_at;
  std::string finished_at;  ///< "" while running
  std::string host;
  std::string runx_version;
  std::string git_sha;
  std::optional<bool> git_dirty;
  std::string build_type;
  std::string runx_build;  ///< build identity (sha256 of the binary and its plugins)
  std::string overrides_json = "[]";
  std::vector<std::string> devices;                ///< distinct trials.device of its trials, sorted
  std::vector<std::string> platforms;              ///< distinct trials.platform_hash of its ok trials, sorted
  std::map<std::string, std::string> environment;  ///< the run's environment rows (trial_id NULL)
};

/// What identifies a trial of a run beyond Store::ReadRunTrials: its config and platform identity.
struct TrialIdentity {
  std::string config_hash;  ///< '' for trials migrated from a schema 1 or 2 store
  std::string platform_hash;
};

/// Resolves a run reference of `runx compare` / `runx history`:
///   - a number: that run id;
///   - `latest`: the newest run that is not running (of `experiment` when not empty);
///   - `previous`: the newest run before `latest` with the same experiment name as `latest`;
///   - anything else: a git revision, a prefix (4 hex digits or more) of runs.git_sha: the newest
///     run of that build (of `experiment` when not empty); a longer revision (40 digits) matches
///     the shorter sha runx records. A prefix that names two commits is refused with the commits
///     it matches.
/// Throws StoreError with a message for people when nothing matches.
int64_t ResolveRun(Store& store, const std::string& ref, const std::string& experiment = "");

/// The run `run_id`; throws StoreError when there is none.
RunOverview ReadRunOverview(Store& store, int64_t run_id);

/// Ids of the runs of experiment `experiment` (by name), newest first, at most `limit` (all when
/// limit <= 0).
std::vector<int64_t> ListRuns(Store& store, const std::string& experiment, int limit);

/// The experiment name of the newest run of the store; nullopt for a store without runs.
std::optional<std::string> LatestExperiment(Store& store);

/// The identities of the trials of run `run_id` (run_trials), by trial id.
std::map<int64_t, TrialIdentity> ReadTrialIdentities(Store& store, int64_t run_id);

}  // namespace runx::store

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

/// A run as compare and history describe it: one run, or a sweep that ran as several runs
/// (shards: RunInfo::sweep_uid), described as one.
struct RunOverview {
  int64_t id = 0;             ///< the sweep's first run
  std::vector<int64_t> runs;  ///< every run of the sweep, `id` first; one for a run alone
  std::string experiment;     ///< experiments.name
  std::string status;         ///< running | ok | failed | interrupted
  std::string started_at;
  std::string finished_at;  ///< "" while running
  std::string host;
  std::string runx_version;
  std::string git_sha;
  std::optional<bool> git_dirty;
  std::string build_type;
  std::string runx_build;  ///< build identity (sha256 of the binary and its plugins)
  std::string overrides_json = "[]";
  std::string user_git_sha;  ///< the commit of the repository holding the experiment file; "" outside one
  std::optional<bool> user_git_dirty;
  std::string tag;                                 ///< --tag; "" without
  std::string note;                                ///< --note; "" without
  bool measured = true;                            ///< false when the run only reused earlier results (nothing new)
  std::vector<std::string> devices;                ///< distinct trials.device of its trials, sorted
  std::vector<std::string> platforms;              ///< distinct trials.platform_hash of its ok trials, sorted
  std::map<std::string, std::string> environment;  ///< the run's environment rows (trial_id NULL)
};

/// One measurement of a configuration, one process: what the run-to-run spread of a throughput is
/// estimated from (report::SpreadBook).
struct ProcessRate {
  int64_t trial_id = 0;
  std::string config_hash;
  std::string env_hash;
  std::string host;                  ///< of the run that measured it
  std::string sweep;                 ///< the sweep key of the run that measured it
  double samples_per_s = 0;          ///< the trial's metric: pooled over its measured steps
  std::optional<double> other_cpus;  ///< noise.other_cpus: CPUs other processes used meanwhile
  std::optional<double> cpus;        ///< noise.cpus
};

/// Resolves a run reference of `runx compare` / `runx history` to a run id: the first run of its
/// sweep (a shard names the sweep it is part of):
///   - a number: that run;
///   - `latest`: the newest run that is not running (of `experiment` when not empty);
///   - `previous`: the newest run before `latest` with the same experiment name as `latest`;
///   - a tag (`runx run --tag`): the newest run with that tag;
///   - anything else: a git revision, a prefix (4 hex digits or more) of the commit of the user's
///     repository that held the experiment file (runs.user_git_sha) or of runx's own build
///     (runs.git_sha): the newest run at that commit (of `experiment` when not empty); a longer
///     revision (40 digits) matches the shorter sha runx records of itself. A prefix that names
///     two commits is refused with the commits it matches.
/// Runs are ordered by when their sweep started. Throws StoreError with a message for people when
/// nothing matches.
int64_t ResolveRun(Store& store, const std::string& ref, const std::string& experiment = "");

/// The run `run_id` with the other runs of its sweep; throws StoreError when there is none.
RunOverview ReadRunOverview(Store& store, int64_t run_id);

/// The runs of experiment `experiment` (by name), one per sweep (its first run), newest first, at
/// most `limit` (all when limit <= 0). Without `with_reuse`, a sweep that only reused earlier
/// results (measured nothing) is left out.
std::vector<int64_t> ListRuns(Store& store, const std::string& experiment, int limit, bool with_reuse = false);

/// The experiment name of the newest run of the store; nullopt for a store without runs.
std::optional<std::string> LatestExperiment(Store& store);

/// The names of the experiments with a run in the store, sorted.
std::vector<std::string> ListExperiments(Store& store);

/// Every ok trial of the store whose config identity is one of `config_hashes`, with its
/// samples_per_s metric (trials without it are left out), in trial id order.
std::vector<ProcessRate> ReadProcessRates(Store& store, const std::vector<std::string>& config_hashes);

}  // namespace runx::store

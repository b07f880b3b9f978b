#pragma once
// The folder of one `runx submit --slurm`: its scripts, the logs and results store of each array
// task, the exit status each job leaves, and `submission.json`, which `runx submit --status`
// reads back. No LibTorch.
#include <optional>
#include <string>
#include <vector>

namespace runx::slurm {

/// Where each file of a submission lives, below its folder `dir` (an absolute path).
/// A shard is named by a number, or by a shell expression such as "$shard" in the scripts.
struct Layout {
  std::string dir;

  std::string ArrayScript() const;  ///< array.sbatch: one task per shard
  std::string MergeScript() const;  ///< merge.sbatch: the dependent merge job
  std::string Manifest() const;     ///< submission.json
  std::string StoresDir() const;    ///< stores/
  std::string LogsDir() const;      ///< logs/
  std::string ExitDir() const;      ///< exit/: a job's exit status, written when it ends
  std::string SeedStore() const;    ///< stores/seed.db: the results store as submitted, for reuse
  std::string ShardStore(const std::string& shard) const;                           ///< stores/shard-I.db
  std::string ShardLog(const std::string& shard, const std::string& stream) const;  ///< logs/shard-I.out|err
  std::string ShardExit(const std::string& shard) const;                            ///< exit/shard-I
  std::string MergeLog(const std::string& stream) const;                            ///< logs/merge.out|err
  std::string MergeExit() const;                                                    ///< exit/merge
};

/// What was submitted: written once both jobs are in SLURM's queue.
struct Manifest {
  std::string experiment;    ///< the experiment file (absolute)
  std::string name;          ///< the experiment's name
  std::string store;         ///< the results store the merge job writes (absolute)
  std::string workdir;       ///< where the jobs run
  std::string submitted_at;  ///< ISO-8601 UTC
  std::string array_job;     ///< SLURM job id of the array
  std::string merge_job;     ///< SLURM job id of the merge job
  int shards = 1;
  int max_parallel = 0;           ///< 0: no limit
  std::vector<int> shard_trials;  ///< trials each shard runs, by shard
  std::vector<std::string> overrides;
};

std::string ToJson(const Manifest& m);
/// Throws std::runtime_error with a message for people when `text` is not a manifest.
Manifest ManifestFromJson(const std::string& text);

/// The trials shard i of n runs (those with order_index % n == i, see spec::Shard) of `trials`.
std::vector<int> TrialsPerShard(int trials, int shards);

/// The folder that holds the submissions into the results store `store`: `slurm` beside it
/// (/r/runx.db -> /r/slurm).
std::string SubmissionsDirOf(const std::string& store);

/// The folder for a new submission of experiment `name` at `utc_stamp` (e.g. 20261203T153700Z)
/// below `parent`: `parent/NAME-STAMP`, with `-2`, `-3`, ... when that exists. NAME keeps
/// letters, digits, '.', '_' and '-' (others become '-').
std::string NewSubmissionDir(const std::string& parent, const std::string& name, const std::string& utc_stamp);

/// The newest submission folder (by its manifest's submitted_at, then name) below `parent`;
/// nullopt when there is none.
std::optional<std::string> LatestSubmissionDir(const std::string& parent);

/// Whether `path` can go into an `#SBATCH` line as it is: no blank, quote, backslash, '%' (a
/// SLURM file name pattern) or control character. nullopt when it can, else the character.
std::optional<char> UnsafeForSbatch(const std::string& path);

}  // namespace runx::slurm

#pragma once
// The two sbatch scripts of `runx submit --slurm`, as text, from the options alone (nothing is
// read or run here, so a test compares them whole):
//   array.sbatch  a job array, one task per shard: `runx run FILE --shard $SLURM_ARRAY_TASK_ID/N`
//                 into a results store of the task's own (one writer per SQLite file);
//   merge.sbatch  submitted with --dependency=afterany:<array>,singleton: once every task has
//                 ended, however, `runx merge` of the shard stores there are into the user's store,
//                 never beside another merge into the same store (one writer per SQLite file).
// No LibTorch.
#include <string>
#include <vector>

#include "slurm/layout.h"

namespace runx::slurm {

/// Everything the scripts are made of. Paths are absolute: the jobs run on other machines.
struct JobSpec {
  std::string runx;                    ///< the runx binary the jobs run
  std::string experiment;              ///< the experiment file
  std::vector<std::string> overrides;  ///< --set key=value, in order
  std::string workdir;                 ///< the jobs' working directory (relative paths in the experiment)
  std::string store;                   ///< the results store the merge job writes into
  std::string artifacts;               ///< RUNX_ARTIFACT_DIR of the tasks unless the environment sets it
  std::string compiled;                ///< RUNX_COMPILED_DIR of the tasks (compiled_step's packages), likewise
  Layout layout;                       ///< the submission's folder
  std::string job_name;
  int shards = 1;
  int max_parallel = 0;                     ///< array tasks at once (`%K`); 0: as many as SLURM starts
  int gpus_per_trial = 0;                   ///< GPUs of each array task (`--gres=gpu:N`); 0: none asked for
  int cpus_per_task = 0;                    ///< 0: the partition's default
  std::string partition;                    ///< "": the cluster's default partition
  std::string time;                         ///< time limit of each array task; "": the partition's
  std::vector<std::string> sbatch_options;  ///< more sbatch options for both jobs, e.g. --account=a
  std::vector<std::string> setup;           ///< shell lines both jobs run first (module load, source ...)
  bool reuse = true;       ///< start each shard store from the seed store, if there is one (its ok trials are reused)
  bool force = false;      ///< runx run --force
  bool any_build = false;  ///< runx run --any-build
  /// runx run --sweep-id of every task: the shards are one sweep in the merged store, one run for
  /// the speedup table, compare, history and the report. Empty: none passed.
  std::string sweep_id;
};

/// The merge job's name: `runx-merge-` and a hash of the store's path, the same for every
/// submission into one store, so that SLURM's `singleton` dependency runs their merges one at a time.
std::string MergeJobName(const std::string& store);

/// `0-3`, or `0-3%2` with a limit below the number of shards.
std::string ArraySpec(int shards, int max_parallel);

/// `s` as one word for bash: unchanged when it is plain, else in single quotes.
std::string ShellQuote(const std::string& s);

std::string ArrayScript(const JobSpec& spec);
std::string MergeScript(const JobSpec& spec);

/// The sbatch command lines that submit them (argv); the merge job's names the array's job id.
std::vector<std::string> ArraySubmitCommand(const JobSpec& spec);
std::vector<std::string> MergeSubmitCommand(const JobSpec& spec, const std::string& array_job);

}  // namespace runx::slurm

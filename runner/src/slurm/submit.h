#pragma once
// Making and submitting one `runx submit --slurm`: the job spec and manifest made from the
// experiment's plan and the command's options, the submission's folder written, the results
// store copied for reuse, the job array and the merge job handed to sbatch. Nothing is printed:
// refusals are SubmitError, the rest comes back as Messages (slurm/message.h). No LibTorch.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "slurm/layout.h"
#include "slurm/message.h"
#include "slurm/script.h"

namespace runx::slurm {

/// What the command asked for (`runx submit FILE --slurm ...`).
struct SubmitRequest {
  std::string file;                    ///< the experiment file as named
  std::vector<std::string> overrides;  ///< --set key=value, in order
  std::optional<std::string> db;       ///< --db (else the experiment's `results`)
  int shards = 0;                      ///< 0: one per trial
  int max_parallel = 0;                ///< array tasks at once; 0: no limit
  int gpus_per_trial = 0;              ///< --gres=gpu:N of each array task
  int cpus_per_task = 0;               ///< 0: the partition's default
  std::string partition, time;
  std::vector<std::string> sbatch_options;  ///< more sbatch options (both jobs)
  std::vector<std::string> setup;           ///< shell lines both jobs run first
  bool no_reuse = false, force = false, any_build = false;
};

/// What a submission takes from the process that makes it; a test passes its own.
struct Origin {
  std::string runx;        ///< the runx binary the jobs run; "" when it cannot be found
  std::string runx_error;  ///< why it cannot
  std::string workdir;     ///< the current directory (the jobs' working directory)
  std::string utc_stamp;   ///< names the submission's folder, e.g. 20261203T153700Z
};

/// This process's: /proc/self/exe, the current directory, the time now.
Origin CurrentOrigin();

/// A submission made, not yet submitted.
struct Submission {
  JobSpec spec;
  Manifest manifest;              ///< all but the job ids and the time of submission
  std::vector<Message> warnings;  ///< e.g. a CUDA experiment asking for no GPU
};

/// The job spec and manifest of `request` for the experiment whose resolved config is `config`
/// and whose plan has `trials` trials. Writes nothing. Throws SubmitError when the request is
/// invalid (no trial, more shards than trials, a folder or path the scripts cannot name).
Submission MakeSubmission(const SubmitRequest& request, const nlohmann::json& config, int trials,
                          const Origin& origin = CurrentOrigin());

/// `runx submit --dry-run`'s text: the scripts and the sbatch commands that would submit them.
std::string DryRunText(const JobSpec& spec);

/// What SubmitJobs did.
struct Submitted {
  bool ok = false;                ///< both jobs are in SLURM's queue and the manifest is written
  Manifest manifest;              ///< with the job ids and the time, as written
  std::string seeded;             ///< the line saying the tasks reuse the store's results; "" when not
  std::vector<Message> messages;  ///< warnings and errors, in the order they arose
};

/// Writes the submission's folder and scripts, copies the results store to the seed store (unless
/// the spec says no reuse, or force), submits the job array then the merge job, and writes the
/// manifest. When sbatch refuses the array, the folder is removed (nothing was submitted).
Submitted SubmitJobs(const Submission& submission);

}  // namespace runx::slurm

#pragma once
// What SLURM says about the jobs of a submission: sacct where the cluster keeps accounting, else
// squeue (which knows an ended job for MinJobAge, 5 minutes by default). No LibTorch.
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace runx::slurm {

struct JobState {
  std::string state;      ///< PENDING, RUNNING, COMPLETED, FAILED, CANCELLED, TIMEOUT, ...
  std::string exit_code;  ///< "status:signal" as sacct writes it; "" where unknown
  std::string reason;     ///< squeue's reason for a pending job (e.g. Dependency); "" where none
};

/// States by job id: "12" for a job, "12_3" for task 3 of array 12.
using JobStates = std::map<std::string, JobState>;

/// `sacct --noheader --parsable2 --allocations --format=JobID,State,ExitCode` output. Pending
/// array tasks come as one line, "12_[2-5%2]", expanded here to 12_2 ... 12_5.
JobStates ParseSacct(const std::string& text);
/// `squeue --noheader --array --states=all --format=%i|%T|%r` output (ranges expanded as above).
JobStates ParseSqueue(const std::string& text);

/// "12_[1,3-5%2]" -> 12_1 12_3 12_4 12_5; any other id as it is.
std::vector<std::string> ExpandJobId(const std::string& id);

/// Whether a job in `state` has ended (COMPLETED, FAILED, CANCELLED, TIMEOUT, NODE_FAIL, ...).
bool IsFinal(const std::string& state);

/// The job id `sbatch --parsable` printed ("12" or "12;cluster"); nullopt when there is none.
std::optional<std::string> ParseJobId(const std::string& sbatch_out);

struct QueueReport {
  JobStates jobs;
  std::string source;   ///< "sacct" or "squeue"; "" when neither answered
  std::string problem;  ///< why neither answered (first line of their errors, and the package to install where
                        ///< neither is there); "" when one did
};

/// The states of the jobs `job_ids` (and of their array tasks), asking sacct, then squeue.
QueueReport QueryJobs(const std::vector<std::string>& job_ids);

}  // namespace runx::slurm

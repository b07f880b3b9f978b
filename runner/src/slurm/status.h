#pragma once
// Reading back what the jobs of a submission did (`runx submit --status` / `--wait`): from SLURM
// (sacct or squeue, slurm/queue.h), the exit status each job leaves in the submission's folder and
// the shard stores. Nothing is printed: the command renders a SubmissionStatus and the Messages
// of a wait. No LibTorch.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "slurm/layout.h"
#include "slurm/message.h"
#include "slurm/queue.h"

namespace runx::slurm {

/// The manifest of the submission in `layout.dir`. Throws SubmitError when the folder has none or
/// it cannot be read.
Manifest ReadSubmission(const Layout& layout);

/// The newest submission into the results store `store` (below SubmissionsDirOf its absolute
/// path). Throws SubmitError when there is none.
std::string LatestSubmissionFor(const std::string& store);

/// "2 RUNNING, 1 PENDING": the array tasks of `m` by state, in the order first seen.
std::string CountStates(const QueueReport& q, const Manifest& m);

/// What --wait says when the jobs' states change: "shards: 2 RUNNING; merge: PENDING (Dependency)".
std::string ProgressLine(const QueueReport& q, const Manifest& m);

/// Waits until the merge job has ended (its exit status is written, or SLURM says it has ended
/// or no longer knows it), handing `say` a note when it starts and whenever the jobs' states
/// change, and a warning when SLURM does not answer.
void WaitForSubmission(const Layout& layout, const Manifest& m, const std::function<void(const Message&)>& say);

/// One job of a submission: an array task (a shard) or the merge job.
struct JobStatus {
  std::string name;         ///< the shard's number, or "merge"
  std::string job;          ///< SLURM's id ("12_0", "13"); "-" for a merge job never submitted
  std::string state;        ///< SLURM's state; "unknown", "not known to sacct", "not submitted"
  std::optional<int> exit;  ///< the exit status the job wrote when it ended
  std::string results;      ///< what its results store (a shard) or log (the merge) says
  bool ok = false;          ///< exit status 0
};

/// Everything `runx submit --status` shows.
struct SubmissionStatus {
  std::string source;   ///< where the states come from ("sacct", "squeue"); "" when SLURM did not answer
  std::string problem;  ///< why SLURM did not answer
  int trials = 0;       ///< in all the shards
  std::vector<JobStatus> shards;
  JobStatus merge;
  int ok_shards = 0;     ///< shards that exited 0
  int ended_shards = 0;  ///< shards that exited, or that SLURM says have ended
  bool merged = false;   ///< the merge job exited 0
  /// No merge exit status, and the merge job has ended or was never submitted: the shard stores
  /// are to be merged by hand.
  bool merge_did_not_run = false;
  bool AllOk() const { return merged && ok_shards == static_cast<int>(shards.size()); }
};

/// The status of the submission in `layout`, with SLURM's states `q`.
SubmissionStatus ReadStatus(const Layout& layout, const Manifest& m, const QueueReport& q);
/// The same, asking SLURM.
SubmissionStatus ReadStatus(const Layout& layout, const Manifest& m);

}  // namespace runx::slurm

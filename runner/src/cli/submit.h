#pragma once
// What `runx submit` (submit.cc) and `runx submit --status` / `--wait` (submit_status.cc) share:
// their messages, and reading back what the jobs of a submission did, from SLURM (sacct or
// squeue), the exit status each job leaves in the submission's folder and the shard stores.
#include <optional>
#include <string>

#include "slurm/layout.h"

namespace runx::cli {

/// "runx: error: WHAT" and, when given, "hint: HINT", on stderr.
void SubmitError(const std::string& what, const std::string& hint = "");

/// Reads the manifest of the submission in `dir`; nullopt after saying why on stderr.
std::optional<slurm::Manifest> ReadSubmission(const slurm::Layout& layout);

/// Waits until the merge job has ended (its exit status is written, or SLURM says it has ended
/// or no longer knows it), printing a line on stderr whenever the jobs' states change.
void WaitForSubmission(const slurm::Layout& layout, const slurm::Manifest& manifest);

/// Prints the status of every shard and of the merge; whether all of them ended ok.
bool PrintSubmissionStatus(const slurm::Layout& layout, const slurm::Manifest& manifest);

}  // namespace runx::cli

#pragma once
// What `runx submit` (submit.cc) and `runx submit --status` / `--wait` (submit_status.cc) share:
// printing slurm/'s messages and a submission's status (slurm/status.h reads it).
#include "slurm/layout.h"
#include "slurm/message.h"

namespace runx::cli {

/// On stderr: "runx: error: TEXT" (and "hint: HINT"), "runx: warning: TEXT" or "runx submit: TEXT".
void PrintMessage(const slurm::Message& message);

/// Prints the status of every shard and of the merge; whether all of them ended ok.
bool PrintSubmissionStatus(const slurm::Layout& layout, const slurm::Manifest& manifest);

}  // namespace runx::cli

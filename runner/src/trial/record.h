#pragma once
// The record of a trial: how it starts, how a failure is written into it, how it is finished.
#include <exception>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "store/store.h"
#include "trial/context.h"

namespace runx::engine {

/// A record starting now: its start time and status ok. What the trial is in its run (config,
/// label, identities, place in the plan) is written by the parent alone (sweep/record.h).
store::TrialRecord StartRecord();

/// Writes the failure `error` (thrown out of a trial's phases) into `rec`: an abort with the
/// status and reason the technique gave, out of memory as oom (IsOutOfMemory; std::bad_alloc as
/// kHostOutOfMemory), a data error or any other std::exception as failed, with its whole text as
/// error_detail. Anything else is rethrown.
void RecordFailure(std::exception_ptr error, const RunnerContext& ctx, store::TrialRecord& rec);

/// Finishes `rec`: the error is the first line of the failure and error_detail the whole text;
/// the notes become environment entries note.00, note.01, ...; finished_at is now.
void FinishRecord(store::TrialRecord& rec, const std::vector<std::string>& notes);

}  // namespace runx::engine

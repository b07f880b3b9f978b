#pragma once
// Finished trials that the store could not take: kept in a file each beside the store and
// recorded by the next run on it, so that a failed write costs no measurement. Torch-free.
#include <cstddef>
#include <string>

#include "store/store.h"
#include "sweep/sweep.h"

namespace runx::engine {

/// Where trial records that could not be written to the store at `db_path` wait:
/// "<db_path>.pending".
std::string PendingDir(const std::string& db_path);

/// Writes `rec` into PendingDir (a file per trial, written whole or not at all); what the store's
/// error message should add: where the record is kept, or that it could not be kept and why.
std::string KeepPending(const std::string& db_path, const store::TrialRecord& rec);

/// Records the trials a failed store write left in PendingDir; returns how many. A file that is
/// no record is left as it is, with a warning to `observer`.
size_t RecordPending(store::Store& store, SweepObserver& observer);

}  // namespace runx::engine

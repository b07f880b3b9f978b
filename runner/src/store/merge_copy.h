#pragma once
// The copy of one input store into the output, for MergeStores (store/merge.h). Private to the
// store.
#include <cstdint>
#include <vector>

#include "store/merge.h"

namespace SQLite {
class Database;
}

namespace runx::store {

/// Copies the rows of every merged table of `in` (a store at the latest schema) that `out` lacks
/// into `out`, inside the caller's transaction, matching runs and trials by uid and experiments
/// by (name, path, sha256), and adds what it did to `counts`. The ids of the forced runs it adds
/// are appended to `forced_runs`: their reuse floor is the caller's to set.
void CopyStore(SQLite::Database& in, SQLite::Database& out, MergeCounts& counts, std::vector<int64_t>& forced_runs);

}  // namespace runx::store

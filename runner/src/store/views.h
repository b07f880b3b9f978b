#pragma once
// The views of the results store (trial_summary, speedups, steps_measured, run_summary), defined
// in one place and created after the migrations have run. Private to the store.
namespace SQLite {
class Database;
}

namespace runx::store {

/// Drops every view of `db` (views of older schemas included).
void DropViews(SQLite::Database& db);

/// Creates the views of the latest schema; `db` must be at the latest version and have none.
void CreateViews(SQLite::Database& db);

}  // namespace runx::store

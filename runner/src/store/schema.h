#pragma once
// Schema of the results store: the ordered list of forward migrations and the code that applies
// them. Private to the store (tests use it to exercise the migration machinery).
#include <string>
#include <vector>

namespace SQLite {
class Database;
}

namespace runx::store {

/// One forward step of the schema. `version` is the schema version after it is applied; the
/// versions of a migration list are 1, 2, 3, ... in order, with no gaps.
struct Migration {
  int version = 0;
  std::string sql;  ///< one or more statements, run in the same transaction as the version bump
};

/// The migrations of this runx, version 1 = the initial schema. Never edit a released entry:
/// append a new one.
const std::vector<Migration>& Migrations();

/// The schema version currently stored in `db` (0 for an empty database).
/// `path` is only used in messages.
int ReadSchemaVersion(SQLite::Database& db, const std::string& path);

/// Brings `db` to the last version of `migrations`, each step in its own IMMEDIATE transaction,
/// so a failed step leaves the store at the previous version. Throws StoreError when the store is
/// newer than `migrations` knows, or when the file holds tables but is not a runx store.
void Migrate(SQLite::Database& db, const std::vector<Migration>& migrations, const std::string& path);

}  // namespace runx::store

#pragma once
// `runx query`'s engine: SQL run on a results store opened read-only.
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace runx::store {

using Value = std::variant<std::monostate, int64_t, double, std::string>;  ///< NULL/int/real/text

struct QueryResult {
  std::vector<std::string> columns;
  std::vector<std::vector<Value>> rows;
};

/// Runs `sql` on the store at `path` opened READ-ONLY. A statement that would write fails with a
/// clear StoreError and changes nothing. A missing store is a clear error, not an empty file.
/// Several statements separated by ';' run in order, each checked before it runs; the result is
/// the last statement's (a refused or failing statement stops the run). SQL errors carry
/// SQLite's message, the statement and, where SQLite knows it, a caret under the error.
QueryResult QueryReadOnly(const std::string& path, const std::string& sql);

}  // namespace runx::store

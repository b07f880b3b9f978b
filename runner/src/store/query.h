#pragma once
// `runx query`'s engine: SQL run on a results store opened read-only, its result handed over row
// by row as SQLite steps it.
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

/// Receives a query's result while SQLite steps it, so a reader holds one row at a time however
/// large the result is (`runx query` of 20M rows must not need gigabytes).
class RowSink {
 public:
  virtual ~RowSink() = default;
  /// The result's column names: once, before any row (also when there are no rows).
  virtual void Begin(const std::vector<std::string>& columns) = 0;
  /// One row, a value per column; `values` lives only for the call. Throwing stops the query.
  virtual void Row(const std::vector<Value>& values) = 0;
  /// Every row has been given. Not called when the query fails.
  virtual void End() {}
};

/// Runs `sql` on the store at `path` opened READ-ONLY. A statement that would write fails with a
/// clear StoreError and changes nothing. A missing store is a clear error, not an empty file.
/// Several statements separated by ';' run in order, each checked before it runs; the result is
/// the last statement's (a refused or failing statement stops the run). SQL errors carry
/// SQLite's message, the statement and, where SQLite knows it, a caret under the error.
///
/// Only the last statement's rows reach `sink` (earlier statements run and their rows are
/// dropped), each as soon as SQLite steps it; an error while stepping may therefore come after
/// some rows were given. Reading leaves no -wal/-shm files beside a store that had none, and a
/// store on read-only media (a directory nothing can create files in) can be read: see
/// ChooseOpenMode.
void QueryReadOnly(const std::string& path, const std::string& sql, RowSink& sink);

/// The whole result in memory: for small results and tests (QueryReadOnly with a collecting sink).
QueryResult QueryReadOnly(const std::string& path, const std::string& sql);

/// Copies a consistent snapshot of the store at `path` into `dest` (a new file), reading the store
/// the way QueryReadOnly does: nothing in it or beside it changes, a live writer included
/// (`runx merge` reads its inputs so). Throws StoreError when it cannot be read (not a database).
/// `wait_ms`: how long to wait for a lock another process holds on the store.
void SnapshotReadOnly(const std::string& path, const std::string& dest, int wait_ms);

/// What QueryReadOnly looks at beside a store before it opens it.
struct StoreSite {
  bool wal_exists = false;    ///< PATH-wal: a writer has the store open, or left transactions
  uint64_t wal_size = 0;      ///< 0: the log holds no transaction
  bool shm_exists = false;    ///< PATH-shm: the log's index
  bool dir_writable = false;  ///< files can be created beside the store (false on read-only media)
};
StoreSite InspectStoreSite(const std::string& path);

enum class OpenMode {
  /// SQLITE_OPEN_READONLY as any SQLite reader: it sees a live writer's commits through the
  /// -wal/-shm files, creating them when missing; QueryReadOnly removes what it created (see
  /// query.cc) so a clean store stays clean.
  kReader,
  /// `immutable=1`: the file is read with no locks and no -wal/-shm. SQLite would otherwise need
  /// to create those files, which it cannot in a directory nobody can write: chosen only there,
  /// and only when no log holds transactions that the main file lacks. Safe because a writer too
  /// needs to create the -wal there (impossible on read-only media); a writer with more rights
  /// than the reader (root in a directory the reader may not write) is the one case it misses.
  kImmutable,
  /// Refused with a clear error: a -wal with transactions and no -shm in a read-only directory
  /// (SQLite needs the index to read the log and cannot create it there).
  kUnreadable,
};
/// kImmutable exactly when the directory is not writable and there is no log with content
/// beside the store (no -wal, or an empty one with no -shm); kReader where the directory is
/// writable or holds both -wal and -shm (SQLite then reads the log through a private copy of its
/// index); kUnreadable for a log with transactions and no index in a read-only directory.
OpenMode ChooseOpenMode(const StoreSite& site);
/// The URI that opens `path` with `immutable=1` (kImmutable), every byte but unreserved ones and
/// '/' escaped.
std::string ImmutableUri(const std::string& path);

/// How `path` is opened read-only as `runx query` opens it: the name SQLite is given (with
/// SQLITE_OPEN_READONLY | SQLITE_OPEN_URI) and the mode ChooseOpenMode picked. Throws StoreError
/// for kUnreadable, whose message ends "... to a writable place and `then`".
struct ReadOnlyOpening {
  std::string name;
  OpenMode mode;
};
ReadOnlyOpening ReadOnlyOpeningOf(const std::string& path, const std::string& then);

}  // namespace runx::store

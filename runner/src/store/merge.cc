#include "store/merge.h"

#include <SQLiteCpp/SQLiteCpp.h>
#include <fmt/format.h>
#include <sqlite3.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <system_error>
#include <vector>

#include "base/cleanup.h"
#include "base/remove_tree.h"
#include "base/time.h"
#include "store/merge_copy.h"
#include "store/query.h"
#include "store/schema.h"
#include "store/store.h"

namespace runx::store {
namespace {
namespace fs = std::filesystem;

// A fresh folder under the system's temporary directory for the inputs' snapshots, removed with
// its content when the merge ends, and by a signal that ends it (the files it will hold are
// registered); a later merge removes one whose merge was killed (SIGKILL).
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    const fs::path parent = fs::temp_directory_path();
    base::RemoveAbandonedFolders(parent.string(), "runx-merge-");
    const std::string path =
        (parent / fmt::format("runx-merge-{}-{}", static_cast<long>(::getpid()), counter++)).string();
    base::RemoveTree(path);
    try {
      folder_.emplace(path);
    } catch (const std::runtime_error& e) {
      throw StoreError(fmt::format("cannot create the temporary directory: {}", e.what()));
    }
    Keep(path);
    Keep(path + "/lock");
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    registered_.clear();
    folder_.reset();
  }
  fs::path path() const { return folder_->path(); }
  /// A snapshot file to be made in the folder: it and SQLite's files beside it go on a signal.
  fs::path File(const std::string& name) {
    const std::string file = folder_->path() + "/" + name;
    for (const char* suffix : {"", "-journal", "-wal", "-shm"}) Keep(file + suffix);
    return file;
  }

 private:
  void Keep(const std::string& path) { registered_.push_back(std::make_unique<base::RemoveOnSignal>(path)); }
  std::optional<base::OwnedFolder> folder_;
  std::vector<std::unique_ptr<base::RemoveOnSignal>> registered_;
};

// An input store as the merge reads it: a snapshot at the latest schema version, checked. It is
// opened again to be copied (one at a time: a merge of many shards holds one connection).
struct Input {
  std::string path;  // as named on the command line
  int schema_version = 0;
  std::string snapshot;
  int64_t runs_ended = 0;
};

bool HasTable(SQLite::Database& db, const char* name) {
  SQLite::Statement q(db, "SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?");
  q.bind(1, name);
  return q.executeStep();
}

// Checks that `path` is a runx store this runx can read and takes its snapshot into `copy`,
// migrated to the latest schema; throws StoreError naming the input otherwise.
Input ReadInput(const std::string& path, const fs::path& copy, const MergeOptions& options) {
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (!fs::exists(status)) throw MissingStoreError(fmt::format("cannot merge '{}': no such file", path));
  if (!fs::is_regular_file(status)) {
    throw StoreError(fmt::format("cannot merge '{}': not a file; name a results store (a .db file)", path));
  }
  try {
    SnapshotReadOnly(path, copy.string(), kLockWaitMs);
  } catch (const StoreError& e) {
    throw StoreError(fmt::format("cannot merge: {}", e.what()));
  }
  Input in{path, 0, copy.string()};
  try {
    SQLite::Database db(copy.string(), SQLite::OPEN_READWRITE);
    if (!HasTable(db, "schema_version")) {
      throw StoreError(
          fmt::format("cannot merge '{}': it is not a runx results store (it has no schema_version table)", path));
    }
    in.schema_version = ReadSchemaVersion(db, path);
    const int latest = LatestSchemaVersion();
    if (in.schema_version > latest) {
      throw StoreError(
          fmt::format("cannot merge '{}': it has schema version {}, this runx supports up to {}; upgrade runx", path,
                      in.schema_version, latest));
    }
    // An older input is read through a migrated copy: the input itself is never changed.
    if (in.schema_version < latest) Migrate(db, Migrations(), path);
    if (options.runners_ended) {
      // In the snapshot only: the input stays as it is.
      SQLite::Statement end(db,
                            "UPDATE runs SET status = 'interrupted', finished_at = coalesce(finished_at, ?) "
                            "WHERE status = 'running'");
      end.bind(1, base::UtcNow());
      in.runs_ended = end.exec();
    }
    SQLite::Statement running(db,
                              "SELECT id, host, coalesce(pid, 0), (SELECT count(*) FROM runs WHERE status = 'running') "
                              "FROM runs WHERE status = 'running' ORDER BY id LIMIT 1");
    if (running.executeStep() && !options.allow_running) {
      const int64_t n = running.getColumn(3).getInt64();
      throw StoreError(fmt::format(
          "cannot merge '{}': {} still running (run {} on host '{}', pid {}), so its results are not complete; "
          "merge it when it has ended, or pass --allow-running to merge it as it is now (a later merge brings "
          "the rest)",
          path, n == 1 ? std::string("a run is") : fmt::format("{} runs are", n), running.getColumn(0).getInt64(),
          running.getColumn(1).getString(), running.getColumn(2).getInt64()));
    }
  } catch (const SQLite::Exception& e) {
    throw StoreError(fmt::format("cannot merge '{}': it is not a readable runx results store ({})", path, e.what()));
  }
  return in;
}

// An existing output must be a runx store: refused here, before Store::Open, with a message
// for `runx merge` (Store::Open's own would suggest --db).
void CheckOutput(const std::string& out) {
  try {
    SQLite::Database db(out, SQLite::OPEN_READONLY, kLockWaitMs);  // a busy output is waited for
    const int tables = db.execAndGet("SELECT count(*) FROM sqlite_schema WHERE type = 'table'").getInt();
    if (tables == 0 || HasTable(db, "schema_version")) return;
  } catch (const SQLite::Exception& e) {
    if ((e.getErrorCode() & 0xff) == SQLITE_BUSY)
      throw StoreError(fmt::format("cannot merge into '{}': another process kept it locked for {} minutes ({})", out,
                                   kLockWaitMs / 60000, e.what()));
    throw StoreError(fmt::format(
        "cannot merge into '{}': it is not a runx results store ({}); name another output store", out, e.what()));
  }
  throw StoreError(fmt::format(
      "cannot merge into '{}': it is not a runx results store (it has tables but no schema_version); name another "
      "output store",
      out));
}

void RemoveStoreFiles(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) std::remove((path + suffix).c_str());
}

}  // namespace

MergeCounts& MergeCounts::operator+=(const MergeCounts& other) {
  runs_added += other.runs_added;
  runs_present += other.runs_present;
  runs_updated += other.runs_updated;
  trials_added += other.trials_added;
  trials_present += other.trials_present;
  memberships_added += other.memberships_added;
  experiments_added += other.experiments_added;
  return *this;
}

const std::vector<std::string>& MergedTables() {
  static const std::vector<std::string> kTables = {"experiments", "runs",        "trials",     "steps",
                                                   "metrics",     "environment", "run_trials", "variant_stats"};
  return kTables;
}

const std::vector<std::string>& MergeSkippedTables() {
  static const std::vector<std::string> kTables = {"claims", "schema_version"};
  return kTables;
}

MergeResult MergeStores(const std::string& out, const std::vector<std::string>& inputs, const MergeOptions& options) {
  if (inputs.empty()) throw StoreError("nothing to merge: name the stores to merge after the output store");
  std::error_code ec;
  const bool created = !fs::exists(out, ec);
  for (const std::string& path : inputs) {
    if (!created && fs::equivalent(out, path, ec)) {
      throw StoreError(fmt::format("cannot merge '{}' into itself: name another output store", path));
    }
  }

  // Every input is read and checked before the output is opened: a refused input changes nothing.
  TempDir temp;
  std::vector<Input> read;
  for (size_t i = 0; i < inputs.size(); ++i) {
    read.push_back(ReadInput(inputs[i], temp.File(fmt::format("input-{}.db", i)), options));
  }

  if (!created) CheckOutput(out);
  // An output this merge creates is removed by a signal that ends the merge, as by a failure.
  std::vector<std::unique_ptr<base::RemoveOnSignal>> new_output;
  if (created)
    for (const char* suffix : {"", "-journal", "-wal", "-shm"})
      new_output.push_back(std::make_unique<base::RemoveOnSignal>(out + suffix));
  std::optional<Store> store;
  try {
    store.emplace(Store::Open(out));
  } catch (const StoreError& e) {
    if (created) RemoveStoreFiles(out);
    throw StoreError(fmt::format("cannot merge into '{}': {}", out, e.what()));
  }

  MergeResult result;
  result.created = created;
  size_t current = 0;
  try {
    SQLite::Database& db = store->db();
    SQLite::Transaction tx(db, SQLite::TransactionBehavior::IMMEDIATE);
    std::vector<int64_t> forced_runs;
    for (current = 0; current < read.size(); ++current) {
      MergedInput merged{read[current].path, read[current].schema_version, read[current].runs_ended, {}};
      SQLite::Database in(read[current].snapshot, SQLite::OPEN_READONLY);
      CopyStore(in, db, merged.counts, forced_runs);
      result.total += merged.counts;
      result.inputs.push_back(std::move(merged));
    }
    // A --force run reuses no trial recorded before it started. Its floor was a trial id of its
    // own store; here every trial of this merge and before it counts as earlier than the run.
    SQLite::Statement floor(db, "UPDATE runs SET reuse_floor = (SELECT coalesce(max(id), 0) FROM trials) WHERE id = ?");
    for (const int64_t run : forced_runs) {
      floor.bind(1, run);
      floor.exec();
      floor.reset();
    }
    tx.commit();
  } catch (const std::exception& e) {
    // The transaction rolled back as it went out of scope.
    store.reset();
    if (created) RemoveStoreFiles(out);
    const std::string input = current < read.size() ? fmt::format(" from '{}'", read[current].path) : "";
    throw StoreError(fmt::format("cannot merge into '{}'{}: {}; nothing was merged", out, input, e.what()));
  }
  return result;
}

}  // namespace runx::store

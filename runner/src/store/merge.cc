#include "store/merge.h"

#include <SQLiteCpp/SQLiteCpp.h>
#include <fmt/format.h>
#include <ftw.h>
#include <sqlite3.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <system_error>
#include <unordered_map>
#include <unordered_set>

#include "store/query.h"
#include "store/schema.h"
#include "store/store.h"

namespace runx::store {
namespace {
namespace fs = std::filesystem;

// Removes a directory tree with libc's nftw, not std::filesystem::remove_all: in a runx linked
// against pip's LibTorch 2.x that call binds to LibTorch's exported copy and crashes (see
// engine/child.cc).
void RemoveTree(const fs::path& dir) {
  nftw(
      dir.c_str(), [](const char* path, const struct stat*, int, struct FTW*) { return std::remove(path); }, 16,
      FTW_DEPTH | FTW_PHYS);
}

// A fresh directory under the system's temporary directory, removed with its content.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = fs::temp_directory_path() / fmt::format("runx-merge-{}-{}", static_cast<long>(::getpid()), counter++);
    RemoveTree(path_);
    std::error_code ec;
    fs::create_directories(path_, ec);
    if (ec) {
      throw StoreError(fmt::format("cannot create the temporary directory '{}': {}", path_.string(), ec.message()));
    }
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() { RemoveTree(path_); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// An input store as the merge reads it: a snapshot at the latest schema version, checked. It is
// opened again to be copied (one at a time: a merge of many shards holds one connection).
struct Input {
  std::string path;  // as named on the command line
  int schema_version = 0;
  std::string snapshot;
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
  if (!fs::exists(status)) throw StoreError(fmt::format("cannot merge '{}': no such file", path));
  if (!fs::is_regular_file(status)) {
    throw StoreError(fmt::format("cannot merge '{}': not a file; name a results store (a .db file)", path));
  }
  try {
    SnapshotReadOnly(path, copy.string());
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

// The rows of one table of an input, read one at a time, and the statement that writes a row into
// the output. Every column but `id` is written as read, except those a caller replaces (the ids
// of other rows, which are the output's own): a column a later schema adds comes along unseen.
class Table {
 public:
  Table(SQLite::Database& in, SQLite::Database& out, const std::string& table, bool skip_duplicates,
        const std::string& order_by)
      : select_(in, fmt::format("SELECT * FROM {} ORDER BY {}", table, order_by)) {
    std::vector<std::string> written;
    for (int i = 0; i < select_.getColumnCount(); ++i) {
      columns_.emplace_back(select_.getColumnName(i));
      if (columns_.back() != "id") written.push_back(columns_.back());
    }
    row_.resize(columns_.size());
    // ON CONFLICT DO NOTHING skips a row only for a duplicate key (UNIQUE, PRIMARY KEY): a row
    // that breaks any other constraint still fails the merge.
    insert_.emplace(out, fmt::format("INSERT INTO {} ({}) VALUES ({}){}", table, fmt::join(written, ", "),
                                     fmt::join(std::vector<std::string>(written.size(), "?"), ", "),
                                     skip_duplicates ? " ON CONFLICT DO NOTHING" : ""));
  }

  bool Next() {
    if (!select_.executeStep()) return false;
    for (size_t i = 0; i < columns_.size(); ++i) {
      const SQLite::Column c = select_.getColumn(static_cast<int>(i));
      switch (c.getType()) {
        case SQLITE_INTEGER:
          row_[i] = static_cast<int64_t>(c.getInt64());
          break;
        case SQLITE_FLOAT:
          row_[i] = c.getDouble();
          break;
        case SQLITE_NULL:
          row_[i] = std::monostate{};
          break;
        default:
          row_[i] = c.getString();
          break;  // TEXT (the schema has no BLOB column)
      }
    }
    return true;
  }

  bool IsNull(const std::string& column) const { return std::holds_alternative<std::monostate>(row_[Index(column)]); }
  int64_t Int(const std::string& column) const {
    const Value& v = row_[Index(column)];
    return std::holds_alternative<int64_t>(v) ? std::get<int64_t>(v) : 0;
  }
  std::string Text(const std::string& column) const {
    const Value& v = row_[Index(column)];
    return std::holds_alternative<std::string>(v) ? std::get<std::string>(v) : std::string();
  }
  void Set(const std::string& column, int64_t value) { row_[Index(column)] = value; }

  /// Writes the current row; whether it was added (false: a duplicate, skipped).
  bool Write() {
    int index = 1;
    for (size_t i = 0; i < columns_.size(); ++i) {
      if (columns_[i] == "id") continue;
      std::visit(
          [&](const auto& v) {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, std::monostate>) {
              insert_->bind(index);
            } else {
              insert_->bind(index, v);
            }
          },
          row_[i]);
      ++index;
    }
    const int changed = insert_->exec();
    insert_->reset();
    return changed > 0;
  }

 private:
  size_t Index(const std::string& column) const {
    for (size_t i = 0; i < columns_.size(); ++i) {
      if (columns_[i] == column) return i;
    }
    throw StoreError(fmt::format("internal error: no column '{}' in a merged table", column));
  }

  SQLite::Statement select_;
  std::optional<SQLite::Statement> insert_;
  std::vector<std::string> columns_;
  std::vector<Value> row_;
};

// How far a run has come: a run only moves up (running -> interrupted -> ok/failed; a resumed
// run goes back to running and up again), so the copy that is further along is the newer one.
int Progress(const std::string& status) {
  if (status == "running") return 0;
  if (status == "interrupted") return 1;
  return 2;  // ok, failed: final
}

// Copies one input into the output (inside the caller's transaction).
class Copy {
 public:
  Copy(SQLite::Database& in, SQLite::Database& out, MergeCounts& counts, std::vector<int64_t>& forced_runs)
      : in_(in), out_(out), counts_(counts), forced_runs_(forced_runs) {}

  void Run() {
    Experiments();
    Runs();
    Trials();
    TrialRows("steps", "trial_id, phase, step");
    TrialRows("metrics", "trial_id, name, step");
    Environment();
    Memberships();
    VariantStats();
  }

 private:
  static int64_t Mapped(const std::unordered_map<int64_t, int64_t>& map, int64_t id, const char* what) {
    const auto it = map.find(id);
    if (it == map.end())
      throw StoreError(fmt::format("the input is damaged: it refers to {} {}, which it lacks", what, id));
    return it->second;
  }

  void Experiments() {
    Table t(in_, out_, "experiments", true, "id");
    SQLite::Statement find(out_, "SELECT id FROM experiments WHERE name = ? AND path = ? AND sha256 = ?");
    while (t.Next()) {
      if (t.Write()) ++counts_.experiments_added;
      find.bind(1, t.Text("name"));
      find.bind(2, t.Text("path"));
      find.bind(3, t.Text("sha256"));
      if (!find.executeStep()) throw StoreError("internal error: a merged experiment is missing");
      experiments_[t.Int("id")] = find.getColumn(0).getInt64();
      find.reset();
    }
  }

  void Runs() {
    Table t(in_, out_, "runs", false, "id");
    SQLite::Statement find(out_, "SELECT id, status FROM runs WHERE uid = ?");
    SQLite::Statement advance(out_,
                              "UPDATE runs SET status = ?, finished_at = ?, host = ?, pid = ?, pid_token = ? "
                              "WHERE id = ?");
    while (t.Next()) {
      const int64_t in_id = t.Int("id");
      find.bind(1, t.Text("uid"));
      if (find.executeStep()) {
        const int64_t out_id = find.getColumn(0).getInt64();
        const std::string out_status = find.getColumn(1).getString();
        find.reset();
        runs_[in_id] = out_id;
        ++counts_.runs_present;
        if (Progress(t.Text("status")) > Progress(out_status)) {
          // The input's copy of the run is further along (it was merged before it ended).
          advance.bind(1, t.Text("status"));
          if (t.IsNull("finished_at"))
            advance.bind(2);
          else
            advance.bind(2, t.Text("finished_at"));
          advance.bind(3, t.Text("host"));
          if (t.IsNull("pid"))
            advance.bind(4);
          else
            advance.bind(4, t.Int("pid"));
          advance.bind(5, t.Text("pid_token"));
          advance.bind(6, out_id);
          advance.exec();
          advance.reset();
          advanced_.insert(out_id);
          ++counts_.runs_updated;
        }
        continue;
      }
      find.reset();
      t.Set("experiment_id", Mapped(experiments_, t.Int("experiment_id"), "experiment"));
      // reuse_floor is a trial id of the input's own numbering; MergeStores sets it anew.
      const bool forced = t.Int("force") != 0;
      t.Set("reuse_floor", 0);
      t.Write();
      const int64_t out_id = out_.getLastInsertRowid();
      runs_[in_id] = out_id;
      if (forced) forced_runs_.push_back(out_id);
      ++counts_.runs_added;
    }
  }

  void Trials() {
    Table t(in_, out_, "trials", false, "id");
    SQLite::Statement find(out_, "SELECT id FROM trials WHERE uid = ?");
    while (t.Next()) {
      const int64_t in_id = t.Int("id");
      find.bind(1, t.Text("uid"));
      const bool present = find.executeStep();
      const int64_t found = present ? find.getColumn(0).getInt64() : 0;
      find.reset();
      if (present) {
        // A trial is written once, whole (RecordTrial): the output has its steps, metrics and
        // environment already.
        trials_[in_id] = found;
        ++counts_.trials_present;
        continue;
      }
      t.Set("run_id", Mapped(runs_, t.Int("run_id"), "run"));
      t.Write();
      trials_[in_id] = out_.getLastInsertRowid();
      new_trials_.insert(in_id);
      ++counts_.trials_added;
    }
  }

  // steps and metrics: the rows of the trials this merge added.
  void TrialRows(const std::string& table, const std::string& order_by) {
    Table t(in_, out_, table, false, order_by);
    while (t.Next()) {
      const int64_t trial = t.Int("trial_id");
      if (new_trials_.count(trial) == 0) continue;
      t.Set("trial_id", trials_.at(trial));
      t.Write();
    }
  }

  // A trial's environment comes with the trial; a run's is added to (a key it has stays).
  void Environment() {
    Table t(in_, out_, "environment", true, "run_id, trial_id, key");
    while (t.Next()) {
      if (!t.IsNull("trial_id")) {
        const int64_t trial = t.Int("trial_id");
        if (new_trials_.count(trial) == 0) continue;
        t.Set("trial_id", trials_.at(trial));
      }
      t.Set("run_id", Mapped(runs_, t.Int("run_id"), "run"));
      t.Write();
    }
  }

  // Memberships, reused trials included: a run that reused a trial of another run points at that
  // trial's row in the output, wherever it came from.
  void Memberships() {
    Table t(in_, out_, "run_trials", true, "run_id, trial_id");
    while (t.Next()) {
      t.Set("run_id", Mapped(runs_, t.Int("run_id"), "run"));
      t.Set("trial_id", Mapped(trials_, t.Int("trial_id"), "trial"));
      if (t.Write()) ++counts_.memberships_added;
    }
  }

  // The report's figures of a run: the input's replace the output's for a run that moved on (its
  // report ran since), and are added for a new run.
  void VariantStats() {
    SQLite::Statement clear(out_, "DELETE FROM variant_stats WHERE run_id = ?");
    for (const int64_t run : advanced_) {
      clear.bind(1, run);
      clear.exec();
      clear.reset();
    }
    Table t(in_, out_, "variant_stats", true, "run_id, label");
    while (t.Next()) {
      t.Set("run_id", Mapped(runs_, t.Int("run_id"), "run"));
      t.Write();
    }
  }

  SQLite::Database& in_;
  SQLite::Database& out_;
  MergeCounts& counts_;
  std::vector<int64_t>& forced_runs_;
  std::unordered_map<int64_t, int64_t> experiments_, runs_, trials_;  // input id -> output id
  std::unordered_set<int64_t> new_trials_;                            // input ids
  std::unordered_set<int64_t> advanced_;                              // output ids
};

// An existing output must be a runx store: refused here, before Store::Open, with a message
// for `runx merge` (Store::Open's own would suggest --db).
void CheckOutput(const std::string& out) {
  try {
    SQLite::Database db(out, SQLite::OPEN_READONLY);
    const int tables = db.execAndGet("SELECT count(*) FROM sqlite_schema WHERE type = 'table'").getInt();
    if (tables == 0 || HasTable(db, "schema_version")) return;
  } catch (const SQLite::Exception& e) {
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
    read.push_back(ReadInput(inputs[i], temp.path() / fmt::format("input-{}.db", i), options));
  }

  if (!created) CheckOutput(out);
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
      MergedInput merged{read[current].path, read[current].schema_version, {}};
      SQLite::Database in(read[current].snapshot, SQLite::OPEN_READONLY);
      Copy(in, db, merged.counts, forced_runs).Run();
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

#include "store/merge_copy.h"

#include <SQLiteCpp/SQLiteCpp.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sqlite3.h>

#include <optional>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <variant>

#include "store/query.h"
#include "store/store.h"

namespace runx::store {
namespace {

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

}  // namespace

void CopyStore(SQLite::Database& in, SQLite::Database& out, MergeCounts& counts, std::vector<int64_t>& forced_runs) {
  Copy(in, out, counts, forced_runs).Run();
}

}  // namespace runx::store

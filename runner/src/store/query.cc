// QueryReadOnly: `runx query`. Three lines of defence keep the store unchanged: every statement
// is checked with sqlite3_stmt_readonly before it runs, the connection is opened
// SQLITE_OPEN_READONLY, and PRAGMA query_only is on.
//
// Files beside the store: a read-only SQLite connection to a WAL store creates the -wal and -shm
// files when they are missing, and cannot remove them when it closes (only a connection that may
// checkpoint can). So after the query, when it created them, a second connection opened
// read-write runs no user SQL, reads the schema and closes: SQLite's own last-connection rule
// then removes both files, and leaves them where any other connection (a writer) has the store
// open. That connection can at most checkpoint a log, which changes no content.
#include <fmt/format.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <memory>
#include <set>
#include <string_view>
#include <system_error>
#include <utility>

#include "store/query.h"
#include "store/store.h"

namespace runx::store {
namespace {

struct CloseDb {
  void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};
struct FinalizeStmt {
  void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
};
using DbPtr = std::unique_ptr<sqlite3, CloseDb>;
using StmtPtr = std::unique_ptr<sqlite3_stmt, FinalizeStmt>;

constexpr int kBusyTimeoutMs = 5000;

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }

// Number of characters (UTF-8 code points) in `s`, for placing a caret.
size_t Width(std::string_view s) {
  size_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

// "  <line>\n  <spaces>^ near here" for the line of `statement` holding byte `offset`, or every
// line of `statement` indented when the offset is unknown (-1).
std::string Excerpt(std::string_view statement, int offset) {
  std::string out;
  if (offset < 0 || static_cast<size_t>(offset) > statement.size()) {
    size_t start = 0;
    while (start <= statement.size()) {
      size_t nl = statement.find('\n', start);
      if (nl == std::string_view::npos) nl = statement.size();
      out += fmt::format("\n  {}", statement.substr(start, nl - start));
      start = nl + 1;
    }
    return out;
  }
  const size_t pos = static_cast<size_t>(offset);
  const size_t nl_before = pos == 0 ? std::string_view::npos : statement.rfind('\n', pos - 1);
  const size_t line_start = nl_before == std::string_view::npos ? 0 : nl_before + 1;
  size_t line_end = statement.find('\n', pos);
  if (line_end == std::string_view::npos) line_end = statement.size();
  std::string line(statement.substr(line_start, line_end - line_start));
  for (char& c : line) {
    if (c == '\t' || c == '\r') c = ' ';
  }
  const size_t column = Width(statement.substr(line_start, pos - line_start));
  return fmt::format("\n  {}\n  {}^ near here", line, std::string(column, ' '));
}

// The statement text with surrounding blanks trimmed; `offset` is moved along with it.
std::string_view Trim(std::string_view s, int* offset) {
  size_t b = 0;
  while (b < s.size() && IsSpace(s[b])) ++b;
  size_t e = s.size();
  while (e > b && IsSpace(s[e - 1])) --e;
  if (*offset >= 0) *offset -= static_cast<int>(b);
  return s.substr(b, e - b);
}

[[noreturn]] void ThrowSqlError(sqlite3* db, std::string_view statement, int offset) {
  const std::string_view text = Trim(statement, &offset);
  std::string message = sqlite3_errmsg(db);
  // SQLite cannot open a store for reading where it cannot create its -shm (read-only media)
  // unless told the file does not change.
  std::string head(text.substr(0, 6));
  for (char& c : head) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (head == "ATTACH" && message.find("unable to open database") != std::string::npos)
    message +=
        " (a store in a folder nothing can write, such as read-only media, is attached as an unchanging "
        "file: ATTACH 'file:/path/to/store.db?immutable=1' AS name)";
  throw StoreError(fmt::format("{}{}", message, Excerpt(text, offset)));
}

std::string HexBlob(const void* data, int size) {
  std::string out = "X'";
  const auto* bytes = static_cast<const unsigned char*>(data);
  for (int i = 0; i < size; ++i) out += fmt::format("{:02X}", bytes[i]);
  return out + "'";
}

Value ReadValue(sqlite3_stmt* stmt, int col) {
  switch (sqlite3_column_type(stmt, col)) {
    case SQLITE_INTEGER:
      return static_cast<int64_t>(sqlite3_column_int64(stmt, col));
    case SQLITE_FLOAT:
      return sqlite3_column_double(stmt, col);
    case SQLITE_TEXT: {
      const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt, col));
      return std::string(text, static_cast<size_t>(sqlite3_column_bytes(stmt, col)));
    }
    case SQLITE_BLOB: {
      const void* blob = sqlite3_column_blob(stmt, col);
      return HexBlob(blob, sqlite3_column_bytes(stmt, col));
    }
    default:
      return std::monostate{};
  }
}

void CheckIsStore(const std::string& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(status)) {
    throw MissingStoreError(fmt::format("no results store at '{}'; run an experiment first (or pass --db PATH)", path));
  }
  if (std::filesystem::is_directory(status)) {
    throw StoreError(fmt::format("'{}' is a directory, not a results store; pass --db with the store's file", path));
  }
}

bool Exists(const std::string& path) {
  std::error_code ec;
  return std::filesystem::exists(path, ec);
}

// A store whose -wal/-shm this query may create, and which of them were there before.
struct Watched {
  std::string path;
  bool had_wal = false;
  bool had_shm = false;
};

// Removes the -wal/-shm this query created beside `w.path`, through SQLite (see the top).
void TidyUp(const Watched& w) {
  const bool made_wal = !w.had_wal && Exists(w.path + "-wal");
  const bool made_shm = !w.had_shm && Exists(w.path + "-shm");
  if (!made_wal && !made_shm) return;
  sqlite3* raw = nullptr;
  // No SQLITE_OPEN_CREATE: a store that vanished meanwhile is not made again.
  if (sqlite3_open_v2(w.path.c_str(), &raw, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK) {
    sqlite3_exec(raw, "SELECT count(*) FROM sqlite_schema", nullptr, nullptr, nullptr);
  }
  sqlite3_close_v2(raw);
}

// One read-only connection to a store; closing it tidies up after it.
class Session {
 public:
  explicit Session(const std::string& path, int wait_ms = kBusyTimeoutMs) {
    CheckIsStore(path);
    const ReadOnlyOpening opening = ReadOnlyOpeningOf(path, "query the copy");
    if (opening.mode == OpenMode::kReader) Watch(path);
    sqlite3* raw = nullptr;
    // URIs on: ATTACH 'file:...?immutable=1' reads a store on read-only media too.
    const int rc = sqlite3_open_v2(opening.name.c_str(), &raw, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr);
    db_.reset(raw);
    if (rc != SQLITE_OK) {
      throw StoreError(
          fmt::format("cannot open results store '{}': {}", path, raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc)));
    }
    sqlite3_busy_timeout(db_.get(), wait_ms);
    sqlite3_db_config(db_.get(), SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
    sqlite3_exec(db_.get(), "PRAGMA query_only = ON", nullptr, nullptr, nullptr);
    // Only to learn which stores ATTACH opens (before it opens them); it refuses nothing.
    sqlite3_set_authorizer(db_.get(), &Session::Authorize, this);
  }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  ~Session() {
    db_.reset();
    for (const Watched& w : watched_) TidyUp(w);
  }
  sqlite3* db() const { return db_.get(); }

 private:
  void Watch(const std::string& path) {
    if (path.empty() || path == ":memory:" || path.rfind("file:", 0) == 0) return;
    const std::string dir = std::filesystem::absolute(path).parent_path().string();
    if (::access(dir.c_str(), W_OK) != 0) return;  // nothing can be created there
    watched_.push_back({path, Exists(path + "-wal"), Exists(path + "-shm")});
  }
  static int Authorize(void* self, int action, const char* file, const char* arg, const char*, const char*) {
    if (action == SQLITE_ATTACH && file != nullptr) static_cast<Session*>(self)->Watch(file);
    // A PRAGMA with a value sets it (writable_schema = 1, query_only = 0, locking_mode = ...),
    // which sqlite3_stmt_readonly does not count as a write; a few take an argument to read.
    if (action == SQLITE_PRAGMA && file != nullptr && arg != nullptr) {
      static const std::set<std::string> kReadWithArgument = {
          "table_info", "table_xinfo",      "table_list",        "index_info",      "index_xinfo",
          "index_list", "foreign_key_list", "foreign_key_check", "integrity_check", "quick_check"};
      std::string name = file;
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (!kReadWithArgument.count(name)) static_cast<Session*>(self)->sets_pragma_ = true;
    }
    return SQLITE_OK;
  }

 public:
  /// Whether the statement prepared since the last call sets a PRAGMA.
  bool TakeSetsPragma() { return std::exchange(sets_pragma_, false); }

 private:
  bool sets_pragma_ = false;

  DbPtr db_;
  std::vector<Watched> watched_;
};

// True when `rest` holds no statement: only blanks, comments and ';', as SQLite's parser sees
// them (it prepares them: nothing runs).
bool NoStatementIn(sqlite3* db, const char* rest, const char* end) {
  while (rest < end) {
    sqlite3_stmt* raw = nullptr;
    const char* next = nullptr;
    const int rc = sqlite3_prepare_v2(db, rest, static_cast<int>(end - rest), &raw, &next);
    StmtPtr stmt(raw);
    if (rc != SQLITE_OK || stmt || next == nullptr || next <= rest) return false;
    rest = next;
  }
  return true;
}

// Steps `stmt` to its end, handing its rows to `sink` (or dropping them when there is none).
void Run(sqlite3* db, sqlite3_stmt* stmt, std::string_view statement, RowSink* sink) {
  const int ncols = sqlite3_column_count(stmt);
  std::vector<Value> row(static_cast<size_t>(ncols));
  if (sink) {
    std::vector<std::string> columns;
    for (int c = 0; c < ncols; ++c) columns.emplace_back(sqlite3_column_name(stmt, c));
    sink->Begin(columns);
  }
  int rc = SQLITE_OK;
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    if (!sink) continue;
    for (int c = 0; c < ncols; ++c) row[static_cast<size_t>(c)] = ReadValue(stmt, c);
    sink->Row(row);
  }
  if (rc != SQLITE_DONE) ThrowSqlError(db, statement, -1);
  if (sink) sink->End();
}

class CollectingSink : public RowSink {
 public:
  explicit CollectingSink(QueryResult* result) : result_(result) {}
  void Begin(const std::vector<std::string>& columns) override { result_->columns = columns; }
  void Row(const std::vector<Value>& values) override { result_->rows.push_back(values); }

 private:
  QueryResult* result_;
};

}  // namespace

ReadOnlyOpening ReadOnlyOpeningOf(const std::string& path, const std::string& then) {
  const OpenMode mode = ChooseOpenMode(InspectStoreSite(path));
  if (mode == OpenMode::kUnreadable) {
    throw StoreError(
        fmt::format("cannot read results store '{0}': its log '{0}-wal' holds transactions that SQLite "
                    "reads through '{0}-shm', which is missing and cannot be created in a read-only "
                    "directory; copy the store with its -wal to a writable place and {1}",
                    path, then));
  }
  // With URIs on, a relative file named "file:..." is spelt "./file:..." to stay a file name.
  if (mode == OpenMode::kImmutable) return {ImmutableUri(path), mode};
  return {path.rfind("file:", 0) == 0 ? "./" + path : path, mode};
}

std::string ImmutableUri(const std::string& path) {
  const std::string abs = std::filesystem::absolute(path).lexically_normal().string();
  std::string uri = "file:";
  for (char ch : abs) {
    const auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) || c == '/' || c == '-' || c == '.' || c == '_' || c == '~') {
      uri += ch;
    } else {
      uri += fmt::format("%{:02X}", c);
    }
  }
  return uri + "?immutable=1";
}

StoreSite InspectStoreSite(const std::string& path) {
  StoreSite site;
  std::error_code ec;
  site.wal_exists = std::filesystem::exists(path + "-wal", ec);
  if (site.wal_exists) {
    const auto size = std::filesystem::file_size(path + "-wal", ec);
    site.wal_size = ec ? 1 : size;  // unknown size: assume it holds something
  }
  site.shm_exists = std::filesystem::exists(path + "-shm", ec);
  const std::string dir = std::filesystem::absolute(path).parent_path().string();
  // access() answers EROFS on a read-only file system, even for root.
  site.dir_writable = ::access(dir.c_str(), W_OK) == 0;
  return site;
}

OpenMode ChooseOpenMode(const StoreSite& site) {
  if (site.dir_writable) return OpenMode::kReader;
  if (!site.wal_exists) return OpenMode::kImmutable;
  if (site.shm_exists) return OpenMode::kReader;  // SQLite reads both without writing them
  return site.wal_size == 0 ? OpenMode::kImmutable : OpenMode::kUnreadable;
}

void QueryReadOnly(const std::string& path, const std::string& sql, RowSink& sink) {
  Session session(path);
  sqlite3* const db = session.db();
  bool ran_any = false;
  const char* tail = sql.c_str();
  const char* const end = sql.c_str() + sql.size();
  while (tail < end) {
    sqlite3_stmt* raw = nullptr;
    const char* next = nullptr;
    session.TakeSetsPragma();
    const int prepared = sqlite3_prepare_v2(db, tail, static_cast<int>(end - tail), &raw, &next);
    StmtPtr stmt(raw);
    if (next == nullptr || next <= tail) next = end;
    const std::string_view statement(tail, static_cast<size_t>(next - tail));
    if (prepared != SQLITE_OK) {
      // Where SQLite stopped parsing is not reliable after an error: show from here on.
      ThrowSqlError(db, std::string_view(tail, static_cast<size_t>(end - tail)), sqlite3_error_offset(db));
    }
    tail = next;
    if (!stmt) continue;  // only blanks or a comment
    if (session.TakeSetsPragma() || !sqlite3_stmt_readonly(stmt.get())) {
      int no_offset = -1;
      throw StoreError(
          fmt::format("runx query is read-only: the statement would modify the store; use the sqlite3 shell "
                      "to change {}{}",
                      path, Excerpt(Trim(statement, &no_offset), -1)));
    }
    ran_any = true;
    const bool last = NoStatementIn(db, tail, end);
    Run(db, stmt.get(), statement, last ? &sink : nullptr);
  }
  if (!ran_any) throw StoreError("no SQL statement to run: the query is empty");
}

QueryResult QueryReadOnly(const std::string& path, const std::string& sql) {
  QueryResult result;
  CollectingSink sink(&result);
  QueryReadOnly(path, sql, sink);
  return result;
}

void SnapshotReadOnly(const std::string& path, const std::string& dest, int wait_ms) {
  Session session(path, wait_ms);
  sqlite3* raw = nullptr;
  const int opened = sqlite3_open_v2(dest.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  DbPtr copy(raw);
  if (opened != SQLITE_OK) {
    throw StoreError(fmt::format("cannot create '{}': {}", dest, raw ? sqlite3_errmsg(raw) : sqlite3_errstr(opened)));
  }
  sqlite3_backup* backup = sqlite3_backup_init(copy.get(), "main", session.db(), "main");
  if (backup == nullptr) {
    throw StoreError(fmt::format("cannot read results store '{}': {}", path, sqlite3_errmsg(copy.get())));
  }
  // All pages in one step, under one read lock of the store: a consistent snapshot.
  const int copied = sqlite3_backup_step(backup, -1);
  sqlite3_backup_finish(backup);
  if (copied != SQLITE_DONE) {
    throw StoreError(fmt::format("cannot read results store '{}': {}", path, sqlite3_errstr(copied)));
  }
}

}  // namespace runx::store

// QueryReadOnly: `runx query`. Three lines of defence keep the store unchanged: every statement
// is checked with sqlite3_stmt_readonly before it runs, the connection is opened
// SQLITE_OPEN_READONLY, and PRAGMA query_only is on.
#include <fmt/format.h>
#include <sqlite3.h>

#include <filesystem>
#include <memory>
#include <string_view>
#include <system_error>

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
  throw StoreError(fmt::format("{}{}", sqlite3_errmsg(db), Excerpt(text, offset)));
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

DbPtr OpenReadOnly(const std::string& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(status)) {
    throw StoreError(
        fmt::format("no results store at '{}'; run an experiment first (or pass --db PATH)", path));
  }
  if (std::filesystem::is_directory(status)) {
    throw StoreError(fmt::format(
        "'{}' is a directory, not a results store; pass --db with the store's file", path));
  }
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr);
  DbPtr db(raw);
  if (rc != SQLITE_OK) {
    throw StoreError(fmt::format("cannot open results store '{}': {}", path,
                                 raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc)));
  }
  sqlite3_busy_timeout(db.get(), kBusyTimeoutMs);
  sqlite3_db_config(db.get(), SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  sqlite3_exec(db.get(), "PRAGMA query_only = ON", nullptr, nullptr, nullptr);
  return db;
}

}  // namespace

QueryResult QueryReadOnly(const std::string& path, const std::string& sql) {
  DbPtr db = OpenReadOnly(path);
  QueryResult result;
  bool ran_any = false;
  const char* tail = sql.c_str();
  const char* const end = sql.c_str() + sql.size();
  while (tail < end) {
    sqlite3_stmt* raw = nullptr;
    const char* next = nullptr;
    const int prepared =
        sqlite3_prepare_v2(db.get(), tail, static_cast<int>(end - tail), &raw, &next);
    StmtPtr stmt(raw);
    if (next == nullptr || next <= tail) next = end;
    const std::string_view statement(tail, static_cast<size_t>(next - tail));
    if (prepared != SQLITE_OK) {
      // Where SQLite stopped parsing is not reliable after an error: show from here on.
      ThrowSqlError(db.get(), std::string_view(tail, static_cast<size_t>(end - tail)),
                    sqlite3_error_offset(db.get()));
    }
    tail = next;
    if (!stmt) continue;  // only blanks or a comment
    if (!sqlite3_stmt_readonly(stmt.get())) {
      int no_offset = -1;
      throw StoreError(fmt::format(
          "runx query is read-only: the statement would modify the store; use the sqlite3 shell "
          "to change {}{}",
          path, Excerpt(Trim(statement, &no_offset), -1)));
    }
    ran_any = true;
    result = QueryResult{};
    const int ncols = sqlite3_column_count(stmt.get());
    for (int c = 0; c < ncols; ++c) result.columns.emplace_back(sqlite3_column_name(stmt.get(), c));
    int rc = SQLITE_OK;
    while ((rc = sqlite3_step(stmt.get())) == SQLITE_ROW) {
      std::vector<Value>& row = result.rows.emplace_back();
      row.reserve(static_cast<size_t>(ncols));
      for (int c = 0; c < ncols; ++c) row.push_back(ReadValue(stmt.get(), c));
    }
    if (rc != SQLITE_DONE) ThrowSqlError(db.get(), statement, -1);
  }
  if (!ran_any) throw StoreError("no SQL statement to run: the query is empty");
  return result;
}

}  // namespace runx::store

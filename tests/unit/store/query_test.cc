// QueryReadOnly: values keep their types, errors are clear, and nothing can write.
#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>

#include <map>

#include "store/store.h"
#include "test_support.h"

namespace runx::store {
namespace {

using testing::CountRows;
using testing::FillExampleStore;
using testing::ReadFileBytes;

class QueryTest : public testing::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    path_ = PathOf("runx.db");
    FillExampleStore(path_);
  }
  // The StoreError message of running `sql`, or "" when it runs.
  std::string ErrorOf(const std::string& sql) {
    try {
      QueryReadOnly(path_, sql);
    } catch (const StoreError& e) {
      return e.what();
    }
    return "";
  }
  std::string path_;
};

TEST_F(QueryTest, ValuesKeepTheirSqliteTypes) {
  const QueryResult r = QueryReadOnly(path_, "SELECT 1 AS i, 2.5 AS r, 'x' AS t, NULL AS n");
  EXPECT_EQ(r.columns, (std::vector<std::string>{"i", "r", "t", "n"}));
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_EQ(r.rows[0], (std::vector<Value>{int64_t{1}, 2.5, std::string("x"), std::monostate{}}));
}

TEST_F(QueryTest, PragmasThatOnlyReadWork) {
  const QueryResult r = QueryReadOnly(path_, "PRAGMA table_info(trial_summary)");
  ASSERT_EQ(r.rows.size(), 24u);
  EXPECT_EQ(r.rows[0][1], Value(std::string("trial_id")));
  EXPECT_EQ(QueryReadOnly(path_, "PRAGMA foreign_key_check").rows.size(), 0u);
  EXPECT_EQ(QueryReadOnly(path_, "PRAGMA integrity_check").rows,
            (std::vector<std::vector<Value>>{{std::string("ok")}}));
}

TEST_F(QueryTest, NoRowsStillHasColumns) {
  const QueryResult r = QueryReadOnly(path_, "SELECT id, label FROM trials WHERE 0");
  EXPECT_EQ(r.columns, (std::vector<std::string>{"id", "label"}));
  EXPECT_TRUE(r.rows.empty());
}

TEST_F(QueryTest, MissingStoreIsAClearErrorAndCreatesNothing) {
  const std::string missing = PathOf("nope/runx.db");
  try {
    QueryReadOnly(missing, "SELECT 1");
    FAIL() << "expected StoreError";
  } catch (const StoreError& e) {
    EXPECT_EQ(std::string(e.what()),
              "no results store at '" + missing + "'; run an experiment first (or pass --db PATH)");
  }
  EXPECT_FALSE(std::filesystem::exists(PathOf("nope")));
}

TEST_F(QueryTest, SqlErrorsCarryMessageStatementAndCaret) {
  EXPECT_EQ(ErrorOf("SELECT foo FROM trials"),
            "no such column: foo\n"
            "  SELECT foo FROM trials\n"
            "         ^ near here");
  EXPECT_EQ(ErrorOf("SELECT 1;\n  SELECT label\n  FROM trialz\n  WHERE 1"),
            "no such table: trialz\n"
            "  SELECT label\n"
            "    FROM trialz\n"
            "    WHERE 1");
  EXPECT_EQ(ErrorOf("SELEC 1"),
            "near \"SELEC\": syntax error\n"
            "  SELEC 1\n"
            "  ^ near here");
  EXPECT_EQ(ErrorOf("  ;  -- nothing\n"), "no SQL statement to run: the query is empty");
}

TEST_F(QueryTest, RuntimeErrorsCarryTheStatement) {
  EXPECT_EQ(ErrorOf("SELECT json_extract(yaml, '$') FROM experiments"),
            "malformed JSON\n"
            "  SELECT json_extract(yaml, '$') FROM experiments");
}

TEST_F(QueryTest, SeveralStatementsReturnTheLast) {
  const QueryResult r = QueryReadOnly(path_, "SELECT 1; SELECT 2 AS two;\n-- the end\n");
  EXPECT_EQ(r.columns, (std::vector<std::string>{"two"}));
  EXPECT_EQ(r.rows, (std::vector<std::vector<Value>>{{int64_t{2}}}));
}

TEST_F(QueryTest, AttachingAnotherStoreReadOnlyWorks) {
  const std::string other = PathOf("other.db");
  FillExampleStore(other);
  const QueryResult r = QueryReadOnly(path_, "ATTACH '" + other + "' AS other; SELECT count(*) FROM other.trials");
  EXPECT_EQ(r.rows, (std::vector<std::vector<Value>>{{int64_t{8}}}));
}

TEST_F(QueryTest, ReadsWhileAWriterHoldsTheStore) {
  Store writer = Store::Open(path_);
  writer.EndRun(1, RunStatus::kFailed, "2026-12-05T00:00:00Z");
  const QueryResult r = QueryReadOnly(path_, "SELECT status FROM runs WHERE id = 1");
  EXPECT_EQ(r.rows, (std::vector<std::vector<Value>>{{std::string("failed")}}));
}

TEST_F(QueryTest, RefusalMessage) {
  EXPECT_EQ(ErrorOf("DELETE FROM trials"),
            "runx query is read-only: the statement would modify the store; use the sqlite3 "
            "shell to change " +
                path_ + "\n  DELETE FROM trials");
  EXPECT_EQ(ErrorOf("SELECT 1;\n  UPDATE trials\n  SET status = 'ok';"),
            "runx query is read-only: the statement would modify the store; use the sqlite3 "
            "shell to change " +
                path_ + "\n  UPDATE trials\n    SET status = 'ok';");
}

// PRAGMAs that set a value change the connection, not the file, so SQLite counts them as reads
// (issue 30, point 20); the ones that read with an argument still run.
TEST_F(QueryTest, PragmaSettersAreRefusedAndPragmaReadsRun) {
  for (const std::string pragma : {"PRAGMA writable_schema = 1", "PRAGMA query_only = 0", "pragma query_only=off",
                                   "PRAGMA locking_mode = EXCLUSIVE", "PRAGMA main.cache_size = 10",
                                   "PRAGMA foreign_keys = ON", "SELECT 1; PRAGMA journal_mode = DELETE"}) {
    EXPECT_EQ(ErrorOf(pragma).rfind("runx query is read-only: the statement would modify the store", 0), 0u)
        << pragma << ": " << ErrorOf(pragma);
  }
  EXPECT_FALSE(QueryReadOnly(path_, "PRAGMA table_info(runs)").rows.empty());
  EXPECT_FALSE(QueryReadOnly(path_, "PRAGMA index_list('trials')").rows.empty());
  EXPECT_EQ(QueryReadOnly(path_, "PRAGMA query_only").rows, (std::vector<std::vector<Value>>{{int64_t{1}}}));
  EXPECT_EQ(QueryReadOnly(path_, "PRAGMA quick_check").rows, (std::vector<std::vector<Value>>{{std::string("ok")}}));
}

TEST_F(QueryTest, NothingThatWritesGetsThrough) {
  const std::vector<std::string> tables = {"experiments", "runs",        "trials",         "steps",
                                           "metrics",     "environment", "schema_version", "variant_stats"};
  std::map<std::string, int64_t> before;
  for (const auto& t : tables) before[t] = CountRows(path_, t);
  const std::string bytes_before = ReadFileBytes(path_);
  ASSERT_FALSE(bytes_before.empty());

  const std::string copy = PathOf("copy.db");
  const std::string fresh = PathOf("fresh.db");
  const std::vector<std::string> writes = {
      "DELETE FROM trials",
      "INSERT INTO experiments (name, path, sha256, yaml) VALUES ('x', 'x', 'x', 'x')",
      "DROP TABLE steps",
      "DROP VIEW trial_summary",
      "UPDATE trials SET status = 'failed'",
      "UPDATE schema_version SET version = 99",
      "CREATE TABLE notes (a)",
      "CREATE TEMP TABLE notes (a)",
      "CREATE INDEX steps_loss ON steps(loss)",
      "ALTER TABLE trials ADD COLUMN x",
      "REPLACE INTO metrics (trial_id, name, value) VALUES (1, 'accuracy', 0)",
      "SELECT 1; DELETE FROM metrics",
      "PRAGMA query_only = 0; DELETE FROM metrics",
      "PRAGMA user_version = 7",
      "PRAGMA journal_mode = DELETE",
      "VACUUM",
      "VACUUM INTO '" + copy + "'",
      "REINDEX",
      "ANALYZE",
      "ATTACH '" + fresh + "' AS f; CREATE TABLE f.t (a)",
      "ATTACH ':memory:' AS m; CREATE TABLE m.t (a)",
      "ATTACH '" + path_ + "' AS again; DELETE FROM again.trials",
      "BEGIN; DELETE FROM trials; COMMIT",
      "WITH x AS (SELECT 1) DELETE FROM trials WHERE id IN (SELECT * FROM x)",
      "INSERT INTO steps SELECT * FROM steps",
  };
  for (const auto& sql : writes) {
    const std::string error = ErrorOf(sql);
    // Refused before running; the fresh ATTACH cannot even create its file (read-only open).
    const std::string expected_start =
        sql.find("fresh.db") != std::string::npos ? "unable to open database: " + fresh : "runx query is read-only: ";
    EXPECT_EQ(error.substr(0, expected_start.size()), expected_start) << sql;
  }
  for (const auto& t : tables) EXPECT_EQ(CountRows(path_, t), before[t]) << t;
  EXPECT_EQ(ReadFileBytes(path_), bytes_before);
  EXPECT_FALSE(std::filesystem::exists(copy));
  EXPECT_FALSE(std::filesystem::exists(fresh));
  EXPECT_EQ(QueryReadOnly(path_, "PRAGMA user_version").rows, (std::vector<std::vector<Value>>{{int64_t{0}}}));
  SQLite::Database db(path_, SQLite::OPEN_READONLY);
  EXPECT_EQ(db.execAndGet("PRAGMA journal_mode").getString(), "wal");
}

}  // namespace
}  // namespace runx::store

// QueryReadOnly with a RowSink: rows reach the sink as SQLite steps them, so memory stays
// bounded however many rows a query returns (a buffered QueryReadOnly fails these tests).
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <ostream>
#include <streambuf>

#include "store/format.h"
#include "store/query.h"
#include "store/store.h"
#include "test_support.h"

namespace runx::store {
namespace {

constexpr int64_t kManyRows = 1000000;
// A row of an int, a short text and a real: a buffered result of kManyRows of them needs well
// over 100 MB; a streamed one a few.
const std::string kManyRowsSql = "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n LIMIT " +
                                 std::to_string(kManyRows) + ") SELECT x, 'row ' || x AS label, x * 0.5 AS half FROM n";
constexpr int64_t kBoundBytes = 32 << 20;

// The process's resident memory now (not its peak: an earlier test's peak would hide growth).
int64_t ResidentBytes() {
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return -1;
  long size = 0, resident = 0;
  const int n = std::fscanf(f, "%ld %ld", &size, &resident);
  std::fclose(f);
  return n == 2 ? static_cast<int64_t>(resident) * ::sysconf(_SC_PAGESIZE) : -1;
}

// Counts what it is given and the most memory the process held while rows came.
class CountingSink : public RowSink {
 public:
  void Begin(const std::vector<std::string>& columns) override {
    columns_ = columns;
    ++begins_;
  }
  void Row(const std::vector<Value>& values) override {
    ++rows_;
    last_ = values;
    if (rows_ % 10000 == 0) peak_ = std::max(peak_, ResidentBytes());
    if (rows_ == stop_after_) throw StoreError("enough");
  }
  void End() override { ++ends_; }

  std::vector<std::string> columns_;
  std::vector<Value> last_;
  int64_t rows_ = 0;
  int begins_ = 0;
  int ends_ = 0;
  int64_t peak_ = 0;
  int64_t stop_after_ = -1;
};

// An ostream that counts its characters and keeps none of them.
class CountingBuf : public std::streambuf {
 public:
  int64_t count = 0;
  int64_t lines = 0;

 protected:
  int overflow(int c) override {
    if (c != traits_type::eof()) {
      ++count;
      lines += c == '\n';
    }
    return traits_type::not_eof(c);
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    count += n;
    lines += std::count(s, s + n, '\n');
    return n;
  }
};

class QueryStreamTest : public testing::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    path_ = PathOf("runx.db");
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(db,
                           "PRAGMA journal_mode = WAL; CREATE TABLE t (x INTEGER);"
                           "INSERT INTO t VALUES (1), (2), (3)",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(db);
    if (ResidentBytes() < 0) GTEST_SKIP() << "no /proc/self/statm to read memory from";
  }
  std::string path_;
};

TEST_F(QueryStreamTest, RowsReachTheSinkAsTheyAreStepped) {
  CountingSink sink;
  const int64_t before = ResidentBytes();
  QueryReadOnly(path_, kManyRowsSql, sink);
  EXPECT_EQ(sink.rows_, kManyRows);
  EXPECT_EQ(sink.begins_, 1);
  EXPECT_EQ(sink.ends_, 1);
  EXPECT_EQ(sink.columns_, (std::vector<std::string>{"x", "label", "half"}));
  EXPECT_EQ(sink.last_, (std::vector<Value>{kManyRows, std::string("row 1000000"), 500000.0}));
  EXPECT_LT(sink.peak_ - before, kBoundBytes) << "rows were held, not streamed";
}

TEST_F(QueryStreamTest, OnlyTheLastStatementReachesTheSink) {
  CountingSink sink;
  QueryReadOnly(path_, "SELECT x FROM t; SELECT 2 AS two, 3 AS three;\n-- the end\n ; /* c */", sink);
  EXPECT_EQ(sink.begins_, 1);
  EXPECT_EQ(sink.ends_, 1);
  EXPECT_EQ(sink.columns_, (std::vector<std::string>{"two", "three"}));
  EXPECT_EQ(sink.rows_, 1);
  EXPECT_EQ(sink.last_, (std::vector<Value>{int64_t{2}, int64_t{3}}));
}

TEST_F(QueryStreamTest, AStatementBeforeTheLastCanPrepareTheLast) {
  // The last statement can only be prepared once the ATTACH before it has run.
  CountingSink sink;
  QueryReadOnly(path_, "ATTACH '" + path_ + "' AS again; SELECT count(*) AS n FROM again.t", sink);
  EXPECT_EQ(sink.columns_, (std::vector<std::string>{"n"}));
  EXPECT_EQ(sink.last_, (std::vector<Value>{int64_t{3}}));
}

TEST_F(QueryStreamTest, ASinkThatThrowsStopsTheQuery) {
  CountingSink sink;
  sink.stop_after_ = 3;
  try {
    QueryReadOnly(path_, kManyRowsSql, sink);
    FAIL() << "expected StoreError";
  } catch (const StoreError& e) {
    EXPECT_STREQ(e.what(), "enough");
  }
  EXPECT_EQ(sink.rows_, 3);
  EXPECT_EQ(sink.ends_, 0);
}

TEST_F(QueryStreamTest, ARuntimeErrorComesAfterTheRowsBeforeIt) {
  CountingSink sink;
  try {
    QueryReadOnly(path_, "SELECT json_extract(j, '$') FROM (SELECT '1' AS j UNION ALL SELECT '{')", sink);
    FAIL() << "expected StoreError";
  } catch (const StoreError& e) {
    EXPECT_EQ(std::string(e.what()),
              "malformed JSON\n"
              "  SELECT json_extract(j, '$') FROM (SELECT '1' AS j UNION ALL SELECT '{')");
  }
  EXPECT_EQ(sink.rows_, 1);
  EXPECT_EQ(sink.ends_, 0);
}

TEST_F(QueryStreamTest, EveryFormatWritesInBoundedMemory) {
  for (Format format : {Format::kTable, Format::kCsv, Format::kJson}) {
    CountingBuf buf;
    std::ostream out(&buf);
    const int64_t before = ResidentBytes();
    int64_t peak = before;
    // Samples memory while the writer works, every 10000 rows.
    class Sampling : public RowSink {
     public:
      Sampling(RowSink& inner, int64_t* peak) : inner_(inner), peak_(peak) {}
      void Begin(const std::vector<std::string>& c) override { inner_.Begin(c); }
      void Row(const std::vector<Value>& v) override {
        inner_.Row(v);
        if (++rows_ % 10000 == 0) *peak_ = std::max(*peak_, ResidentBytes());
      }
      void End() override { inner_.End(); }

     private:
      RowSink& inner_;
      int64_t* peak_;
      int64_t rows_ = 0;
    };
    const std::unique_ptr<RowSink> writer = MakeResultWriter(format, out);
    Sampling sampling(*writer, &peak);
    QueryReadOnly(path_, kManyRowsSql, sampling);
    const int64_t header_lines = format == Format::kTable ? 2 : 1;  // JSON: "[" and "]"
    EXPECT_EQ(buf.lines, kManyRows + header_lines + (format == Format::kJson ? 1 : 0)) << static_cast<int>(format);
    EXPECT_GT(buf.count, 20 * kManyRows);
    EXPECT_LT(peak - before, kBoundBytes) << static_cast<int>(format);
  }
}

TEST_F(QueryStreamTest, AFailedWriteStopsTheQuery) {
  CountingBuf buf;
  std::ostream out(&buf);
  out.setstate(std::ios::badbit);  // a closed pipe, a full disk
  const std::unique_ptr<RowSink> writer = MakeResultWriter(Format::kCsv, out);
  try {
    QueryReadOnly(path_, kManyRowsSql, *writer);
    FAIL() << "expected StoreError";
  } catch (const StoreError& e) {
    EXPECT_STREQ(e.what(), "cannot write the query's result: the output failed (closed pipe or full disk?)");
  }
}

}  // namespace
}  // namespace runx::store

// How QueryReadOnly opens a store: a read leaves no -wal/-shm behind, a live writer's files are
// left alone, and a store on read-only media can be read. The read-only media are real: a
// read-only bind mount in a child process's own mount namespace (skipped where the sandbox
// forbids mounting; ChooseOpenMode's table is tested either way).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <sqlite3.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>

#include "store/format.h"
#include "store/query.h"
#include "store/store.h"
#include "test_support.h"

namespace runx::store {
namespace {

using testing::ReadFileBytes;

// Runs `sql` on `path` with the plain SQLite API, read-write.
void Exec(sqlite3* db, const std::string& sql) {
  char* error = nullptr;
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK) << error;
}

// A WAL store with table t (1, 2, 3), closed: clean, no -wal or -shm.
void MakeCleanStore(const std::string& path) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  Exec(db, "PRAGMA journal_mode = WAL; CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1), (2), (3)");
  ASSERT_EQ(sqlite3_close(db), SQLITE_OK);
}

std::string Csv(const std::string& path, const std::string& sql) {
  return FormatResult(QueryReadOnly(path, sql), Format::kCsv);
}

bool Exists(const std::string& path) { return std::filesystem::exists(path); }

class QueryOpenTest : public testing::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    std::filesystem::create_directories(PathOf("media"));
    path_ = PathOf("media/runx.db");
    MakeCleanStore(path_);
    ASSERT_FALSE(Exists(path_ + "-wal"));
    ASSERT_FALSE(Exists(path_ + "-shm"));
  }

  // Runs `read(dir)` in a child process that sees PathOf("media") read-only at `dir`; returns
  // what it returned, "skip: ..." where the sandbox cannot mount.
  std::string InReadOnlyView(const std::function<std::string(const std::string&)>& read) {
    const std::string view = PathOf("ro");
    std::filesystem::create_directories(view);
    int fds[2];
    if (::pipe(fds) != 0) return "skip: no pipe";
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::close(fds[0]);
      std::string answer;
      if (::unshare(CLONE_NEWNS) != 0) {
        answer = std::string("skip: unshare: ") + std::strerror(errno);
      } else if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
                 ::mount(PathOf("media").c_str(), view.c_str(), nullptr, MS_BIND, nullptr) != 0 ||
                 ::mount(nullptr, view.c_str(), nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY, nullptr) != 0) {
        answer = std::string("skip: mount: ") + std::strerror(errno);
      } else if (::access(view.c_str(), W_OK) == 0 || errno != EROFS) {
        answer = "skip: the bind mount is writable";
      } else {
        try {
          answer = read(view);
        } catch (const std::exception& e) {
          answer = std::string("error: ") + e.what();
        }
      }
      const char* p = answer.data();
      size_t left = answer.size();
      while (left > 0) {
        const ssize_t n = ::write(fds[1], p, left);
        if (n <= 0) break;
        p += n;
        left -= static_cast<size_t>(n);
      }
      ::_exit(0);
    }
    ::close(fds[1]);
    std::string answer;
    char buf[4096];
    for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) answer.append(buf, static_cast<size_t>(n));
    ::close(fds[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    return answer;
  }

  std::string path_;
};

TEST(ChooseOpenModeTest, ImmutableOnlyWhereNothingCanWriteAndNoLogHoldsData) {
  const auto mode = [](bool wal, uint64_t wal_size, bool shm, bool writable) {
    return ChooseOpenMode(StoreSite{wal, wal_size, shm, writable});
  };
  // A writable directory: always an ordinary reader (a writer may come at any time).
  EXPECT_EQ(mode(false, 0, false, true), OpenMode::kReader);
  EXPECT_EQ(mode(true, 0, true, true), OpenMode::kReader);
  EXPECT_EQ(mode(true, 4096, false, true), OpenMode::kReader);
  // Read-only: no log, or an empty one SQLite cannot index: the main file is the whole store.
  EXPECT_EQ(mode(false, 0, false, false), OpenMode::kImmutable);
  EXPECT_EQ(mode(false, 0, true, false), OpenMode::kImmutable);
  EXPECT_EQ(mode(true, 0, false, false), OpenMode::kImmutable);
  // Read-only with log and index: SQLite reads both; a log with data is never skipped.
  EXPECT_EQ(mode(true, 4096, true, false), OpenMode::kReader);
  EXPECT_EQ(mode(true, 0, true, false), OpenMode::kReader);
  EXPECT_EQ(mode(true, 4096, false, false), OpenMode::kUnreadable);
}

TEST_F(QueryOpenTest, InspectStoreSiteSeesTheFiles) {
  StoreSite site = InspectStoreSite(path_);
  EXPECT_FALSE(site.wal_exists);
  EXPECT_FALSE(site.shm_exists);
  EXPECT_TRUE(site.dir_writable);
  sqlite3* writer = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &writer), SQLITE_OK);
  Exec(writer, "INSERT INTO t VALUES (4)");
  site = InspectStoreSite(path_);
  EXPECT_TRUE(site.wal_exists);
  EXPECT_GT(site.wal_size, 0u);
  EXPECT_TRUE(site.shm_exists);
  sqlite3_close(writer);
}

TEST_F(QueryOpenTest, AReadLeavesNoFilesBehind) {
  const std::string bytes = ReadFileBytes(path_);
  EXPECT_EQ(Csv(path_, "SELECT sum(x) AS s FROM t"), "s\r\n6\r\n");
  EXPECT_FALSE(Exists(path_ + "-wal"));
  EXPECT_FALSE(Exists(path_ + "-shm"));
  EXPECT_EQ(ReadFileBytes(path_), bytes);
  // Nor does a failing or refused query.
  EXPECT_THROW(QueryReadOnly(path_, "SELECT nope FROM t"), StoreError);
  EXPECT_THROW(QueryReadOnly(path_, "DELETE FROM t"), StoreError);
  EXPECT_THROW(QueryReadOnly(path_, "SELECT json('{') FROM t"), StoreError);
  EXPECT_FALSE(Exists(path_ + "-wal"));
  EXPECT_FALSE(Exists(path_ + "-shm"));
  EXPECT_EQ(ReadFileBytes(path_), bytes);
}

TEST_F(QueryOpenTest, AnAttachedStoreIsLeftCleanToo) {
  const std::string other = PathOf("other.db");
  MakeCleanStore(other);
  EXPECT_EQ(Csv(path_, "ATTACH '" + other + "' AS o; SELECT count(*) AS n FROM o.t"), "n\r\n3\r\n");
  EXPECT_FALSE(Exists(other + "-wal"));
  EXPECT_FALSE(Exists(other + "-shm"));
  EXPECT_FALSE(Exists(path_ + "-wal"));
}

TEST_F(QueryOpenTest, ALiveWritersFilesAreLeftAlone) {
  sqlite3* writer = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &writer), SQLITE_OK);
  Exec(writer, "PRAGMA wal_autocheckpoint = 0; INSERT INTO t VALUES (4)");
  EXPECT_EQ(Csv(path_, "SELECT sum(x) AS s FROM t"), "s\r\n10\r\n");  // sees the log's commit
  EXPECT_TRUE(Exists(path_ + "-wal"));
  EXPECT_TRUE(Exists(path_ + "-shm"));
  Exec(writer, "INSERT INTO t VALUES (5)");  // the writer goes on
  EXPECT_EQ(Csv(path_, "SELECT sum(x) AS s FROM t"), "s\r\n15\r\n");
  ASSERT_EQ(sqlite3_close(writer), SQLITE_OK);
  EXPECT_FALSE(Exists(path_ + "-wal"));  // the writer, closing last, removed them
}

TEST_F(QueryOpenTest, AWriterThatOpensDuringTheReadKeepsItsFiles) {
  // The writer opens while the query's own -wal/-shm exist: the tidy-up must not remove them.
  class OpeningSink : public RowSink {
   public:
    explicit OpeningSink(std::string path) : path_(std::move(path)) {}
    void Begin(const std::vector<std::string>&) override {}
    void Row(const std::vector<Value>&) override {
      if (writer_ != nullptr) return;
      sqlite3_open(path_.c_str(), &writer_);
      sqlite3_exec(writer_, "INSERT INTO t VALUES (4)", nullptr, nullptr, nullptr);
    }
    std::string path_;
    sqlite3* writer_ = nullptr;
  } sink(path_);
  QueryReadOnly(path_, "SELECT x FROM t", sink);
  ASSERT_NE(sink.writer_, nullptr);
  EXPECT_TRUE(Exists(path_ + "-wal"));
  EXPECT_TRUE(Exists(path_ + "-shm"));
  EXPECT_EQ(Csv(path_, "SELECT sum(x) AS s FROM t"), "s\r\n10\r\n");
  ASSERT_EQ(sqlite3_close(sink.writer_), SQLITE_OK);
  EXPECT_FALSE(Exists(path_ + "-wal"));
  EXPECT_EQ(Csv(path_, "SELECT sum(x) AS s FROM t"), "s\r\n10\r\n");
}

TEST_F(QueryOpenTest, ACleanStoreOnReadOnlyMediaCanBeRead) {
  const std::string answer = InReadOnlyView([](const std::string& dir) {
    const std::string db = dir + "/runx.db";
    const std::string mode = ChooseOpenMode(InspectStoreSite(db)) == OpenMode::kImmutable ? "immutable" : "reader";
    return mode + " " + Csv(db, "SELECT sum(x) AS s FROM t");
  });
  if (answer.rfind("skip:", 0) == 0) GTEST_SKIP() << answer;
  EXPECT_EQ(answer, "immutable s\r\n6\r\n");
  EXPECT_FALSE(Exists(path_ + "-wal"));
  EXPECT_FALSE(Exists(path_ + "-shm"));
}

TEST_F(QueryOpenTest, AStoreWithALiveWriterOnReadOnlyMediaCanBeRead) {
  // The writer works in the writable view; the reader sees the same files read-only, log and
  // index included, and reads the writer's last commit from the log.
  sqlite3* writer = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &writer), SQLITE_OK);
  Exec(writer, "PRAGMA wal_autocheckpoint = 0; INSERT INTO t VALUES (4)");
  const std::string answer = InReadOnlyView([](const std::string& dir) {
    const std::string db = dir + "/runx.db";
    const std::string mode = ChooseOpenMode(InspectStoreSite(db)) == OpenMode::kImmutable ? "immutable" : "reader";
    return mode + " " + Csv(db, "SELECT sum(x) AS s FROM t");
  });
  sqlite3_close(writer);
  if (answer.rfind("skip:", 0) == 0) GTEST_SKIP() << answer;
  EXPECT_EQ(answer, "reader s\r\n10\r\n");
}

TEST_F(QueryOpenTest, AStoreWithAnEmptyLogOnReadOnlyMediaCanBeRead) {
  // A copy of a store taken with its empty -wal but not its -shm.
  std::ofstream(path_ + "-wal").close();
  const std::string answer =
      InReadOnlyView([](const std::string& dir) { return Csv(dir + "/runx.db", "SELECT sum(x) AS s FROM t"); });
  if (answer.rfind("skip:", 0) == 0) GTEST_SKIP() << answer;
  EXPECT_EQ(answer, "s\r\n6\r\n");
}

TEST_F(QueryOpenTest, ALogWithoutItsIndexOnReadOnlyMediaIsAClearError) {
  // A copy of a store taken with its -wal (holding a commit) but not its -shm.
  const std::string copy = PathOf("media/copy.db");
  sqlite3* writer = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &writer), SQLITE_OK);
  Exec(writer, "PRAGMA wal_autocheckpoint = 0; INSERT INTO t VALUES (4)");
  std::filesystem::copy_file(path_, copy);
  std::filesystem::copy_file(path_ + "-wal", copy + "-wal");
  sqlite3_close(writer);
  const std::string answer =
      InReadOnlyView([](const std::string& dir) { return Csv(dir + "/copy.db", "SELECT sum(x) AS s FROM t"); });
  if (answer.rfind("skip:", 0) == 0) GTEST_SKIP() << answer;
  const std::string ro = PathOf("ro/copy.db");
  EXPECT_EQ(answer, "error: cannot read results store '" + ro + "': its log '" + ro +
                        "-wal' holds transactions that SQLite reads through '" + ro +
                        "-shm', which is missing and cannot be created in a read-only "
                        "directory; copy the store with its -wal to a writable place and query "
                        "the copy");
  // Where it can be created, the copy reads with its log.
  EXPECT_EQ(Csv(copy, "SELECT sum(x) AS s FROM t"), "s\r\n10\r\n");
}

}  // namespace
}  // namespace runx::store

// docs/sql.md is tested: every ```sql example runs on the example store (through QueryReadOnly
// and through the plain sqlite3 shell), a ```text block right after it is its exact output,
// every `sqlite3 ...` line of a ```sh block runs, and every column of every table and view is
// documented under its "### `name`" heading.
#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "store/store.h"
#include "test_support.h"

namespace runx::store {
namespace {

struct Block {
  std::string lang;
  std::string text;
  int line = 0;  ///< line of the opening fence
};

const std::string kDocPath = std::string(RUNX_SOURCE_DIR) + "/docs/sql.md";

std::vector<std::string> DocLines() {
  std::ifstream in(kDocPath);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::vector<Block> FencedBlocks() {
  std::vector<Block> blocks;
  const std::vector<std::string> lines = DocLines();
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].rfind("```", 0) != 0) continue;
    Block b{lines[i].substr(3), "", static_cast<int>(i) + 1};
    for (++i; i < lines.size() && lines[i].rfind("```", 0) != 0; ++i) b.text += lines[i] + "\n";
    blocks.push_back(b);
  }
  return blocks;
}

bool HaveSqliteShell() { return std::system("command -v sqlite3 >/dev/null 2>&1") == 0; }

std::string Where(const Block& b) { return kDocPath + ":" + std::to_string(b.line); }

class SqlDocsTest : public testing::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    db_ = PathOf("results/runx.db");
    testing::FillExampleStore(db_);
  }
  std::string db_;
};

// A fence with a typo in its tag (```tlabel) is skipped by the tests below and swallows the first
// line of its block: every fence must be tagged sql, text or sh, and closed by a bare ```.
TEST(SqlDocsFencesTest, EveryFenceIsTaggedAndClosed) {
  const std::vector<std::string> lines = DocLines();
  ASSERT_FALSE(lines.empty()) << "cannot read " << kDocPath;
  int open_line = 0;  // line of the fence now open; 0 outside a block
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].rfind("```", 0) != 0) continue;
    const std::string tag = lines[i].substr(3);
    const std::string where = kDocPath + ":" + std::to_string(i + 1);
    if (open_line != 0) {
      EXPECT_EQ(tag, "") << where << ": expected a bare ``` closing the block of line " << open_line;
      open_line = 0;
      continue;
    }
    EXPECT_TRUE(tag == "sql" || tag == "text" || tag == "sh")
        << where << ": expected a fence tagged sql, text or sh, got '```" << tag << "'";
    open_line = static_cast<int>(i) + 1;
  }
  EXPECT_EQ(open_line, 0) << kDocPath << ":" << open_line << ": the block opened here is never closed";
}

TEST_F(SqlDocsTest, ExamplesRunAndShowTheirOutput) {
  const std::vector<Block> blocks = FencedBlocks();
  int sql_blocks = 0;
  for (size_t i = 0; i < blocks.size(); ++i) {
    if (blocks[i].lang != "sql") continue;
    ++sql_blocks;
    QueryResult r;
    try {
      r = QueryReadOnly(db_, blocks[i].text);
    } catch (const StoreError& e) {
      ADD_FAILURE() << Where(blocks[i]) << ": " << e.what();
      continue;
    }
    EXPECT_FALSE(r.rows.empty()) << Where(blocks[i]) << ": no rows on the example store";
    if (i + 1 < blocks.size() && blocks[i + 1].lang == "text") {
      EXPECT_EQ(FormatResult(r, Format::kTable), blocks[i + 1].text) << Where(blocks[i + 1]);
    }
  }
  EXPECT_GE(sql_blocks, 10);
}

TEST_F(SqlDocsTest, ExamplesRunInTheSqlite3Shell) {
  if (!HaveSqliteShell()) GTEST_SKIP() << "no sqlite3 shell on PATH (Debian package sqlite3, in the test set)";
  for (const Block& b : FencedBlocks()) {
    if (b.lang != "sql") continue;
    const std::string sql_file = PathOf("example.sql");
    std::ofstream(sql_file) << b.text;
    const std::string cmd =
        "sqlite3 -bail -batch -readonly '" + db_ + "' < '" + sql_file + "' > '" + PathOf("out.txt") + "' 2>&1";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << Where(b) << ":\n" << testing::ReadFileBytes(PathOf("out.txt"));
  }
}

TEST_F(SqlDocsTest, ShellExamplesRun) {
  if (!HaveSqliteShell()) GTEST_SKIP() << "no sqlite3 shell on PATH (Debian package sqlite3, in the test set)";
  int run = 0;
  for (const Block& b : FencedBlocks()) {
    if (b.lang != "sh") continue;
    std::istringstream lines(b.text);
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("sqlite3 ", 0) != 0) continue;
      // Each line on a fresh copy of the example store, from the directory holding results/.
      const std::filesystem::path work = dir() / ("sh" + std::to_string(run++));
      std::filesystem::create_directories(work / "results");
      testing::FillExampleStore((work / "results/runx.db").string());
      const std::string cmd = "cd '" + work.string() + "' && " + line + " > /dev/null";
      EXPECT_EQ(std::system(cmd.c_str()), 0) << Where(b) << ": " << line;
    }
  }
  EXPECT_GE(run, 2);
}

TEST_F(SqlDocsTest, EveryColumnIsDocumented) {
  const std::vector<std::string> lines = DocLines();
  ASSERT_FALSE(lines.empty()) << "cannot read " << kDocPath;
  SQLite::Database db(db_, SQLite::OPEN_READONLY);
  SQLite::Statement objects(db,
                            "SELECT name FROM sqlite_schema WHERE type IN ('table', 'view') "
                            "AND name NOT LIKE 'sqlite_%' ORDER BY name");
  while (objects.executeStep()) {
    const std::string name = objects.getColumn(0).getString();
    const std::string heading = "### `" + name + "`";
    size_t i = 0;
    while (i < lines.size() && lines[i] != heading) ++i;
    if (i == lines.size()) {
      ADD_FAILURE() << kDocPath << ": no heading " << heading;
      continue;
    }
    std::string section;
    for (++i; i < lines.size() && lines[i].rfind("#", 0) != 0; ++i) section += lines[i] + "\n";
    SQLite::Statement columns(db, "SELECT name FROM pragma_table_info(?)");
    columns.bind(1, name);
    while (columns.executeStep()) {
      const std::string column = columns.getColumn(0).getString();
      EXPECT_NE(section.find("| `" + column + "` |"), std::string::npos)
          << kDocPath << ": column " << name << "." << column << " is not documented";
    }
  }
}

}  // namespace
}  // namespace runx::store

// The migration machinery with made-up migration lists: order, one transaction per step.
#include "store/schema.h"

#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>

#include "store/store.h"
#include "test_support.h"

namespace runx::store {
namespace {

class SchemaTest : public testing::TempDirTest {
 protected:
  SQLite::Database Open() { return SQLite::Database(PathOf("m.db"), SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE); }
};

const std::vector<Migration> kTwoSteps = {
    {1, "CREATE TABLE t (a INTEGER); INSERT INTO t VALUES (1);"},
    {2, "ALTER TABLE t ADD COLUMN b TEXT DEFAULT 'x'; INSERT INTO t (a) VALUES (2);"},
};

TEST_F(SchemaTest, AppliesMigrationsInOrderFromEmpty) {
  SQLite::Database db = Open();
  EXPECT_EQ(ReadSchemaVersion(db, "m.db"), 0);
  Migrate(db, kTwoSteps, "m.db");
  EXPECT_EQ(ReadSchemaVersion(db, "m.db"), 2);
  EXPECT_EQ(db.execAndGet("SELECT group_concat(a || b) FROM t").getString(), "1x,2x");
  // Applying again changes nothing.
  Migrate(db, kTwoSteps, "m.db");
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM t").getInt(), 2);
}

TEST_F(SchemaTest, AppliesOnlyTheMissingSteps) {
  SQLite::Database db = Open();
  Migrate(db, {kTwoSteps[0]}, "m.db");
  EXPECT_EQ(ReadSchemaVersion(db, "m.db"), 1);
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM t").getInt(), 1);
  Migrate(db, kTwoSteps, "m.db");
  EXPECT_EQ(ReadSchemaVersion(db, "m.db"), 2);
  EXPECT_EQ(db.execAndGet("SELECT group_concat(a || b) FROM t").getString(), "1x,2x");
}

TEST_F(SchemaTest, FailedStepLeavesThePreviousVersion) {
  SQLite::Database db = Open();
  Migrate(db, kTwoSteps, "m.db");
  std::vector<Migration> three = kTwoSteps;
  three.push_back({3, "CREATE TABLE u (x); INSERT INTO nowhere VALUES (1);"});
  try {
    Migrate(db, three, "m.db");
    FAIL() << "expected StoreError";
  } catch (const StoreError& e) {
    EXPECT_EQ(std::string(e.what()), "cannot migrate results store 'm.db' to schema version 3: no such table: nowhere");
  }
  EXPECT_EQ(ReadSchemaVersion(db, "m.db"), 2);
  EXPECT_FALSE(db.tableExists("u"));
}

TEST_F(SchemaTest, FailedFirstStepLeavesAnEmptyDatabase) {
  SQLite::Database db = Open();
  EXPECT_THROW(Migrate(db, {{1, "CREATE TABLE t (a); SELECT nonsense FROM t;"}}, "m.db"), StoreError);
  EXPECT_EQ(ReadSchemaVersion(db, "m.db"), 0);
  EXPECT_FALSE(db.tableExists("t"));
  EXPECT_FALSE(db.tableExists("schema_version"));
}

TEST_F(SchemaTest, RefusesNewerVersion) {
  SQLite::Database db = Open();
  Migrate(db, kTwoSteps, "m.db");
  try {
    Migrate(db, {kTwoSteps[0]}, "m.db");
    FAIL() << "expected StoreError";
  } catch (const StoreError& e) {
    EXPECT_EQ(std::string(e.what()),
              "results store 'm.db' has schema version 2, this runx supports up to 1; "
              "upgrade runx");
  }
}

TEST_F(SchemaTest, RealMigrationsAreNumberedWithoutGaps) {
  const auto& migrations = Migrations();
  ASSERT_FALSE(migrations.empty());
  for (size_t i = 0; i < migrations.size(); ++i) {
    EXPECT_EQ(migrations[i].version, static_cast<int>(i) + 1);
  }
  EXPECT_EQ(LatestSchemaVersion(), migrations.back().version);
}

}  // namespace
}  // namespace runx::store

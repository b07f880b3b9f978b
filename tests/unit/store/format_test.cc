// FormatResult and MakeResultWriter: whole outputs compared, one test per format.
#include <gtest/gtest.h>

#include <sstream>

#include "store/format.h"
#include "store/store.h"

namespace runx::store {
namespace {

QueryResult Sample() {
  QueryResult r;
  r.columns = {"id", "label", "samples_per_s", "peak_mem_bytes", "note"};
  r.rows = {
      {int64_t{1}, std::string("baseline"), 1234.5, int64_t{123456789}, std::monostate{}},
      {int64_t{2}, std::string("bf16+cl"), 1234567.891, int64_t{9007199254740993}, std::string("has, comma")},
      {int64_t{10}, std::string("\xC3\xBCn\xC3\xAF"), 0.000123456789, std::monostate{}, std::string("say \"hi\"\nbye")},
  };
  return r;
}

TEST(FormatTest, Table) {
  EXPECT_EQ(FormatResult(Sample(), Format::kTable),
            "id  label     samples_per_s    peak_mem_bytes  note\n"
            "--  --------  -------------  ----------------  -------------\n"
            " 1  baseline         1234.5         123456789\n"
            " 2  bf16+cl         1234568  9007199254740993  has, comma\n"
            "10  \xC3\xBCn\xC3\xAF         0.000123457                    say \"hi\"\\nbye\n");
}

TEST(FormatTest, Markdown) {
  QueryResult r = Sample();
  r.rows[1][4] = std::string("a|b");
  EXPECT_EQ(FormatResult(r, Format::kMarkdown),
            "| id | label | samples_per_s | peak_mem_bytes | note |\n"
            "| ---: | --- | ---: | ---: | --- |\n"
            "| 1 | baseline | 1234.5 | 123456789 |  |\n"
            "| 2 | bf16+cl | 1234568 | 9007199254740993 | a\\|b |\n"
            "| 10 | \xC3\xBCn\xC3\xAF | 0.000123457 |  | say \"hi\"\\nbye |\n");
  QueryResult no_rows;
  no_rows.columns = {"trial_id", "label"};
  EXPECT_EQ(FormatResult(no_rows, Format::kMarkdown), "| trial_id | label |\n| --- | --- |\n");
  EXPECT_EQ(FormatResult(QueryResult{}, Format::kMarkdown), "");
}

TEST(FormatTest, TableRealsAreCompact) {
  QueryResult r;
  r.columns = {"x"};
  for (double v : {2.0, -0.5, 123456.7, 1e20, 1e-7, 0.1 + 0.2, 999999.9}) r.rows.push_back({v});
  EXPECT_EQ(FormatResult(r, Format::kTable),
            "      x\n"
            "-------\n"
            "      2\n"
            "   -0.5\n"
            " 123457\n"
            "  1e+20\n"
            "  1e-07\n"
            "    0.3\n"
            "1000000\n");
}

TEST(FormatTest, TableTextColumnsAreLeftAligned) {
  QueryResult r;
  r.columns = {"label", "n"};
  r.rows = {{std::string("a"), std::monostate{}}, {std::string("long label"), std::monostate{}}};
  EXPECT_EQ(FormatResult(r, Format::kTable),
            "label       n\n"
            "----------  -\n"
            "a\n"
            "long label\n");
}

TEST(FormatTest, Csv) {
  EXPECT_EQ(FormatResult(Sample(), Format::kCsv),
            "id,label,samples_per_s,peak_mem_bytes,note\r\n"
            "1,baseline,1234.5,123456789,\r\n"
            "2,bf16+cl,1234567.891,9007199254740993,\"has, comma\"\r\n"
            "10,\xC3\xBCn\xC3\xAF,0.000123456789,,\"say \"\"hi\"\"\nbye\"\r\n");
}

TEST(FormatTest, Json) {
  EXPECT_EQ(FormatResult(Sample(), Format::kJson),
            "[\n"
            "  {\"id\":1,\"label\":\"baseline\",\"samples_per_s\":1234.5,"
            "\"peak_mem_bytes\":123456789,\"note\":null},\n"
            "  {\"id\":2,\"label\":\"bf16+cl\",\"samples_per_s\":1234567.891,"
            "\"peak_mem_bytes\":9007199254740993,\"note\":\"has, comma\"},\n"
            "  {\"id\":10,\"label\":\"\xC3\xBCn\xC3\xAF\",\"samples_per_s\":0.000123456789,"
            "\"peak_mem_bytes\":null,\"note\":\"say \\\"hi\\\"\\nbye\"}\n"
            "]\n");
}

TEST(FormatTest, JsonRealsStayReal) {
  QueryResult r;
  r.columns = {"x"};
  r.rows = {{2.0}, {int64_t{2}}};
  EXPECT_EQ(FormatResult(r, Format::kJson), "[\n  {\"x\":2.0},\n  {\"x\":2}\n]\n");
}

TEST(FormatTest, EmptyResults) {
  QueryResult none;
  EXPECT_EQ(FormatResult(none, Format::kTable), "");
  EXPECT_EQ(FormatResult(none, Format::kCsv), "");
  EXPECT_EQ(FormatResult(none, Format::kJson), "[]\n");
  QueryResult no_rows;
  no_rows.columns = {"trial_id", "label"};
  EXPECT_EQ(FormatResult(no_rows, Format::kTable),
            "trial_id  label\n"
            "--------  -----\n");
  EXPECT_EQ(FormatResult(no_rows, Format::kCsv), "trial_id,label\r\n");
  EXPECT_EQ(FormatResult(no_rows, Format::kJson), "[]\n");
}

// What MakeResultWriter writes for `r`, row by row.
std::string Streamed(const QueryResult& r, Format format, size_t table_window) {
  std::ostringstream out;
  const std::unique_ptr<RowSink> writer = MakeResultWriter(format, out, table_window);
  writer->Begin(r.columns);
  for (const auto& row : r.rows) writer->Row(row);
  writer->End();
  return out.str();
}

TEST(FormatTest, TableSizesItsColumnsOnAWindowAndKeepsThoseWidths) {
  QueryResult r;
  r.columns = {"label", "n", "note"};
  r.rows = {{std::string("a"), int64_t{1}, std::monostate{}},
            {std::string("bb"), int64_t{22}, std::string("x")},
            {std::string("a longer label"), int64_t{333333}, std::string("y")},
            {std::string("c"), std::string("text"), std::monostate{}}};
  // The first two rows size the columns; later ones overflow, the numbers stay right-aligned.
  EXPECT_EQ(Streamed(r, Format::kTable, 2),
            "label   n  note\n"
            "-----  --  ----\n"
            "a       1\n"
            "bb     22  x\n"
            "a longer label  333333  y\n"
            "c      text\n");
  // A window that holds every row aligns like FormatResult.
  EXPECT_EQ(Streamed(r, Format::kTable, kTableWindowRows), FormatResult(r, Format::kTable));
  EXPECT_EQ(Streamed(Sample(), Format::kTable, 1000), FormatResult(Sample(), Format::kTable));
}

TEST(FormatTest, CsvAndJsonStreamTheSameText) {
  for (Format f : {Format::kCsv, Format::kJson}) {
    EXPECT_EQ(Streamed(Sample(), f, 1), FormatResult(Sample(), f));
  }
}

TEST(FormatTest, JsonKeepsOneKeyPerColumnName) {
  // As an object built column by column: the first place, the last value.
  QueryResult r;
  r.columns = {"a", "b", "a"};
  r.rows = {{int64_t{1}, int64_t{2}, int64_t{3}}};
  EXPECT_EQ(FormatResult(r, Format::kJson), "[\n  {\"a\":3,\"b\":2}\n]\n");
}

}  // namespace
}  // namespace runx::store

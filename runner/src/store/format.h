#pragma once
// How `runx query` prints a result: a table for people, CSV and JSON for tools, written row by
// row as the query steps.
#include <cstddef>
#include <iosfwd>
#include <memory>
#include <string>

#include "store/query.h"

namespace runx::store {

enum class Format { kTable, kCsv, kJson, kMarkdown };

/// Rows the table format holds back to size its columns (see MakeResultWriter).
inline constexpr size_t kTableWindowRows = 1000;

/// A sink that writes the result to `out` in `format` while QueryReadOnly steps it.
/// kTable: aligned columns for people (reals to 6 significant digits, NULL empty, numbers
/// right-aligned). Its widths come from the header and the first `table_window` rows, which it
/// holds back; later rows keep those widths and a longer value overflows its column instead of
/// realigning what is already printed (memory stays bounded, output starts after a window).
/// kCsv: RFC 4180 with CRLF line ends and a header row; kJson: an array of objects, one per
/// line. These two write each row as it comes and keep reals at full (round-trip) precision.
/// kMarkdown: a GitHub table written row by row (numbers right-aligned by the first row's types,
/// reals to 6 significant digits and control characters escaped as in the table, `|` escaped).
/// Every format ends in a newline unless the result has no columns, which writes "" (table,
/// CSV) or "[]\n" (JSON). A failed write to `out` (full disk, closed pipe) throws StoreError.
std::unique_ptr<RowSink> MakeResultWriter(Format format, std::ostream& out, size_t table_window = kTableWindowRows);

/// A whole result in `format` (MakeResultWriter into a string; a small result's table is fully
/// aligned).
std::string FormatResult(const QueryResult& result, Format format);

}  // namespace runx::store

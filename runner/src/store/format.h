#pragma once
// How `runx query` prints a result: a table for people, CSV and JSON for tools.
#include <string>

#include "store/query.h"

namespace runx::store {

enum class Format { kTable, kCsv, kJson };
/// kTable: aligned columns for people (reals to 6 significant digits, NULL empty);
/// kCsv: RFC 4180 with CRLF line ends and a header row; kJson: an array of objects, one per
/// line. CSV and JSON keep reals at full (round-trip) precision. Every format ends in a newline
/// unless the result has no columns, which formats as "" (table, CSV) or "[]\n" (JSON).
std::string FormatResult(const QueryResult& result, Format format);

}  // namespace runx::store

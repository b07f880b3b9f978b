#pragma once
// One writer for every table runx prints beside `runx query`: the end-of-run report (and its
// --export-* files), `runx compare` and `runx history`. A table comes in two forms: texts for
// people (aligned columns, or markdown) and typed values for tools (CSV, JSON), since a cell such
// as "117.20 (117.10-117.30)" is three numbers to a tool. No LibTorch.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "store/query.h"

namespace runx::report {

enum class OutputFormat { kTable, kCsv, kJson, kMarkdown };

/// "table" | "csv" | "json" | "markdown"; nullopt for anything else.
std::optional<OutputFormat> ParseOutputFormat(const std::string& name);

/// Display width of UTF-8 text: its code points (the tables' texts have no wide characters).
size_t DisplayWidth(const std::string& text);

/// A number for a DataTable cell, NULL when there is none.
store::Value NumberOrNull(const std::optional<double>& value);

/// Milliseconds for people: two decimals, or three significant digits below 1 ms.
std::string FormatMs(double ms);

/// Energy or power for people, three significant digits, no exponent: "0.00312", "1.52", "412".
std::string FormatEnergy(double value);

/// Bytes for people, in binary units: "512 B", "118.8 KiB", "1.5 GiB".
std::string FormatBytes(int64_t bytes);

/// A table for people.
struct TextTable {
  std::vector<std::string> headers;
  std::vector<bool> right;  ///< per column: right-aligned (numbers); missing entries: left
  std::vector<std::vector<std::string>> rows;
};

/// Columns padded to their widest cell (UTF-8 code points), two spaces apart, trailing blanks cut,
/// a header line first; "" without rows.
std::string RenderText(const TextTable& table);

/// A GitHub-flavoured markdown table (right-aligned columns get `--:`; `|` in a cell escaped);
/// "" without rows.
std::string RenderMarkdown(const TextTable& table);

/// A table for tools: one value per column, full precision; NULL (std::monostate) for "none".
struct DataTable {
  std::vector<std::string> columns;
  std::vector<std::vector<store::Value>> rows;
};

/// CSV as `runx query --format csv` writes it (RFC 4180, CRLF, a header row).
std::string RenderCsv(const DataTable& table);

/// The rows as a JSON array of objects keyed by column name, in column order.
nlohmann::ordered_json ToJson(const DataTable& table);

}  // namespace runx::report

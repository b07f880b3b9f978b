// FormatResult: how `runx query` prints a QueryResult (table for people, CSV and JSON for tools).
#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string_view>

#include "store/format.h"
#include "store/store.h"

namespace runx::store {
namespace {

constexpr std::string_view kColumnGap = "  ";

bool IsNumber(const Value& v) {
  return std::holds_alternative<int64_t>(v) || std::holds_alternative<double>(v);
}

// Up to 6 significant digits without trailing zeros; values below 1e15 keep all their integer
// digits instead of switching to an exponent (a throughput of 1234567 stays readable).
std::string CompactReal(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  std::string s = fmt::format("{:.6g}", v);
  const double magnitude = std::fabs(v);
  if (s.find('e') != std::string::npos && magnitude >= 1 && magnitude < 1e15) {
    s = fmt::format("{:.0f}", v);
  }
  return s;
}

// Control characters would break the alignment: show them escaped.
std::string EscapeForTable(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string TableCell(const Value& v) {
  if (const auto* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&v)) return CompactReal(*d);
  if (const auto* s = std::get_if<std::string>(&v)) return EscapeForTable(*s);
  return "";
}

// Display width: UTF-8 code points.
size_t Width(std::string_view s) {
  size_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

void Pad(std::string* line, const std::string& cell, size_t width, bool right) {
  const std::string fill(width - Width(cell), ' ');
  *line += right ? fill + cell : cell + fill;
}

void AppendLine(std::string* out, std::string line) {
  while (!line.empty() && line.back() == ' ') line.pop_back();
  *out += line;
  *out += '\n';
}

std::string FormatTable(const QueryResult& r) {
  const size_t ncols = r.columns.size();
  if (ncols == 0) return "";
  std::vector<size_t> width(ncols);
  std::vector<bool> numeric(ncols, true);     // every non-NULL value is a number...
  std::vector<bool> any_value(ncols, false);  // ...and there is at least one
  std::vector<std::vector<std::string>> cells;
  cells.reserve(r.rows.size());
  for (size_t c = 0; c < ncols; ++c) width[c] = Width(r.columns[c]);
  for (const auto& row : r.rows) {
    auto& texts = cells.emplace_back();
    for (size_t c = 0; c < ncols; ++c) {
      const Value& v = c < row.size() ? row[c] : Value{};
      texts.push_back(TableCell(v));
      width[c] = std::max(width[c], Width(texts.back()));
      if (std::holds_alternative<std::monostate>(v)) continue;
      any_value[c] = true;
      numeric[c] = numeric[c] && IsNumber(v);
    }
  }
  std::string out;
  std::string header, rule;
  for (size_t c = 0; c < ncols; ++c) {
    if (c > 0) {
      header += kColumnGap;
      rule += kColumnGap;
    }
    Pad(&header, r.columns[c], width[c], numeric[c] && any_value[c]);
    rule += std::string(width[c], '-');
  }
  AppendLine(&out, header);
  AppendLine(&out, rule);
  for (size_t i = 0; i < cells.size(); ++i) {
    std::string line;
    for (size_t c = 0; c < ncols; ++c) {
      if (c > 0) line += kColumnGap;
      const Value& v = c < r.rows[i].size() ? r.rows[i][c] : Value{};
      Pad(&line, cells[i][c], width[c], IsNumber(v));
    }
    AppendLine(&out, line);
  }
  return out;
}

std::string CsvField(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string CsvCell(const Value& v) {
  if (const auto* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&v)) return fmt::format("{}", *d);  // round-trip
  if (const auto* s = std::get_if<std::string>(&v)) return CsvField(*s);
  return "";
}

std::string FormatCsv(const QueryResult& r) {
  if (r.columns.empty()) return "";
  std::string out;
  const auto append_row = [&out](const std::vector<std::string>& fields) {
    for (size_t c = 0; c < fields.size(); ++c) {
      if (c > 0) out += ',';
      out += fields[c];
    }
    out += "\r\n";  // RFC 4180 line end
  };
  std::vector<std::string> fields;
  for (const auto& name : r.columns) fields.push_back(CsvField(name));
  append_row(fields);
  for (const auto& row : r.rows) {
    fields.clear();
    for (size_t c = 0; c < r.columns.size(); ++c) {
      fields.push_back(c < row.size() ? CsvCell(row[c]) : "");
    }
    append_row(fields);
  }
  return out;
}

nlohmann::ordered_json JsonValue(const Value& v) {
  if (const auto* i = std::get_if<int64_t>(&v)) return *i;
  if (const auto* d = std::get_if<double>(&v)) return *d;  // non-finite values dump as null
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  return nullptr;
}

std::string FormatJson(const QueryResult& r) {
  if (r.rows.empty()) return "[]\n";
  std::string out = "[\n";
  for (size_t i = 0; i < r.rows.size(); ++i) {
    nlohmann::ordered_json object = nlohmann::ordered_json::object();
    for (size_t c = 0; c < r.columns.size(); ++c) {
      object[r.columns[c]] = c < r.rows[i].size() ? JsonValue(r.rows[i][c]) : nullptr;
    }
    out += "  ";
    out += object.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
    out += i + 1 < r.rows.size() ? ",\n" : "\n";
  }
  return out + "]\n";
}

}  // namespace

std::string FormatResult(const QueryResult& result, Format format) {
  switch (format) {
    case Format::kTable:
      return FormatTable(result);
    case Format::kCsv:
      return FormatCsv(result);
    case Format::kJson:
      return FormatJson(result);
  }
  return "";
}

}  // namespace runx::store

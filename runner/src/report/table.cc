#include "report/table.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>

#include "store/format.h"

namespace runx::report {
namespace {

constexpr const char* kGap = "  ";

std::string Pad(const std::string& s, size_t width, bool right) {
  const size_t w = DisplayWidth(s);
  if (w >= width) return s;
  const std::string fill(width - w, ' ');
  return right ? fill + s : s + fill;
}

bool RightAligned(const TextTable& t, size_t column) { return column < t.right.size() && t.right[column]; }

std::string MarkdownCell(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '|') out += '\\';
    out += c == '\n' ? ' ' : c;
  }
  return out;
}

}  // namespace

size_t DisplayWidth(const std::string& text) {
  size_t n = 0;
  for (char c : text) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

store::Value NumberOrNull(const std::optional<double>& value) { return value ? store::Value(*value) : store::Value{}; }

std::string FormatBytes(int64_t bytes) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  size_t unit = 0;
  while (std::fabs(value) >= 1024 && unit + 1 < std::size(kUnits)) {
    value /= 1024;
    ++unit;
  }
  return unit == 0 ? fmt::format("{} B", bytes) : fmt::format("{:.1f} {}", value, kUnits[unit]);
}

std::string FormatEnergy(double value) {
  return std::fabs(value) >= 100 ? fmt::format("{:.0f}", value) : fmt::format("{:.3g}", value);
}

std::string FormatMs(double ms) { return std::fabs(ms) >= 1 ? fmt::format("{:.2f}", ms) : fmt::format("{:.3g}", ms); }

std::optional<OutputFormat> ParseOutputFormat(const std::string& name) {
  if (name == "table") return OutputFormat::kTable;
  if (name == "csv") return OutputFormat::kCsv;
  if (name == "json") return OutputFormat::kJson;
  if (name == "markdown") return OutputFormat::kMarkdown;
  return std::nullopt;
}

std::string RenderText(const TextTable& table) {
  if (table.rows.empty()) return "";
  std::vector<size_t> widths;
  for (const std::string& h : table.headers) widths.push_back(DisplayWidth(h));
  for (const auto& row : table.rows) {
    for (size_t c = 0; c < row.size() && c < widths.size(); ++c) widths[c] = std::max(widths[c], DisplayWidth(row[c]));
  }
  const auto line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (size_t c = 0; c < widths.size(); ++c) {
      if (c > 0) out += kGap;
      out += Pad(c < cells.size() ? cells[c] : "", widths[c], RightAligned(table, c));
    }
    out.erase(out.find_last_not_of(' ') + 1);
    return out + "\n";
  };
  std::string out = line(table.headers);
  for (const auto& row : table.rows) out += line(row);
  return out;
}

std::string RenderMarkdown(const TextTable& table) {
  if (table.rows.empty()) return "";
  const auto line = [&](const std::vector<std::string>& cells) {
    std::string out = "|";
    for (size_t c = 0; c < table.headers.size(); ++c) {
      out += " " + MarkdownCell(c < cells.size() ? cells[c] : "") + " |";
    }
    return out + "\n";
  };
  std::string out = line(table.headers) + "|";
  for (size_t c = 0; c < table.headers.size(); ++c) out += RightAligned(table, c) ? " --: |" : " --- |";
  out += "\n";
  for (const auto& row : table.rows) out += line(row);
  return out;
}

std::string RenderCsv(const DataTable& table) {
  return store::FormatResult({table.columns, table.rows}, store::Format::kCsv);
}

nlohmann::ordered_json ToJson(const DataTable& table) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const auto& row : table.rows) {
    nlohmann::ordered_json o = nlohmann::ordered_json::object();
    for (size_t c = 0; c < table.columns.size(); ++c) {
      const store::Value& v = c < row.size() ? row[c] : store::Value{};
      if (const auto* i = std::get_if<int64_t>(&v)) {
        o[table.columns[c]] = *i;
      } else if (const auto* d = std::get_if<double>(&v)) {
        o[table.columns[c]] = *d;
      } else if (const auto* s = std::get_if<std::string>(&v)) {
        o[table.columns[c]] = *s;
      } else {
        o[table.columns[c]] = nullptr;
      }
    }
    rows.push_back(std::move(o));
  }
  return rows;
}

}  // namespace runx::report

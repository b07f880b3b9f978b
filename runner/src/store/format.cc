// MakeResultWriter: how `runx query` prints a result (table for people, CSV and JSON for tools),
// row by row; FormatResult is the same writer into a string.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>
#include <string_view>
#include <utility>

#include "base/terminal.h"
#include "store/format.h"
#include "store/store.h"

namespace runx::store {
namespace {

constexpr std::string_view kColumnGap = "  ";

bool IsNumber(const Value& v) { return std::holds_alternative<int64_t>(v) || std::holds_alternative<double>(v); }

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

std::string TableCell(const Value& v) {
  if (const auto* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&v)) return CompactReal(*d);
  if (const auto* s = std::get_if<std::string>(&v))
    return base::Printable(*s);  // no control character reaches the terminal
  return "";
}

// Display width: UTF-8 code points.
size_t Width(std::string_view s) {
  size_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

void Pad(std::string* line, const std::string& cell, size_t width, bool right) {
  const size_t w = Width(cell);
  const std::string fill(width > w ? width - w : 0, ' ');  // a later, longer value overflows
  *line += right ? fill + cell : cell + fill;
}

// The output of one writer; a failed write stops the query.
class StreamWriter : public RowSink {
 protected:
  explicit StreamWriter(std::ostream& out) : out_(out) {}
  void Write(std::string_view text) {
    out_.write(text.data(), static_cast<std::streamsize>(text.size()));
    if (!out_) {
      throw StoreError(
          "cannot write the query's result: the output failed (closed pipe or full "
          "disk?)");
    }
  }

 private:
  std::ostream& out_;
};

class TableWriter : public StreamWriter {
 public:
  TableWriter(std::ostream& out, size_t window) : StreamWriter(out), window_(window) {}

  void Begin(const std::vector<std::string>& columns) override {
    columns_ = columns;
    width_.clear();
    for (const auto& name : columns_) width_.push_back(Width(name));
    numeric_.assign(columns_.size(), true);     // every non-NULL value is a number...
    any_value_.assign(columns_.size(), false);  // ...and there is at least one
  }

  void Row(const std::vector<Value>& values) override {
    if (columns_.empty()) return;
    std::vector<Cell> cells;
    cells.reserve(columns_.size());
    for (size_t c = 0; c < columns_.size(); ++c) {
      const Value& v = c < values.size() ? values[c] : Value{};
      cells.push_back({TableCell(v), IsNumber(v)});
      if (sized_) continue;
      width_[c] = std::max(width_[c], Width(cells.back().text));
      if (std::holds_alternative<std::monostate>(v)) continue;
      any_value_[c] = true;
      numeric_[c] = numeric_[c] && cells.back().number;
    }
    if (sized_) {
      WriteCells(cells);
      return;
    }
    held_.push_back(std::move(cells));
    if (held_.size() >= window_) WriteHeld();
  }

  void End() override {
    if (!sized_ && !columns_.empty()) WriteHeld();
  }

 private:
  struct Cell {
    std::string text;
    bool number = false;
  };

  // The widths are final: header, rule and the rows held so far.
  void WriteHeld() {
    sized_ = true;
    std::string header, rule;
    for (size_t c = 0; c < columns_.size(); ++c) {
      if (c > 0) {
        header += kColumnGap;
        rule += kColumnGap;
      }
      Pad(&header, columns_[c], width_[c], numeric_[c] && any_value_[c]);
      rule += std::string(width_[c], '-');
    }
    WriteLine(std::move(header));
    WriteLine(std::move(rule));
    for (const auto& cells : held_) WriteCells(cells);
    held_.clear();
    held_.shrink_to_fit();
  }

  void WriteCells(const std::vector<Cell>& cells) {
    std::string line;
    for (size_t c = 0; c < cells.size(); ++c) {
      if (c > 0) line += kColumnGap;
      Pad(&line, cells[c].text, width_[c], cells[c].number);
    }
    WriteLine(std::move(line));
  }

  void WriteLine(std::string line) {
    while (!line.empty() && line.back() == ' ') line.pop_back();
    line += '\n';
    Write(line);
  }

  const size_t window_;
  std::vector<std::string> columns_;
  std::vector<size_t> width_;
  std::vector<bool> numeric_;
  std::vector<bool> any_value_;
  std::vector<std::vector<Cell>> held_;
  bool sized_ = false;
};

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

class CsvWriter : public StreamWriter {
 public:
  explicit CsvWriter(std::ostream& out) : StreamWriter(out) {}

  void Begin(const std::vector<std::string>& columns) override {
    ncols_ = columns.size();
    if (ncols_ == 0) return;
    line_.clear();
    for (size_t c = 0; c < ncols_; ++c) {
      if (c > 0) line_ += ',';
      line_ += CsvField(columns[c]);
    }
    line_ += "\r\n";  // RFC 4180 line end
    Write(line_);
  }

  void Row(const std::vector<Value>& values) override {
    if (ncols_ == 0) return;
    line_.clear();
    for (size_t c = 0; c < ncols_; ++c) {
      if (c > 0) line_ += ',';
      if (c < values.size()) line_ += CsvCell(values[c]);
    }
    line_ += "\r\n";
    Write(line_);
  }

 private:
  size_t ncols_ = 0;
  std::string line_;
};

// A table cell's text (control characters already escaped) inside a markdown row.
std::string MarkdownCell(const std::string& text) {
  std::string out;
  for (char c : text) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

class MarkdownWriter : public StreamWriter {
 public:
  explicit MarkdownWriter(std::ostream& out) : StreamWriter(out) {}

  void Begin(const std::vector<std::string>& columns) override {
    ncols_ = columns.size();
    header_.clear();
    for (const auto& c : columns) header_ += "| " + MarkdownCell(base::Printable(c)) + " ";
    if (ncols_ > 0) header_ += "|\n";
  }

  void Row(const std::vector<Value>& values) override {
    if (ncols_ == 0) return;
    if (rows_++ == 0) WriteHeader(&values);
    line_.clear();
    for (size_t c = 0; c < ncols_; ++c)
      line_ += "| " + MarkdownCell(c < values.size() ? TableCell(values[c]) : "") + " ";
    line_ += "|\n";
    Write(line_);
  }

  void End() override {
    if (ncols_ > 0 && rows_ == 0) WriteHeader(nullptr);
  }

 private:
  void WriteHeader(const std::vector<Value>* first) {
    std::string rule;
    for (size_t c = 0; c < ncols_; ++c)
      rule += first != nullptr && c < first->size() && IsNumber((*first)[c]) ? "| ---: " : "| --- ";
    Write(header_ + rule + "|\n");
  }

  size_t ncols_ = 0, rows_ = 0;
  std::string header_, line_;
};

std::string JsonText(const nlohmann::ordered_json& j) {
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

nlohmann::ordered_json JsonValue(const Value& v) {
  if (const auto* i = std::get_if<int64_t>(&v)) return *i;
  if (const auto* d = std::get_if<double>(&v)) return *d;  // non-finite values dump as null
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  return nullptr;
}

class JsonWriter : public StreamWriter {
 public:
  explicit JsonWriter(std::ostream& out) : StreamWriter(out) {}

  // A column name given twice is one key, where it first appears, holding the last value (as a
  // JSON object built column by column would).
  void Begin(const std::vector<std::string>& columns) override {
    keys_.clear();
    for (size_t c = 0; c < columns.size(); ++c) {
      const std::string key = JsonText(columns[c]) + ":";
      auto same = std::find_if(keys_.begin(), keys_.end(), [&](const auto& k) { return k.first == key; });
      if (same == keys_.end()) {
        keys_.emplace_back(key, c);
      } else {
        same->second = c;
      }
    }
  }

  void Row(const std::vector<Value>& values) override {
    line_ = rows_++ == 0 ? "[\n  {" : ",\n  {";
    for (size_t k = 0; k < keys_.size(); ++k) {
      if (k > 0) line_ += ',';
      line_ += keys_[k].first;
      const size_t c = keys_[k].second;
      line_ += c < values.size() ? JsonText(JsonValue(values[c])) : "null";
    }
    line_ += '}';
    Write(line_);
  }

  void End() override { Write(rows_ == 0 ? "[]\n" : "\n]\n"); }

 private:
  std::vector<std::pair<std::string, size_t>> keys_;  // `"name":` and its column
  size_t rows_ = 0;
  std::string line_;
};

}  // namespace

std::unique_ptr<RowSink> MakeResultWriter(Format format, std::ostream& out, size_t table_window) {
  switch (format) {
    case Format::kTable:
      return std::make_unique<TableWriter>(out, table_window);
    case Format::kCsv:
      return std::make_unique<CsvWriter>(out);
    case Format::kJson:
      return std::make_unique<JsonWriter>(out);
    case Format::kMarkdown:
      return std::make_unique<MarkdownWriter>(out);
  }
  return nullptr;
}

std::string FormatResult(const QueryResult& result, Format format) {
  std::ostringstream out;
  // The whole result fits in the window: a table aligned over every row.
  const std::unique_ptr<RowSink> writer = MakeResultWriter(format, out, std::max<size_t>(result.rows.size(), 1));
  writer->Begin(result.columns);
  for (const auto& row : result.rows) writer->Row(row);
  writer->End();
  return out.str();
}

}  // namespace runx::store

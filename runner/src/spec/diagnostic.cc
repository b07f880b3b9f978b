#include <fmt/format.h>

#include "spec/spec.h"

namespace runx::spec {
namespace {

constexpr size_t kMaxShownLine = 120;  ///< longer source lines are shown as a window around the caret

bool IsContinuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

/// The source line as shown (control characters replaced, long lines cut around `column`) and
/// the caret line under it.
std::pair<std::string, std::string> SourceAndCaret(const std::string& line, int column) {
  size_t caret = column > 0 ? static_cast<size_t>(column - 1) : 0;
  caret = std::min(caret, line.size());
  size_t begin = 0, end = line.size();
  if (line.size() > kMaxShownLine) {
    begin = caret > kMaxShownLine / 2 ? caret - kMaxShownLine / 2 : 0;
    end = std::min(line.size(), begin + kMaxShownLine);
    while (begin > 0 && begin < line.size() && IsContinuation(line[begin])) ++begin;
    while (end < line.size() && IsContinuation(line[end])) ++end;
  }
  std::string shown = begin > 0 ? "..." : "";
  std::string marker = begin > 0 ? "   " : "";
  for (size_t i = begin; i < end; ++i) {
    const char c = line[i];
    const bool control = (static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7f;
    shown += control ? '?' : c;
    if (i < caret && !IsContinuation(c)) marker += c == '\t' ? '\t' : ' ';
  }
  if (end < line.size()) shown += "...";
  return {shown, marker + "^"};
}

}  // namespace

std::string Diagnostic::Render() const {
  std::string out = line > 0 ? fmt::format("{}:{}:{}: error: {}\n", file, line, column, message)
                             : fmt::format("{}: error: {}\n", file, message);
  if (line > 0 && !source_line.empty()) {
    const auto [shown, caret] = SourceAndCaret(source_line, column);
    out += fmt::format("{:5d} | {}\n      | {}\n", line, shown, caret);
  }
  for (const auto& note : notes) out += fmt::format("note: {}\n", note);
  return out;
}

namespace {

std::string RenderAll(const std::vector<Diagnostic>& diagnostics, const std::string& path) {
  std::string out;
  for (const auto& d : diagnostics) out += d.Render();
  const size_t n = diagnostics.size();
  out += fmt::format("{} error{} in {}\n", n, n == 1 ? "" : "s", path);
  return out;
}

std::string FirstFile(const std::vector<Diagnostic>& diagnostics) {
  for (const auto& d : diagnostics)
    if (d.file.rfind("--set ", 0) != 0) return d.file;
  return diagnostics.empty() ? "" : diagnostics.front().file;
}

}  // namespace

SpecError::SpecError(std::vector<Diagnostic> diagnostics, std::string path)
    : std::runtime_error(RenderAll(diagnostics, path.empty() ? FirstFile(diagnostics) : path)),
      diagnostics_(std::move(diagnostics)),
      path_(path.empty() ? FirstFile(diagnostics_) : std::move(path)) {}

std::string SpecError::Render() const { return RenderAll(diagnostics_, path_); }

}  // namespace runx::spec

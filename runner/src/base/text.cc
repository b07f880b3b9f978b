#include "base/text.h"

namespace runx::base {
namespace {

constexpr std::string_view kBlanks = " \t\r";

std::string_view TrimEnd(std::string_view line) {
  const size_t end = line.find_last_not_of(kBlanks);
  return end == std::string_view::npos ? std::string_view() : line.substr(0, end + 1);
}

}  // namespace

std::string FirstLine(std::string_view text) {
  while (!text.empty()) {
    const size_t end = text.find('\n');
    const std::string_view line = TrimEnd(text.substr(0, end));
    const size_t begin = line.find_first_not_of(kBlanks);
    if (begin != std::string_view::npos) return std::string(line.substr(begin));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return "";
}

std::string LastLine(std::string_view text, std::string_view skip_containing) {
  std::string_view last;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    const std::string_view line = TrimEnd(text.substr(0, end));
    if (!line.empty() && (skip_containing.empty() || line.find(skip_containing) == std::string_view::npos)) last = line;
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return std::string(last);
}

}  // namespace runx::base

#include "base/terminal.h"

#include <fmt/format.h>

namespace runx::base {

namespace {

std::string Escape(std::string_view text, bool keep_newlines) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == 0xC2 && i + 1 < text.size()) {
      const auto next = static_cast<unsigned char>(text[i + 1]);
      if (next >= 0x80 && next <= 0x9F) {  // a C1 control in UTF-8 (CSI is U+009B)
        out += fmt::format("\\u{:04x}", next);
        ++i;
        continue;
      }
    }
    if (c >= 0x20 && c != 0x7F) {
      out += static_cast<char>(c);
      continue;
    }
    if (c == '\n' && keep_newlines) {
      out += '\n';
      continue;
    }
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
      case 0x1B:
        out += "\\e";
        break;
      default:
        out += fmt::format("\\x{:02x}", c);
    }
  }
  return out;
}

}  // namespace

std::string Printable(std::string_view text) { return Escape(text, false); }

std::string PrintableLines(std::string_view text) { return Escape(text, true); }

}  // namespace runx::base

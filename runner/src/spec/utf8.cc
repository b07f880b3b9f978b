#include "spec/utf8.h"

#include <fmt/format.h>

#include "spec/issue.h"

namespace runx::spec {
namespace {

/// The length of the well-formed UTF-8 sequence at `text[i]`, or 0 when there is none.
size_t SequenceAt(std::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char c = byte(i);
  if (c < 0x80) return 1;
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the allowed range of the second byte (RFC 3629, table 3-7)
  if (c >= 0xC2 && c <= 0xDF)
    n = 2;
  else if (c >= 0xE0 && c <= 0xEF)
    n = 3, lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
  else if (c >= 0xF0 && c <= 0xF4)
    n = 4, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
  else
    return 0;
  if (i + n > text.size()) return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (size_t k = 2; k < n; ++k)
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  return n;
}

template <typename F>
std::string Rewrite(std::string_view text, F&& bad_byte) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const size_t n = SequenceAt(text, i);
    if (n == 0) {
      out += bad_byte(static_cast<unsigned char>(text[i]));
      ++i;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  return out;
}

}  // namespace

size_t InvalidUtf8At(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const size_t n = SequenceAt(text, i);
    if (n == 0) return i;
    i += n;
  }
  return std::string::npos;
}

std::string ReplaceInvalidUtf8(std::string_view text) {
  return Rewrite(text, [](unsigned char) { return std::string("\xEF\xBF\xBD"); });
}

std::string EscapeInvalidUtf8(std::string_view text) {
  return Rewrite(text, [](unsigned char c) { return fmt::format("\\x{:02x}", c); });
}

size_t Utf8Length(std::string_view text) {
  size_t n = 0;
  for (const char c : text) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

std::string InvalidUtf8Message(std::string_view text, const std::string& what) {
  const size_t at = InvalidUtf8At(text);
  if (at == std::string::npos) return "";
  return fmt::format("invalid UTF-8 byte 0x{:02x} in {} {}", static_cast<unsigned char>(text[at]), what,
                     Quote(std::string(text)));
}

}  // namespace runx::spec

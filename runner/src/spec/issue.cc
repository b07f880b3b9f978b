#include "spec/issue.h"

#include <fmt/format.h>

#include "spec/source_map.h"
#include "spec/utf8.h"

namespace runx::spec {
namespace {

constexpr size_t kMaxQuoted = 60;

}  // namespace

std::string Quote(const std::string& raw) {
  const std::string text = InvalidUtf8At(raw) == std::string::npos ? raw : EscapeInvalidUtf8(raw);
  std::string out = "'";
  size_t shown = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (shown >= kMaxQuoted && (c & 0xC0) != 0x80) {
      out += "...";
      break;
    }
    if (c < 0x20 || c == 0x7f) {
      out += c == '\n' ? std::string("\\n") : c == '\t' ? std::string("\\t") : fmt::format("\\x{:02x}", c);
    } else {
      out += static_cast<char>(c);
    }
    if ((c & 0xC0) != 0x80) ++shown;
  }
  return out + "'";
}

std::string ValueText(const json& value) {
  if (value.is_string()) return Quote(value.get<std::string>());
  if (value.is_object()) return "a mapping";
  if (value.is_array()) return "a list";
  return value.dump();
}

std::string DescribeValue(const json& value) {
  switch (value.type()) {
    case json::value_t::string:
      return "string " + ValueText(value);
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return "integer " + value.dump();
    case json::value_t::number_float:
      return "number " + value.dump();
    case json::value_t::boolean:
      return "boolean " + value.dump();
    case json::value_t::null:
      return "null";
    case json::value_t::object:
      return "a mapping";
    case json::value_t::array:
      return "a list";
    default:
      return "a value";
  }
}

std::string QuotedList(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + Quote(item);
  return out;
}

std::string OrList(const std::vector<std::string>& items) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += i + 1 == items.size() ? " or " : ", ";
    out += items[i];
  }
  return out;
}

std::string DisplayPath(const json& doc, const std::string& pointer) {
  std::string out;
  const json* node = &doc;
  for (const auto& token : PointerTokens(pointer)) {
    if (node && node->is_array()) {
      out += "[" + token + "]";
      const size_t index = std::strtoul(token.c_str(), nullptr, 10);
      node = index < node->size() ? &(*node)[index] : nullptr;
      continue;
    }
    out += (out.empty() ? "" : ".") + token;
    if (node && node->is_object()) {
      const auto it = node->find(token);
      node = it != node->end() ? &*it : nullptr;
    } else {
      node = nullptr;
    }
  }
  return out;
}

}  // namespace runx::spec

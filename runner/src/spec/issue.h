#pragma once
// Internal: a problem found in a document, located by JSON pointer, and the helpers that word it.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace runx::spec {

using nlohmann::json;

/// A problem with the value at `pointer`; turned into a Diagnostic once its origin is looked up.
struct Issue {
  std::string pointer;  ///< JSON pointer of the value (or of the mapping that lacks a key)
  bool at_key = false;  ///< point at the value's key instead of the value itself
  std::string message;  ///< lower case start, no final period
  std::vector<std::string> notes;
};

/// `'text'`, with control characters and bytes that are not UTF-8 escaped (`\xff`), and long
/// text shortened.
std::string Quote(const std::string& text);
/// The value as a user wrote it: `0.1`, `-4`, `true`, `'abc'`.
std::string ValueText(const json& value);
/// The kind and value: `string 'abc'`, `integer -4`, `number 0.5`, `boolean true`, `null`,
/// `a mapping`, `a list`.
std::string DescribeValue(const json& value);
/// `'a', 'b', 'c'`
std::string QuotedList(const std::vector<std::string>& items);
/// `a, b or c`
std::string OrList(const std::vector<std::string>& items);
/// The user's name for a place in `doc`: `/data/batch_size` -> `data.batch_size`,
/// `/data/shape/1` -> `data.shape[1]`.
std::string DisplayPath(const json& doc, const std::string& pointer);

}  // namespace runx::spec

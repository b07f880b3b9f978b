#pragma once
// Internal: words why one value fails its subschema. Used on the places valijson reports.
#include <map>
#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "spec/issue.h"

namespace runx::spec {

class SchemaExplainer {
 public:
  /// `root` applies to the value at `base` in `doc`.
  SchemaExplainer(const json& root, const json& doc, std::string base);

  /// The subschema that applies at `pointer` (relative to base), or nullptr.
  const json* SchemaAt(const std::string& pointer) const;

  /// Appends the problems of the value at `pointer` (relative to base) that its own schema
  /// keywords find; children are not visited. Returns true when the value is wrong as a whole
  /// (wrong type, not one of the allowed alternatives): its children need no messages.
  bool Explain(const std::string& pointer, std::vector<Issue>* out) const;

 private:
  const json& Resolve(const json& schema) const;
  const json* Child(const json& schema, const json& parent, const std::string& token, bool branches) const;
  bool ExplainAt(const json& schema, const json& value, const std::string& pointer, std::vector<Issue>* out) const;
  bool Matches(const json& schema, const json& value, int depth) const;
  bool PatternMatches(const std::string& pattern, const std::string& text) const;
  std::vector<std::string> Describe(const json& schema) const;
  std::string Path(const std::string& pointer) const;

  void CheckNumber(const json& s, const json& v, const std::string& pointer, std::vector<Issue>* out) const;
  void CheckString(const json& s, const json& v, const std::string& pointer, std::vector<Issue>* out) const;
  void CheckArray(const json& s, const json& v, const std::string& pointer, std::vector<Issue>* out) const;
  void CheckObject(const json& s, const json& v, const std::string& pointer, std::vector<Issue>* out) const;

  const json& root_;
  const json& doc_;
  std::string base_;
  mutable std::map<std::string, std::regex> regexes_;
};

}  // namespace runx::spec

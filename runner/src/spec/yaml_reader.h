#pragma once
// Internal: YAML text -> JSON document plus the origin of every node, with hard limits so that
// hostile input (alias bombs, deep nesting, huge values) gives one error instead of a hang.
#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "spec/source_map.h"

namespace runx::spec {

struct ReadLimits {
  size_t max_nodes = 100000;       ///< after expanding aliases
  size_t max_depth = 64;           ///< nested mappings and lists
  size_t max_scalar_bytes = 4096;  ///< longer values are refused (std::regex recurses per char)
};

/// A problem found while reading, at a place in the text.
struct ReadProblem {
  Location where;
  std::string message;
  std::vector<std::string> notes;
};

struct YamlDocument {
  nlohmann::json value;  ///< null when there is no document
  SourceMap origins;
  bool empty = true;   ///< nothing but comments, blank lines or a bare '---' / '~'
  bool fatal = false;  ///< reading stopped; `value` is incomplete
  std::vector<ReadProblem> problems;
};

/// Reads one YAML document. Scalars are typed by the YAML 1.2 core schema (quoted scalars stay
/// strings); keys must be strings; duplicate keys are reported; a second document is an error.
YamlDocument ReadYaml(const std::string& text, const ReadLimits& limits = {});

}  // namespace runx::spec

#pragma once
// Internal: the canonical form of a document (optimizations as a map) and schema defaults.
#include <vector>

#include <nlohmann/json.hpp>

#include "spec/issue.h"
#include "spec/source_map.h"

namespace runx::spec {

/// `optimizations: [a, b]` -> `{a: {}, b: {}}`, `a: ~` -> `a: {}`; origins follow the names.
std::vector<Issue> NormaliseOptimizations(json* doc, SourceMap* origins);

/// Follows local "$ref"s ("#/definitions/x") from subschema `s` of `root`; nullptr when a
/// reference is not local, does not resolve, or the result is not a schema object. The one
/// `$ref` resolver of spec: defaults, sweep axes and the schema explainer all use it.
const json* ResolveRef(const json& root, const json* s);

/// Fills the schema's `default`s into `value`, recursively for mappings present (or defaulted).
/// `root` resolves local `$ref`s.
void FillDefaults(const json& root, const json& schema, json* value);

}  // namespace runx::spec

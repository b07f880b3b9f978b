#pragma once
// Internal: checks a JSON value against a JSON Schema with valijson, then words each failure
// for a user (what was expected, what was found, did you mean) instead of valijson's text.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "spec/issue.h"

namespace runx::spec {

/// Problems of `value`, which lies at `base` in `doc`, against `schema`; one issue per problem,
/// most specific place first. `schema` must have been accepted by valijson's parser.
std::vector<Issue> CheckAgainstSchema(const json& schema, const json& doc, const std::string& base, const json& value);

/// Throws std::exception when valijson cannot use `schema` (bad $ref, wrong keyword types).
void ParseSchemaOrThrow(const json& schema);

}  // namespace runx::spec

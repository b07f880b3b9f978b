#include "spec/schema_check.h"

#include <algorithm>
#include <set>
#include <tuple>

#include <fmt/format.h>
#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>

#include "spec/schema_explain.h"
#include "spec/source_map.h"

namespace runx::spec {
namespace {

void Parse(const json& schema, valijson::Schema* parsed) {
  valijson::SchemaParser parser(valijson::SchemaParser::kDraft7);
  const valijson::adapters::NlohmannJsonAdapter adapter(schema);
  parser.populateSchema(adapter, *parsed);
}

/// valijson's context ("<root>", "[data]", "[batch_size]") as a JSON pointer ("/data/batch_size").
std::string ContextPointer(const std::vector<std::string>& context) {
  std::string pointer;
  for (const auto& part : context) {
    if (part.size() >= 2 && part.front() == '[' && part.back() == ']')
      pointer = PointerAppend(pointer, part.substr(1, part.size() - 2));
  }
  return pointer;
}

size_t Depth(const std::string& pointer) {
  return static_cast<size_t>(std::count(pointer.begin(), pointer.end(), '/'));
}

bool Under(const std::string& pointer, const std::string& prefix) {
  return pointer.compare(0, prefix.size(), prefix) == 0 &&
         (pointer.size() == prefix.size() || pointer[prefix.size()] == '/');
}

}  // namespace

void ParseSchemaOrThrow(const json& schema) {
  valijson::Schema parsed;
  Parse(schema, &parsed);
}

std::vector<Issue> CheckAgainstSchema(const json& schema, const json& doc, const std::string& base, const json& value) {
  valijson::Schema parsed;
  Parse(schema, &parsed);
  valijson::Validator validator;
  valijson::ValidationResults results;
  const valijson::adapters::NlohmannJsonAdapter target(value);
  if (validator.validate(parsed, target, &results)) return {};

  // valijson reports a failure at every level above it too; explain each failing place by its
  // own keywords only, shallowest first, and stop below a value that is wrong as a whole.
  std::set<std::string> failing;
  valijson::ValidationResults::Error error;
  while (results.popError(error)) failing.insert(ContextPointer(error.context));
  std::vector<std::string> order(failing.begin(), failing.end());
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return Depth(a) < Depth(b); });

  const SchemaExplainer explainer(schema, doc, base);
  std::vector<Issue> issues;
  std::vector<std::string> wholly_wrong;
  for (const auto& pointer : order) {
    if (std::any_of(wholly_wrong.begin(), wholly_wrong.end(), [&](const auto& w) { return Under(pointer, w); }))
      continue;
    if (explainer.Explain(pointer, &issues)) wholly_wrong.push_back(pointer);
  }
  if (issues.empty()) {  // a keyword the explainer does not know: still say where
    const std::string& deepest = order.back();
    const json* sub = explainer.SchemaAt(deepest);
    Issue issue{base + deepest, false, fmt::format("{} is not valid", Quote(DisplayPath(doc, base + deepest))), {}};
    if (sub && sub->is_object() && sub->contains("description") && (*sub)["description"].is_string())
      issue.notes.push_back("expected " + (*sub)["description"].get<std::string>());
    issues.push_back(std::move(issue));
  }
  // One message per problem.
  std::vector<Issue> unique;
  std::set<std::tuple<std::string, bool, std::string>> seen;
  for (auto& issue : issues)
    if (seen.emplace(issue.pointer, issue.at_key, issue.message).second) unique.push_back(std::move(issue));
  return unique;
}

}  // namespace runx::spec

#include "spec/checks.h"

#include <tuple>

#include <fmt/format.h>

#include "spec/overrides.h"
#include "spec/schema_check.h"

namespace runx::spec {
namespace {

/// Where a value was set, for ordering ("the second of two") and for notes.
struct Place {
  std::tuple<int, int, int> order;  ///< file before overrides; then line, column
  std::string text;                 ///< "at line 12" or "by --set train.steps=5"
};

Place PlaceOf(const std::string& pointer, const SourceMap& origins, const std::vector<Override>& overrides) {
  const Origin* o = origins.Nearest(pointer);
  if (!o) return {{0, 0, 0}, "in the file"};
  if (o->override_index >= 0)
    return {{1, o->override_index, 0}, "by " + OverrideFile(overrides[static_cast<size_t>(o->override_index)].text)};
  const Location at = o->key.line > 0 ? o->key : o->value;
  return {{0, at.line, at.column}, fmt::format("at line {}", at.line)};
}

}  // namespace

std::string TechniqueNote(const std::string& name, const SchemaSet& schemas) {
  std::vector<std::string> known;
  for (const auto& [technique, schema] : schemas.techniques) known.push_back(technique);
  std::string expected;
  if (known.empty()) {
    std::string dirs;
    for (const auto& d : schemas.plugin_dirs) dirs += (dirs.empty() ? "" : ", ") + Quote(d);
    expected = dirs.empty() ? "no techniques are installed; build the plugins or add their directory to RUNX_PLUGIN_PATH"
                            : "no techniques are installed in " + dirs;
  } else {
    expected = known.size() == 1 ? "expected " + Quote(known.front()) : "expected one of " + QuotedList(known);
  }
  const std::string guess = DidYouMean(name, known);
  if (!guess.empty()) expected += fmt::format("; did you mean {}?", Quote(guess));
  return expected;
}

std::vector<Issue> CheckTechniques(const json& doc, const SchemaSet& schemas) {
  std::vector<Issue> issues;
  if (!doc.is_object() || !doc.contains("optimizations") || !doc["optimizations"].is_object()) return issues;
  for (const auto& [name, params] : doc["optimizations"].items()) {
    const std::string pointer = PointerAppend("/optimizations", name);
    const auto it = schemas.techniques.find(name);
    if (it == schemas.techniques.end()) {
      issues.push_back({pointer, true, fmt::format("unknown technique {}", Quote(name)), {TechniqueNote(name, schemas)}});
      continue;
    }
    if (!params.is_object()) continue;  // the experiment schema says what is wrong
    for (auto& issue : CheckAgainstSchema(it->second, doc, pointer, params)) issues.push_back(std::move(issue));
  }
  return issues;
}

std::vector<Issue> CheckSemantics(const json& doc, const SourceMap& origins, const std::vector<Override>& overrides) {
  std::vector<Issue> issues;
  if (!doc.is_object()) return issues;
  if (const auto train = doc.find("train");
      train != doc.end() && train->is_object() && train->contains("steps") && train->contains("epochs")) {
    Place steps = PlaceOf("/train/steps", origins, overrides);
    Place epochs = PlaceOf("/train/epochs", origins, overrides);
    const bool epochs_last = epochs.order > steps.order;
    const std::string later = epochs_last ? "epochs" : "steps", earlier = epochs_last ? "steps" : "epochs";
    issues.push_back({"/train/" + later, true,
                      fmt::format("'train.{}' cannot be used together with 'train.{}'", later, earlier),
                      {fmt::format("'train.{}' is set {}; measure either a number of steps or a number of epochs",
                                   earlier, (epochs_last ? steps : epochs).text)}});
  }
  if (const auto data = doc.find("data"); data != doc.end() && data->is_object() &&
                                          data->value("source", json()) == "synthetic") {
    for (const char* key : {"shape", "num_classes"}) {
      if (data->contains(key)) continue;
      issues.push_back({"/data", true, fmt::format("missing required key '{}' in 'data'", key),
                        {"synthetic data needs 'shape' and 'num_classes', e.g. shape: [3, 224, 224], num_classes: 1000"}});
    }
  }
  return issues;
}

}  // namespace runx::spec

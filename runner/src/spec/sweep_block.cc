#include "spec/sweep_block.h"

#include <algorithm>
#include <optional>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "spec/checks.h"
#include "spec/overrides.h"
#include "spec/resolve.h"

namespace runx::spec {
namespace {

/// Keys that say how trials run, not what a trial is: not in a variant's config (nor its hash).
const std::vector<std::string> kScheduleKeys = {"sweep", "repeats", "order", "order_seed", "trial_timeout_s"};

constexpr int kMaxSchemaDepth = 16;

/// Every dotted path the experiment schema names through `properties` (the axes a sweep may
/// have), in schema order.
void CollectPaths(const json& root, const json& schema, const std::string& prefix, int depth,
                  std::vector<std::string>* out) {
  const json* s = ResolveRef(root, &schema);
  if (!s || depth > kMaxSchemaDepth) return;
  const auto props = s->find("properties");
  if (props == s->end() || !props->is_object()) return;
  for (const auto& [key, sub] : props->items()) {
    if (depth == 0 && (key == "optimizations" ||
                       std::any_of(NotAxes().begin(), NotAxes().end(), [&](const auto& n) { return n.first == key; })))
      continue;
    const std::string path = prefix.empty() ? key : prefix + "." + key;
    out->push_back(path);
    CollectPaths(root, sub, path, depth + 1, out);
  }
}

/// Why `path` (optimizations.TECHNIQUE.PARAMETER) cannot be an axis of `config`; nullopt when it can:
/// a parameter its technique's schema names, of a technique the top-level `optimizations` turns on
/// (so that every variant runs it).
std::optional<std::string> TechniqueParameterProblem(const std::vector<std::string>& path, const json& config,
                                                     const SchemaSet& schemas) {
  const std::string hint =
      "a technique's parameter is swept as 'optimizations.TECHNIQUE.PARAMETER', e.g. "
      "'optimizations.data_parallel.world_size'";
  if (path.size() != 3) return hint;
  const auto schema = schemas.techniques.find(path[1]);
  if (schema == schemas.techniques.end()) return fmt::format("unknown technique {}; {}", Quote(path[1]), hint);
  std::vector<std::string> params;
  if (const json* s = ResolveRef(schema->second, &schema->second); s && s->contains("properties"))
    for (const auto& [name, sub] : s->at("properties").items()) params.push_back(name);
  if (std::find(params.begin(), params.end(), path[2]) == params.end()) {
    std::string note = fmt::format("{} has no parameter {}", Quote(path[1]), Quote(path[2]));
    const std::string guess = DidYouMean(path[2], params);
    if (!guess.empty()) note += fmt::format("; did you mean {}?", Quote(guess));
    return note;
  }
  const json& top = config.value("optimizations", json::object());
  if (!top.is_object() || !top.contains(path[1]))
    return fmt::format(
        "{} sweeps a parameter of a technique the experiment does not run: add {} to the top-level "
        "'optimizations'",
        Quote(fmt::format("{}", fmt::join(path, "."))), Quote(path[1]));
  return std::nullopt;
}

}  // namespace

const std::vector<std::pair<std::string, std::string>>& NotAxes() {
  static const std::vector<std::pair<std::string, std::string>> not_axes = {
      {"sweep", "the sweep cannot sweep itself"},
      {"repeats", "it says how trials run, not what a trial is; set it at the top level"},
      {"order", "it says how trials run, not what a trial is; set it at the top level"},
      {"order_seed", "it says how trials run, not what a trial is; set it at the top level"},
      {"trial_timeout_s", "it says how trials run, not what a trial is; set it at the top level"},
      {"results", "all trials of a sweep go into one results store"},
      {"name", "the trials of a sweep share the experiment's name"},
      {"description", "the trials of a sweep share the experiment's description"},
  };
  return not_axes;
}

std::vector<std::string> AxisOrder(const json& axes, const SourceMap& origins) {
  std::vector<std::pair<std::tuple<int, int, int>, std::string>> keyed;
  for (const auto& [key, values] : axes.items()) {
    const Origin* o = origins.Nearest(PointerAppend("/sweep/axes", key));
    std::tuple<int, int, int> at{2, 0, 0};
    if (o && o->override_index >= 0)
      at = {1, o->override_index, 0};
    else if (o)
      at = {0, (o->key.line > 0 ? o->key : o->value).line, (o->key.line > 0 ? o->key : o->value).column};
    keyed.emplace_back(at, key);
  }
  std::stable_sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> out;
  for (auto& k : keyed) out.push_back(k.second);
  return out;
}

json TrialBase(const json& config) {
  json base = config;
  for (const auto& k : kScheduleKeys) base.erase(k);
  return base;
}

Sweep ReadSweep(const json& config, const SchemaSet& schemas, const std::vector<std::string>& order,
                std::vector<Issue>* issues) {
  Sweep sweep;
  const json& block = config.at("sweep");
  sweep.mode = ParseSweepMode(block.value("mode", "grid"));
  const json& axes = block.at("axes");
  const json baseline = block.value("baseline", json::object());
  std::vector<std::string> paths;
  CollectPaths(schemas.experiment, schemas.experiment, "", 0, &paths);
  std::vector<std::string> candidates = paths;
  candidates.push_back("optimizations");

  for (const auto& key : order) {
    if (!axes.contains(key)) continue;
    const std::string at = PointerAppend("/sweep/axes", key);
    Axis axis;
    axis.key = key;
    axis.techniques = key == "optimizations";
    for (const auto& v : axes.at(key)) axis.values.push_back(v);
    if (!axis.techniques) {
      axis.path = SplitDots(key);
      if (std::find(paths.begin(), paths.end(), key) == paths.end()) {
        const auto why =
            std::find_if(NotAxes().begin(), NotAxes().end(), [&](const auto& n) { return n.first == key; });
        if (why != NotAxes().end()) {
          issues->push_back({at, true, fmt::format("{} cannot be a sweep axis", Quote(key)), {why->second}});
        } else if (axis.path.front() == "optimizations") {
          if (auto why = TechniqueParameterProblem(axis.path, config, schemas)) {
            issues->push_back({at, true, fmt::format("unknown axis {} in 'sweep.axes'", Quote(key)), {*why}});
            continue;
          }
          sweep.axes.push_back(std::move(axis));  // a technique's parameter: optimizations.TECHNIQUE.PARAMETER
          continue;
        } else {
          std::string note =
              "expected a config path such as 'precision', 'data.batch_size' or "
              "'train.optimizer.lr', or 'optimizations'";
          const std::string guess = DidYouMean(key, candidates);
          if (!guess.empty()) note += fmt::format("; did you mean {}?", Quote(guess));
          issues->push_back({at, true, fmt::format("unknown axis {} in 'sweep.axes'", Quote(key)), {note}});
        }
        continue;
      }
      for (const auto& other : sweep.axes) {
        if (other.techniques) continue;
        const auto& a = axis.path.size() < other.path.size() ? axis.path : other.path;
        const auto& b = axis.path.size() < other.path.size() ? other.path : axis.path;
        if (std::equal(a.begin(), a.end(), b.begin()))
          issues->push_back({at,
                             true,
                             fmt::format("axis {} overlaps axis {}", Quote(key), Quote(other.key)),
                             {"sweep a mapping or the values inside it, not both"}});
      }
    } else {
      for (size_t i = 0; i < axis.values.size(); ++i) {
        const std::string name = axis.values[i].get<std::string>();
        if (!schemas.techniques.count(name))
          issues->push_back({PointerAppend(at, i),
                             false,
                             fmt::format("unknown technique {}", Quote(name)),
                             {TechniqueNote(name, schemas)}});
      }
    }
    sweep.axes.push_back(std::move(axis));
  }

  // A swept parameter's technique is on in every variant: not also switched by the optimizations axis.
  for (const auto& param : sweep.axes) {
    if (param.techniques || param.path.front() != "optimizations") continue;
    for (const auto& switched : sweep.axes)
      if (switched.techniques &&
          std::find(switched.values.begin(), switched.values.end(), json(param.path[1])) != switched.values.end())
        issues->push_back({PointerAppend("/sweep/axes", param.key),
                           true,
                           fmt::format("axis {} sweeps a parameter of {}, which the 'optimizations' axis switches "
                                       "on and off",
                                       Quote(param.key), Quote(param.path[1])),
                           {"sweep a technique's parameters or switch it, not both"}});
  }

  std::vector<std::string> axis_keys;
  for (const auto& a : sweep.axes) axis_keys.push_back(a.key);
  for (const auto& [key, value] : baseline.items()) {
    if (axes.contains(key)) continue;  // an axis (when its key is wrong, that is reported there)
    {
      std::string note =
          axis_keys.size() == 1 ? "expected " + Quote(axis_keys.front()) : "expected one of " + QuotedList(axis_keys);
      const std::string guess = DidYouMean(key, axis_keys);
      if (!guess.empty()) note += fmt::format("; did you mean {}?", Quote(guess));
      issues->push_back({PointerAppend("/sweep/baseline", key),
                         true,
                         fmt::format("unknown axis {} in 'sweep.baseline'", Quote(key)),
                         {"the baseline gives a value to axes of 'sweep.axes'; " + note}});
    }
  }

  for (auto& axis : sweep.axes) {
    if (axis.techniques) {
      std::vector<std::string> on;
      if (baseline.contains("optimizations"))
        for (const auto& t : baseline["optimizations"]) on.push_back(t.get<std::string>());
      for (size_t i = 0; i < on.size(); ++i) {
        if (std::find(axis.values.begin(), axis.values.end(), json(on[i])) == axis.values.end()) {
          std::vector<std::string> listed;
          for (const auto& v : axis.values) listed.push_back(v.get<std::string>());
          issues->push_back(
              {PointerAppend("/sweep/baseline/optimizations", i),
               false,
               fmt::format("technique {} is not in the 'optimizations' axis", Quote(on[i])),
               {(listed.size() == 1 ? "expected " + Quote(listed.front()) : "expected one of " + QuotedList(listed)) +
                "; the baseline says which of the axis' techniques are on"}});
        }
      }
      for (const auto& v : axis.values)
        axis.base_on.push_back(std::find(on.begin(), on.end(), v.get<std::string>()) != on.end());
      continue;
    }
    if (baseline.contains(axis.key))
      axis.baseline = baseline[axis.key];
    else if (axis.key == "precision")
      axis.baseline = "fp32";
    else
      axis.baseline = axis.values.front();
    for (size_t i = 0; i < axis.values.size(); ++i)
      if (axis.values[i] != axis.baseline) axis.changes.push_back(i);
  }
  return sweep;
}

}  // namespace runx::spec

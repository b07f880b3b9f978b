#include "spec/sweep_check.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "spec/checks.h"
#include "spec/resolve.h"
#include "spec/schema_check.h"
#include "spec/variants.h"

namespace runx::spec {
namespace {

std::string Pointer(const std::vector<std::string>& path) {
  std::string p;
  for (const auto& t : path) p = PointerAppend(p, t);
  return p;
}

bool Under(const std::string& pointer, const std::string& prefix) {
  return pointer.compare(0, prefix.size(), prefix) == 0 &&
         (pointer.size() == prefix.size() || pointer[prefix.size()] == '/');
}

using IssueKey = std::pair<std::string, std::string>;

std::set<IssueKey> Keys(const std::vector<Issue>& issues) {
  std::set<IssueKey> keys;
  for (const auto& i : issues) keys.emplace(i.pointer, i.message);
  return keys;
}

std::string Plural(size_t n, const char* word) { return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s"); }

}  // namespace

std::vector<Issue> CheckSize(size_t variants, int repeats, bool repeats_written) {
  if (variants > kMaxVariants) {
    return {{"/sweep/axes",
             true,
             fmt::format(
                 "the sweep makes {} variants; at most {}",
                 variants > kMaxVariants * 2 ? fmt::format("more than {}", kMaxVariants * 2) : std::to_string(variants),
                 kMaxVariants),
             {"use fewer axes or values, or mode ablation (the baseline, each change alone, all changes together)"}}};
  }
  const size_t trials = variants * static_cast<size_t>(std::max(1, repeats));
  if (trials <= kMaxTrials) return {};
  return {{repeats_written ? "/repeats" : "/sweep/axes",
           !repeats_written,
           fmt::format("the sweep makes {} x {} = {} trials; at most {}", Plural(variants, "variant"),
                       Plural(static_cast<size_t>(repeats), "repeat"), trials, kMaxTrials),
           {fmt::format("use at most {} repeats with {} variants, or fewer axes or values; split a longer "
                        "campaign into several experiments",
                        kMaxTrials / variants, variants)}}};
}

std::vector<Issue> NormaliseSweepAxes(json* doc, SourceMap* origins) {
  std::vector<Issue> issues;
  if (!doc->is_object() || !doc->contains("sweep") || !(*doc)["sweep"].is_object()) return issues;
  json& sweep = (*doc)["sweep"];
  if (!sweep.contains("axes") || !sweep["axes"].is_object()) return issues;
  json& axes = sweep["axes"];
  const std::string base = "/sweep/axes";
  // Flatten, deepest mappings first: {data: {batch_size: [..]}} -> {"data.batch_size": [..]}.
  for (int round = 0; round < 64; ++round) {
    std::vector<std::string> nested;
    for (const auto& [key, value] : axes.items())
      if (value.is_object()) nested.push_back(key);
    if (nested.empty()) break;
    for (const auto& key : nested) {
      const std::string from = PointerAppend(base, key);
      json inner = std::move(axes[key]);
      axes.erase(key);
      for (auto& [sub, value] : inner.items()) {
        const std::string flat = key + "." + sub;
        const std::string to = PointerAppend(base, flat);
        if (axes.contains(flat)) {
          const Origin* o = origins->Nearest(PointerAppend(from, sub));
          if (!o || o->override_index < 0) {
            const Origin* first = origins->Nearest(to);
            issues.push_back({PointerAppend(from, sub),
                              true,
                              fmt::format("axis {} is given twice", Quote(flat)),
                              {first && first->override_index < 0 && first->key.line > 0
                                   ? fmt::format("first given at line {}", first->key.line)
                                   : "give each axis once"}});
            continue;
          }
          origins->EraseSubtree(to);  // an override replaces the file's axis
        }
        origins->CopySubtree(PointerAppend(from, sub), to);
        axes[flat] = std::move(value);
      }
      // The origins under `from` stay: a duplicate reported above points there.
    }
  }
  return issues;
}

std::vector<Issue> CheckSweep(const json& doc, const SchemaSet& schemas, const SourceMap& origins,
                              const std::vector<Override>& overrides, std::vector<std::string>* axis_order) {
  std::vector<Issue> issues;
  if (!doc.is_object() || !doc.contains("sweep")) return issues;
  const std::vector<std::string> order = AxisOrder(doc.at("sweep").at("axes"), origins);
  if (axis_order) *axis_order = order;

  // The experiment as a trial would see it, defaults filled in.
  json config = doc;
  FillDefaults(schemas.experiment, schemas.experiment, &config);
  if (config["optimizations"].is_object())
    for (auto& [name, params] : config["optimizations"].items())
      if (schemas.techniques.count(name) && params.is_object())
        FillDefaults(schemas.techniques.at(name), schemas.techniques.at(name), &params);

  Sweep sweep = ReadSweep(config, schemas, order, &issues);
  if (!issues.empty()) return issues;

  // Each value of each axis (and of the baseline), checked in the experiment on its own: the
  // problems it adds are its own.
  const json base = TrialBase(config);
  const json top = config.value("optimizations", json::object());
  const auto check = [&](const json& c) {
    std::vector<Issue> all = CheckAgainstSchema(schemas.experiment, c, "", c);
    for (auto& i : CheckTechniques(c, schemas)) all.push_back(std::move(i));
    for (auto& i : CheckSemantics(c, origins, overrides)) all.push_back(std::move(i));
    return all;
  };
  const auto known = Keys(check(base));
  const auto check_value = [&](size_t a, const json& value, const std::string& at) {
    const Axis& axis = sweep.axes[a];
    // Under a mapping that is absent or not a mapping, the experiment's own error says it.
    const json* parent = &base;
    for (size_t k = 0; k + 1 < axis.path.size() && parent; ++k) {
      const auto it = parent->find(axis.path[k]);
      parent = it != parent->end() && it->is_object() ? &*it : nullptr;
    }
    if (!parent) return;
    Sweep one;
    one.axes.push_back(axis);
    json c = BuildConfig(base, top, one, {value});
    const std::string target =
        axis.techniques ? PointerAppend("/optimizations", value[0].get<std::string>()) : Pointer(axis.path);
    for (auto& i : check(c)) {
      if (known.count({i.pointer, i.message})) continue;
      if (Under(i.pointer, target) && i.pointer.size() > target.size()) {
        i.pointer = at + i.pointer.substr(target.size());
      } else {
        i.pointer = at;
        i.at_key = false;
      }
      issues.push_back(std::move(i));
    }
  };
  for (size_t a = 0; a < sweep.axes.size(); ++a) {
    const Axis& axis = sweep.axes[a];
    const std::string at = PointerAppend("/sweep/axes", axis.key);
    for (size_t i = 0; i < axis.values.size(); ++i)
      check_value(a, axis.techniques ? json::array({axis.values[i]}) : axis.values[i], PointerAppend(at, i));
    const json& block = doc.at("sweep");
    if (!axis.techniques && block.contains("baseline") && block.at("baseline").contains(axis.key) &&
        std::find(axis.values.begin(), axis.values.end(), axis.baseline) == axis.values.end())
      check_value(a, axis.baseline, PointerAppend("/sweep/baseline", axis.key));
  }
  if (!issues.empty()) return issues;

  if (auto too_many = CheckSize(CountVariants(sweep), config.value("repeats", 1), doc.contains("repeats"));
      !too_many.empty())
    return too_many;
  // Rules that only a combination breaks (e.g. train.steps in one axis, train.epochs in another).
  // Their places are in no file: checked without origins; each rule reported for its first variant.
  const SourceMap nowhere;
  const auto known_rules = Keys(CheckSemantics(base, nowhere, overrides));
  std::set<std::string> reported;
  for (const auto& v : BuildVariants(config, sweep, schemas, false)) {
    for (auto& i : CheckSemantics(v.config, nowhere, overrides)) {
      if (known_rules.count({i.pointer, i.message}) || !reported.insert(i.message).second) continue;
      issues.push_back({"/sweep", true, fmt::format("variant {}: {}", Quote(v.name.label), i.message), i.notes});
    }
  }
  return issues;
}

}  // namespace runx::spec

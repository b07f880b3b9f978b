// The sweep block: checks (for Load/Validate), expansion into variants, scheduling, sharding and
// the text of `runx plan`.
#include "spec/sweep.h"

#include <algorithm>
#include <set>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

#include "spec/checks.h"
#include "spec/issue.h"
#include "spec/overrides.h"
#include "spec/resolve.h"
#include "spec/schema_check.h"
#include "spec/source_map.h"
#include "spec/yaml_reader.h"

namespace runx::spec {
namespace {

/// Keys that say how trials run, not what a trial is: not in a variant's config (nor its hash).
const std::vector<std::string> kScheduleKeys = {"sweep", "repeats", "order", "order_seed", "trial_timeout_s"};
/// Top-level keys that cannot be an axis, and why.
const std::vector<std::pair<std::string, std::string>> kNotAxes = {
    {"sweep", "the sweep cannot sweep itself"},
    {"repeats", "it says how trials run, not what a trial is; set it at the top level"},
    {"order", "it says how trials run, not what a trial is; set it at the top level"},
    {"order_seed", "it says how trials run, not what a trial is; set it at the top level"},
    {"trial_timeout_s", "it says how trials run, not what a trial is; set it at the top level"},
    {"results", "all trials of a sweep go into one results store"},
    {"name", "the trials of a sweep share the experiment's name"},
    {"description", "the trials of a sweep share the experiment's description"},
};

constexpr int kMaxSchemaDepth = 16;

std::string Pointer(const std::vector<std::string>& path) {
  std::string p;
  for (const auto& t : path) p = PointerAppend(p, t);
  return p;
}

bool Under(const std::string& pointer, const std::string& prefix) {
  return pointer.compare(0, prefix.size(), prefix) == 0 &&
         (pointer.size() == prefix.size() || pointer[prefix.size()] == '/');
}

/// Every dotted path the experiment schema names through `properties` (the axes a sweep may
/// have), in schema order.
void CollectPaths(const json& root, const json& schema, const std::string& prefix, int depth,
                  std::vector<std::string>* out) {
  const json* s = ResolveRef(root, &schema);
  if (!s || depth > kMaxSchemaDepth) return;
  const auto props = s->find("properties");
  if (props == s->end() || !props->is_object()) return;
  for (const auto& [key, sub] : props->items()) {
    if (depth == 0 && (key == "optimizations" || std::any_of(kNotAxes.begin(), kNotAxes.end(),
                                                             [&](const auto& n) { return n.first == key; })))
      continue;
    const std::string path = prefix.empty() ? key : prefix + "." + key;
    out->push_back(path);
    CollectPaths(root, sub, path, depth + 1, out);
  }
}

/// One axis of a sweep.
struct Axis {
  std::string key;                 ///< as written: "data.batch_size", "optimizations"
  std::vector<std::string> path;   ///< config path; empty for the optimizations axis
  bool techniques = false;
  std::vector<json> values;        ///< the listed values; technique names for the optimizations axis
  json baseline;                   ///< the baseline value (unused for techniques)
  std::vector<bool> base_on;       ///< techniques: on in the baseline
  std::vector<size_t> changes;     ///< values other than the baseline (indices into `values`)
};

struct Sweep {
  std::string mode = "grid";
  std::vector<Axis> axes;
};

/// A variant: for each axis its value (the optimizations axis: the list of techniques on).
using Choice = std::vector<json>;

std::string ValueLabel(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

/// Axis keys in the order written: by the origin of each key (file first, then overrides).
std::vector<std::string> AxisOrder(const json& axes, const SourceMap& origins) {
  std::vector<std::pair<std::tuple<int, int, int>, std::string>> keyed;
  for (const auto& [key, values] : axes.items()) {
    const Origin* o = origins.Nearest(PointerAppend("/sweep/axes", key));
    std::tuple<int, int, int> at{2, 0, 0};
    if (o && o->override_index >= 0) at = {1, o->override_index, 0};
    else if (o) at = {0, (o->key.line > 0 ? o->key : o->value).line, (o->key.line > 0 ? o->key : o->value).column};
    keyed.emplace_back(at, key);
  }
  std::stable_sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> out;
  for (auto& k : keyed) out.push_back(k.second);
  return out;
}

/// The config a trial of `exp_config` would get, minus the schedule keys.
json TrialBase(const json& config) {
  json base = config;
  for (const auto& k : kScheduleKeys) base.erase(k);
  return base;
}

/// Reads the sweep block of `config` (which passed the schema check there) into a Sweep,
/// reporting axis paths, technique names and baseline keys that are wrong.
Sweep ParseSweep(const json& config, const SchemaSet& schemas, const std::vector<std::string>& order,
                 std::vector<Issue>* issues) {
  Sweep sweep;
  const json& block = config.at("sweep");
  sweep.mode = block.value("mode", "grid");
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
        const auto why = std::find_if(kNotAxes.begin(), kNotAxes.end(), [&](const auto& n) { return n.first == key; });
        if (why != kNotAxes.end()) {
          issues->push_back({at, true, fmt::format("{} cannot be a sweep axis", Quote(key)), {why->second}});
        } else if (axis.path.front() == "optimizations") {
          issues->push_back({at, true, fmt::format("unknown axis {} in 'sweep.axes'", Quote(key)),
                             {"technique parameters cannot be swept; the 'optimizations' axis switches whole "
                              "techniques on and off, with the parameters given under the top-level 'optimizations'"}});
        } else {
          std::string note = "expected a config path such as 'precision', 'data.batch_size' or "
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
          issues->push_back({at, true, fmt::format("axis {} overlaps axis {}", Quote(key), Quote(other.key)),
                             {"sweep a mapping or the values inside it, not both"}});
      }
    } else {
      for (size_t i = 0; i < axis.values.size(); ++i) {
        const std::string name = axis.values[i].get<std::string>();
        if (!schemas.techniques.count(name))
          issues->push_back({PointerAppend(at, i), false, fmt::format("unknown technique {}", Quote(name)),
                             {TechniqueNote(name, schemas)}});
      }
    }
    sweep.axes.push_back(std::move(axis));
  }

  std::vector<std::string> axis_keys;
  for (const auto& a : sweep.axes) axis_keys.push_back(a.key);
  for (const auto& [key, value] : baseline.items()) {
    if (axes.contains(key)) continue;  // an axis (when its key is wrong, that is reported there)
    {
      std::string note = axis_keys.size() == 1 ? "expected " + Quote(axis_keys.front())
                                               : "expected one of " + QuotedList(axis_keys);
      const std::string guess = DidYouMean(key, axis_keys);
      if (!guess.empty()) note += fmt::format("; did you mean {}?", Quote(guess));
      issues->push_back({PointerAppend("/sweep/baseline", key), true,
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
          issues->push_back({PointerAppend("/sweep/baseline/optimizations", i), false,
                             fmt::format("technique {} is not in the 'optimizations' axis", Quote(on[i])),
                             {(listed.size() == 1 ? "expected " + Quote(listed.front())
                                                  : "expected one of " + QuotedList(listed)) +
                              "; the baseline says which of the axis' techniques are on"}});
        }
      }
      for (const auto& v : axis.values)
        axis.base_on.push_back(std::find(on.begin(), on.end(), v.get<std::string>()) != on.end());
      continue;
    }
    if (baseline.contains(axis.key)) axis.baseline = baseline[axis.key];
    else if (axis.key == "precision") axis.baseline = "fp32";
    else axis.baseline = axis.values.front();
    for (size_t i = 0; i < axis.values.size(); ++i)
      if (axis.values[i] != axis.baseline) axis.changes.push_back(i);
  }
  return sweep;
}

Choice BaselineChoice(const Sweep& sweep) {
  Choice c;
  for (const auto& axis : sweep.axes) {
    if (!axis.techniques) {
      c.push_back(axis.baseline);
      continue;
    }
    json on = json::array();
    for (size_t i = 0; i < axis.values.size(); ++i)
      if (axis.base_on[i]) on.push_back(axis.values[i]);
    c.push_back(std::move(on));
  }
  return c;
}

/// A dimension of the variant space: one non-technique axis, or one technique of the
/// optimizations axis (on / off).
struct Dim {
  size_t axis = 0;
  int technique = -1;         ///< index into the axis' values, or -1
  std::vector<json> domain;   ///< values, or booleans (on) for a technique; [0] is the baseline's
                              ///< except in grid mode
};

std::vector<Dim> Dims(const Sweep& sweep, bool grid) {
  std::vector<Dim> dims;
  for (size_t a = 0; a < sweep.axes.size(); ++a) {
    const Axis& axis = sweep.axes[a];
    if (axis.techniques) {
      for (size_t t = 0; t < axis.values.size(); ++t) {
        Dim d{a, static_cast<int>(t), {}};
        d.domain = grid ? std::vector<json>{false, true} : std::vector<json>{bool(axis.base_on[t]), !axis.base_on[t]};
        dims.push_back(std::move(d));
      }
      continue;
    }
    Dim d{a, -1, {}};
    if (grid) {
      d.domain = axis.values;
    } else {
      d.domain.push_back(axis.baseline);
      for (size_t i : axis.changes) d.domain.push_back(axis.values[i]);
    }
    dims.push_back(std::move(d));
  }
  return dims;
}

Choice MakeChoice(const Sweep& sweep, const std::vector<Dim>& dims, const std::vector<size_t>& picks) {
  Choice c = BaselineChoice(sweep);
  std::vector<std::vector<bool>> on(sweep.axes.size());
  for (size_t a = 0; a < sweep.axes.size(); ++a)
    if (sweep.axes[a].techniques) on[a] = sweep.axes[a].base_on;
  for (size_t d = 0; d < dims.size(); ++d) {
    const json& v = dims[d].domain[picks[d]];
    if (dims[d].technique >= 0) on[dims[d].axis][static_cast<size_t>(dims[d].technique)] = v.get<bool>();
    else c[dims[d].axis] = v;
  }
  for (size_t a = 0; a < sweep.axes.size(); ++a) {
    if (!sweep.axes[a].techniques) continue;
    json names = json::array();
    for (size_t t = 0; t < on[a].size(); ++t)
      if (on[a][t]) names.push_back(sweep.axes[a].values[t]);
    c[a] = std::move(names);
  }
  return c;
}

/// How many variants `sweep` makes, at most (before removing duplicates), saturated.
size_t CountVariants(const Sweep& sweep) {
  const auto dims = Dims(sweep, sweep.mode == "grid");
  if (sweep.mode == "ablation") {
    size_t n = 2;
    for (const auto& d : dims) n += d.domain.size() - 1;
    return n;
  }
  size_t n = 1;
  for (const auto& d : dims) {
    if (n > kMaxVariants) break;
    n *= d.domain.size();
  }
  if (sweep.mode != "grid") return n;
  for (const auto& axis : sweep.axes)  // the baseline is a variant of its own when not in the grid
    if (!axis.techniques && std::find(axis.values.begin(), axis.values.end(), axis.baseline) == axis.values.end())
      return n + 1;
  return n;
}

/// Every combination of the dims' domains, the first dim changing slowest.
std::vector<std::vector<size_t>> Product(const std::vector<Dim>& dims) {
  std::vector<std::vector<size_t>> out;
  std::vector<size_t> picks(dims.size(), 0);
  while (true) {
    out.push_back(picks);
    size_t d = dims.size();
    while (d > 0) {
      --d;
      if (++picks[d] < dims[d].domain.size()) break;
      picks[d] = 0;
      if (d == 0) return out;
    }
    if (dims.empty()) return out;
  }
}

/// The variants of `sweep`, baseline first (duplicates are removed later, by config).
std::vector<Choice> Variants(const Sweep& sweep) {
  std::vector<Choice> out{BaselineChoice(sweep)};
  if (sweep.mode == "grid") {
    const auto dims = Dims(sweep, true);
    for (const auto& picks : Product(dims)) out.push_back(MakeChoice(sweep, dims, picks));
    return out;
  }
  const auto dims = Dims(sweep, false);
  if (sweep.mode == "ablation") {
    std::vector<size_t> picks(dims.size(), 0);
    for (size_t d = 0; d < dims.size(); ++d) {
      for (size_t k = 1; k < dims[d].domain.size(); ++k) {
        picks[d] = k;
        out.push_back(MakeChoice(sweep, dims, picks));
      }
      picks[d] = 0;
    }
    for (size_t d = 0; d < dims.size(); ++d) picks[d] = dims[d].domain.size() - 1;
    out.push_back(MakeChoice(sweep, dims, picks));
    return out;
  }
  // all_subsets: by the number of changes, then by which (in axis order).
  auto all = Product(dims);
  const auto key = [](const std::vector<size_t>& picks) {
    std::vector<std::pair<size_t, size_t>> changed;
    for (size_t d = 0; d < picks.size(); ++d)
      if (picks[d] != 0) changed.emplace_back(d, picks[d]);
    return std::make_pair(changed.size(), changed);
  };
  std::stable_sort(all.begin(), all.end(), [&](const auto& a, const auto& b) { return key(a) < key(b); });
  for (const auto& picks : all) out.push_back(MakeChoice(sweep, dims, picks));
  return out;
}

void SetPath(json* config, const std::vector<std::string>& path, const json& value) {
  json* node = config;
  for (size_t i = 0; i + 1 < path.size(); ++i) {
    json& child = (*node)[path[i]];
    if (!child.is_object()) child = json::object();
    node = &child;
  }
  (*node)[path.back()] = value;
}

/// `base` (a config without schedule keys) with the choice applied. `top` is the experiment's
/// own `optimizations` (the parameters of the axis' techniques). `fill`: fill in defaults.
json BuildConfig(const json& base, const json& top, const Sweep& sweep, const Choice& choice,
                 const SchemaSet& schemas, bool fill) {
  json config = base;
  for (size_t a = 0; a < sweep.axes.size(); ++a) {
    const Axis& axis = sweep.axes[a];
    if (!axis.techniques) {
      SetPath(&config, axis.path, choice[a]);
      continue;
    }
    json& opts = config["optimizations"];
    if (!opts.is_object()) opts = json::object();
    for (const auto& t : axis.values) opts.erase(t.get<std::string>());
    for (const auto& t : choice[a]) {
      const std::string name = t.get<std::string>();
      json params = top.is_object() && top.contains(name) && top[name].is_object() ? top[name] : json::object();
      const auto schema = schemas.techniques.find(name);
      if (fill && schema != schemas.techniques.end()) FillDefaults(schema->second, schema->second, &params);
      opts[name] = std::move(params);
    }
  }
  if (fill) FillDefaults(schemas.experiment, schemas.experiment, &config);
  return TrialBase(config);  // without the schedule keys that FillDefaults put back
}

Issue TooManyVariants(size_t count) {
  return {"/sweep/axes", true,
          fmt::format("the sweep makes {} variants; at most {}",
                      count > kMaxVariants * 2 ? fmt::format("more than {}", kMaxVariants * 2) : std::to_string(count),
                      kMaxVariants),
          {"use fewer axes or values, or mode ablation (the baseline, each change alone, all changes together)"}};
}

struct Labelled {
  std::string label, differs;
};

/// "bf16+channels_last+batch_size=128" and "precision=bf16, +channels_last, data.batch_size=128".
Labelled Label(const Sweep& sweep, const Choice& choice, const Choice& baseline) {
  std::vector<std::string> label, differs;
  // The short name of each other axis: its last key ('name': the one before), unless shared.
  std::vector<std::string> leaf(sweep.axes.size());
  for (size_t a = 0; a < sweep.axes.size(); ++a) {
    const auto& p = sweep.axes[a].path;
    if (p.empty()) continue;
    leaf[a] = p.back() == "name" && p.size() >= 2 ? p[p.size() - 2] : p.back();
  }
  for (size_t a = 0; a < sweep.axes.size(); ++a)
    for (size_t b = 0; b < sweep.axes.size(); ++b)
      if (a != b && !leaf[a].empty() && leaf[a] == leaf[b]) leaf[a] = sweep.axes[a].key;
  for (size_t a = 0; a < sweep.axes.size(); ++a) {
    if (sweep.axes[a].key != "precision" || choice[a] == baseline[a]) continue;
    label.push_back(ValueLabel(choice[a]));
    differs.push_back("precision=" + ValueLabel(choice[a]));
  }
  for (size_t a = 0; a < sweep.axes.size(); ++a) {
    if (!sweep.axes[a].techniques) continue;
    for (const auto& t : sweep.axes[a].values) {
      const bool on = std::find(choice[a].begin(), choice[a].end(), t) != choice[a].end();
      const bool base_on = std::find(baseline[a].begin(), baseline[a].end(), t) != baseline[a].end();
      if (on == base_on) continue;
      const std::string name = t.get<std::string>();
      label.push_back(on ? name : "no_" + name);
      differs.push_back((on ? "+" : "-") + name);
    }
  }
  for (size_t a = 0; a < sweep.axes.size(); ++a) {
    const Axis& axis = sweep.axes[a];
    if (axis.techniques || axis.key == "precision" || choice[a] == baseline[a]) continue;
    label.push_back(leaf[a] + "=" + ValueLabel(choice[a]));
    differs.push_back(axis.key + "=" + ValueLabel(choice[a]));
  }
  Labelled out;
  for (const auto& l : label) out.label += (out.label.empty() ? "" : "+") + l;
  for (const auto& d : differs) out.differs += (out.differs.empty() ? "" : ", ") + d;
  if (out.label.empty()) out.label = "baseline";
  return out;
}

struct Variant {
  json config;
  Labelled name;
};

/// The distinct variants, baseline first, each labelled uniquely.
std::vector<Variant> BuildVariants(const json& config, const Sweep& sweep, const SchemaSet& schemas, bool fill) {
  const json base = TrialBase(config);
  const json top = config.value("optimizations", json::object());
  const auto choices = Variants(sweep);
  const Choice baseline = choices.front();
  std::vector<Variant> out;
  std::set<std::string> seen_configs, seen_labels;
  for (const auto& choice : choices) {
    Variant v{BuildConfig(base, top, sweep, choice, schemas, fill), Label(sweep, choice, baseline)};
    if (!seen_configs.insert(v.config.dump()).second) continue;
    const std::string wanted = v.name.label;
    for (int n = 2; !seen_labels.insert(v.name.label).second; ++n) v.name.label = fmt::format("{}#{}", wanted, n);
    out.push_back(std::move(v));
  }
  return out;
}

using IssueKey = std::pair<std::string, std::string>;

std::set<IssueKey> Keys(const std::vector<Issue>& issues) {
  std::set<IssueKey> keys;
  for (const auto& i : issues) keys.emplace(i.pointer, i.message);
  return keys;
}

}  // namespace

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
            issues.push_back({PointerAppend(from, sub), true, fmt::format("axis {} is given twice", Quote(flat)),
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

  Sweep sweep = ParseSweep(config, schemas, order, &issues);
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
    json c = BuildConfig(base, top, one, {value}, schemas, false);
    const std::string target = axis.techniques ? PointerAppend("/optimizations", value[0].get<std::string>())
                                               : Pointer(axis.path);
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

  if (const size_t count = CountVariants(sweep); count > kMaxVariants) {
    issues.push_back(TooManyVariants(count));
    return issues;
  }
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

namespace {

/// Issues found by Expand, with places looked up in the experiment's text (its overrides are
/// not known here: their values point at the nearest place in the file).
SpecError ErrorOf(const Experiment& exp, std::vector<Issue> issues) {
  YamlDocument yaml = ReadYaml(exp.text);
  NormaliseOptimizations(&yaml.value, &yaml.origins);
  NormaliseSweepAxes(&yaml.value, &yaml.origins);
  std::vector<std::string> lines;
  std::istringstream in(exp.text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(std::move(line));
  }
  std::vector<Diagnostic> diags;
  for (auto& i : issues) {
    Diagnostic d;
    d.file = exp.path;
    if (const Origin* o = yaml.origins.Nearest(i.pointer)) {
      const Location at = i.at_key && o->key.line > 0 ? o->key : o->value;
      d.line = at.line;
      d.column = at.column;
      if (d.line > 0 && static_cast<size_t>(d.line) <= lines.size()) d.source_line = lines[d.line - 1];
    }
    d.message = std::move(i.message);
    d.notes = std::move(i.notes);
    diags.push_back(std::move(d));
  }
  return SpecError(std::move(diags), exp.path);
}

uint64_t SplitMix64(uint64_t* state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

template <typename T>
T Get(const json& config, const char* key, T fallback) {
  const auto it = config.find(key);
  if (it == config.end() || it->is_null()) return fallback;
  try {
    return it->get<T>();
  } catch (const std::exception&) {
    return fallback;
  }
}

}  // namespace

Plan Expand(const Experiment& exp, const SchemaSet& schemas) {
  const json& config = exp.config;
  Plan plan;
  plan.repeats = std::max(1, Get<int>(config, "repeats", 1));
  plan.order = Get<std::string>(config, "order", "interleaved");
  plan.order_seed = config.contains("order_seed") ? Get<uint64_t>(config, "order_seed", 0)
                                                  : Get<uint64_t>(config, "seed", 0);
  plan.trial_timeout_s = Get<double>(config, "trial_timeout_s", 3600);

  std::vector<Variant> variants;
  if (!config.contains("sweep")) {
    // One variant: name it by what it runs ("bf16+channels_last"), as trials are labelled.
    std::string label;
    const std::string precision = config.value("precision", "fp32");
    if (precision != "fp32") label = precision;
    const json techniques = config.value("optimizations", json::object());
    for (const auto& [key, value] : techniques.items()) {
      const std::string name = techniques.is_array() ? value.get<std::string>() : key;
      if (!(name == "amp" && precision != "fp32")) label += (label.empty() ? "" : "+") + name;
    }
    variants.push_back({TrialBase(config), {label.empty() ? "baseline" : label, ""}});
  } else {
    std::vector<std::string> order = exp.sweep_axes;
    const json axes = config["sweep"].value("axes", json::object());
    for (const auto& [key, values] : axes.items())
      if (std::find(order.begin(), order.end(), key) == order.end()) order.push_back(key);
    std::vector<Issue> issues;
    const Sweep sweep = ParseSweep(config, schemas, order, &issues);
    if (const size_t count = CountVariants(sweep); issues.empty() && count > kMaxVariants)
      issues.push_back(TooManyVariants(count));
    if (!issues.empty()) throw ErrorOf(exp, std::move(issues));
    plan.mode = sweep.mode;
    variants = BuildVariants(config, sweep, schemas, true);
  }
  plan.variants = static_cast<int>(variants.size());

  std::vector<std::pair<int, int>> sequence;  // (variant, repeat)
  if (plan.order == "sequential") {
    for (int v = 0; v < plan.variants; ++v)
      for (int r = 0; r < plan.repeats; ++r) sequence.emplace_back(v, r);
  } else {
    for (int r = 0; r < plan.repeats; ++r) {
      std::vector<int> round(static_cast<size_t>(plan.variants));
      for (int v = 0; v < plan.variants; ++v) round[static_cast<size_t>(v)] = v;
      if (plan.order == "shuffled") {
        uint64_t state = plan.order_seed ^ (0xd1b54a32d192ed03ULL * static_cast<uint64_t>(r + 1));
        for (size_t i = round.size(); i > 1; --i) std::swap(round[i - 1], round[SplitMix64(&state) % i]);
      }
      for (const int v : round) sequence.emplace_back(v, r);
    }
  }
  std::vector<std::string> hashes;
  for (const auto& v : variants) hashes.push_back(Sha256Hex(v.config.dump()));
  for (const auto& [v, r] : sequence) {
    const Variant& variant = variants[static_cast<size_t>(v)];
    PlannedTrial t;
    t.config = variant.config;
    t.config_hash = hashes[static_cast<size_t>(v)];
    t.label = variant.name.label;
    t.differs = variant.name.differs;
    t.is_baseline = v == 0;
    t.variant_index = v;
    t.repeat_index = r;
    t.order_index = static_cast<int>(plan.trials.size());
    plan.trials.push_back(std::move(t));
  }
  return plan;
}

Plan Shard(const Plan& plan, const std::string& spec) {
  const auto bad = [&](const std::string& why) {
    return std::invalid_argument(fmt::format("invalid shard {}: {}", Quote(spec), why));
  };
  const size_t slash = spec.find('/');
  const auto digits = [](const std::string& s) {
    return !s.empty() && s.size() <= 9 && s.find_first_not_of("0123456789") == std::string::npos;
  };
  if (slash == std::string::npos || !digits(spec.substr(0, slash)) || !digits(spec.substr(slash + 1)))
    throw bad("expected 'i/n', shard i of n counted from 0, e.g. '0/4'");
  const int index = std::stoi(spec.substr(0, slash)), count = std::stoi(spec.substr(slash + 1));
  if (count < 1) throw bad("the shard count must be at least 1");
  if (index >= count)
    throw bad(fmt::format("the shard index must be less than the count {} (shards are counted from 0)", count));
  Plan out = plan;
  out.trials.clear();
  for (const auto& t : plan.trials)
    if (t.order_index % count == index) out.trials.push_back(t);
  out.shard_index = index;
  out.shard_count = count;
  return out;
}

std::string RenderPlan(const Plan& plan) {
  const auto plural = [](size_t n, const char* word) { return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s"); };
  std::string out = fmt::format("{}: {} x {} = {}\n",
                                plan.mode == "single" ? std::string("no sweep") : plan.mode + " sweep",
                                plural(static_cast<size_t>(plan.variants), "variant"),
                                plural(static_cast<size_t>(plan.repeats), "repeat"),
                                plural(static_cast<size_t>(plan.variants) * static_cast<size_t>(plan.repeats), "trial"));
  if (plan.shard_count > 1)
    out += fmt::format("shard {}/{}: {} of the {} trials\n", plan.shard_index, plan.shard_count, plan.trials.size(),
                       static_cast<size_t>(plan.variants) * static_cast<size_t>(plan.repeats));

  struct Row {
    int index;
    std::string label, differs;
    int trials = 0;
  };
  std::vector<Row> rows;
  for (const auto& t : plan.trials) {
    auto it = std::find_if(rows.begin(), rows.end(), [&](const Row& r) { return r.index == t.variant_index; });
    if (it == rows.end()) {
      rows.push_back({t.variant_index, t.label, t.is_baseline ? "(baseline)" : t.differs, 0});
      it = rows.end() - 1;
    }
    ++it->trials;
  }
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.index < b.index; });
  size_t w_index = 1, w_label = 5, w_differs = 7;
  for (const auto& r : rows) {
    w_index = std::max(w_index, std::to_string(r.index).size());
    w_label = std::max(w_label, r.label.size());
    w_differs = std::max(w_differs, r.differs.size());
  }
  out += fmt::format("\n  {:>{}}  {:<{}}  {:<{}}  {}\n", "#", w_index, "label", w_label, "differs", w_differs, "trials");
  for (const auto& r : rows)
    out += fmt::format("  {:>{}}  {:<{}}  {:<{}}  {:>6}\n", r.index, w_index, r.label, w_label, r.differs, w_differs,
                       r.trials);

  constexpr size_t kMaxShown = 64;
  std::string sequence;
  for (size_t i = 0; i < plan.trials.size() && i < kMaxShown; ++i) {
    const auto& t = plan.trials[i];
    if (i > 0) {
      const auto& prev = plan.trials[i - 1];
      const bool next_group = plan.order == "sequential" ? t.variant_index != prev.variant_index
                                                         : t.repeat_index != prev.repeat_index;
      sequence += next_group ? " | " : " ";
    }
    sequence += std::to_string(t.variant_index);
  }
  if (plan.trials.size() > kMaxShown) sequence += fmt::format(" ... ({} more)", plan.trials.size() - kMaxShown);
  std::string how = plan.order;
  if (plan.order == "shuffled") how += fmt::format(" (seed {})", plan.order_seed);
  out += fmt::format("\norder: {}: {}\n", how, sequence.empty() ? "(no trials)" : sequence);
  out += fmt::format("timeout: {} s per trial\n", plan.trial_timeout_s);
  return out;
}

}  // namespace runx::spec

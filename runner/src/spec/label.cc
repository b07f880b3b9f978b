#include "spec/label.h"

#include <algorithm>

#include "spec/overrides.h"

namespace runx::spec {
namespace {

using nlohmann::json;

std::string ValueLabel(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

/// The value at dotted `path` of `config`, or null.
json At(const json& config, const std::vector<std::string>& path) {
  const json* node = &config;
  for (const auto& key : path) {
    if (!node->is_object()) return nullptr;
    const auto it = node->find(key);
    if (it == node->end()) return nullptr;
    node = &*it;
  }
  return *node;
}

/// The technique names of `config` (its `optimizations`, a mapping or a list of names).
std::vector<std::string> Techniques(const json& config) {
  std::vector<std::string> names;
  const auto it = config.find("optimizations");
  if (it == config.end()) return names;
  if (it->is_object()) {
    for (const auto& [name, params] : it->items()) names.push_back(name);
  } else if (it->is_array()) {
    for (const auto& name : *it)
      if (name.is_string()) names.push_back(name.get<std::string>());
  }
  return names;
}

bool Has(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

/// A trial on its own: compared with fp32 and no techniques.
LabelAxes Alone(const json& config) {
  const json precision = At(config, {"precision"});
  LabelAxes alone;
  alone.baseline = {{"precision", precision.is_null() ? json() : json("fp32")}, {"optimizations", json::object()}};
  alone.axes = {"precision", "optimizations"};
  const bool reduced = precision.is_string() && precision != "fp32";
  for (const auto& name : Techniques(config))
    if (!(name == "amp" && reduced)) alone.techniques.push_back(name);
  return alone;
}

}  // namespace

TrialName LabelTrial(const json& config, const LabelAxes* sweep) {
  const LabelAxes alone = sweep ? LabelAxes{} : Alone(config);
  const LabelAxes& s = sweep ? *sweep : alone;
  const size_t n = s.axes.size();
  std::vector<std::vector<std::string>> paths(n);
  std::vector<std::string> leaf(n);
  for (size_t a = 0; a < n; ++a) {
    if (s.axes[a] == "optimizations") continue;
    paths[a] = SplitDots(s.axes[a]);
    const auto& p = paths[a];
    leaf[a] = p.back() == "name" && p.size() >= 2 ? p[p.size() - 2] : p.back();
  }
  const std::vector<std::string> leaves = leaf;  // every axis that shares its leaf gets its whole key
  for (size_t a = 0; a < n; ++a)
    for (size_t b = 0; b < n; ++b)
      if (a != b && !leaves[a].empty() && leaves[a] == leaves[b]) leaf[a] = s.axes[a];

  std::vector<std::string> label, differs;
  for (size_t a = 0; a < n; ++a) {
    if (s.axes[a] != "precision") continue;
    const json value = At(config, paths[a]);
    if (value == At(s.baseline, paths[a])) continue;
    label.push_back(ValueLabel(value));
    differs.push_back("precision=" + ValueLabel(value));
  }
  if (Has(s.axes, "optimizations")) {
    const auto on = Techniques(config), base_on = Techniques(s.baseline);
    for (const auto& t : s.techniques) {
      const bool is_on = Has(on, t);
      if (is_on == Has(base_on, t)) continue;
      label.push_back(is_on ? t : "no_" + t);
      differs.push_back((is_on ? "+" : "-") + t);
    }
  }
  for (size_t a = 0; a < n; ++a) {
    if (s.axes[a] == "optimizations" || s.axes[a] == "precision") continue;
    const json value = At(config, paths[a]);
    if (value == At(s.baseline, paths[a])) continue;
    label.push_back(leaf[a] + "=" + ValueLabel(value));
    differs.push_back(s.axes[a] + "=" + ValueLabel(value));
  }
  TrialName out;
  for (const auto& l : label) out.label += (out.label.empty() ? "" : "+") + l;
  for (const auto& d : differs) out.differs += (out.differs.empty() ? "" : ", ") + d;
  if (out.label.empty()) out.label = "baseline";
  return out;
}

}  // namespace runx::spec

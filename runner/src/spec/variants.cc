#include "spec/variants.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "spec/resolve.h"

namespace runx::spec {
namespace {

/// A dimension of the variant space: one non-technique axis, or one technique of the
/// optimizations axis (on / off).
struct Dim {
  size_t axis = 0;
  int technique = -1;        ///< index into the axis' values, or -1
  std::vector<json> domain;  ///< values, or booleans (on) for a technique; [0] is the baseline's
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

/// The variant of `dims` at `picks` (an index into each dim's domain).
Choice MakeChoice(const Sweep& sweep, const std::vector<Dim>& dims, const std::vector<size_t>& picks) {
  Choice c = BaselineChoice(sweep);
  std::vector<std::vector<bool>> on(sweep.axes.size());
  for (size_t a = 0; a < sweep.axes.size(); ++a)
    if (sweep.axes[a].techniques) on[a] = sweep.axes[a].base_on;
  for (size_t d = 0; d < dims.size(); ++d) {
    const json& v = dims[d].domain[picks[d]];
    if (dims[d].technique >= 0)
      on[dims[d].axis][static_cast<size_t>(dims[d].technique)] = v.get<bool>();
    else
      c[dims[d].axis] = v;
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

void SetPath(json* config, const std::vector<std::string>& path, const json& value) {
  json* node = config;
  for (size_t i = 0; i + 1 < path.size(); ++i) {
    json& child = (*node)[path[i]];
    if (!child.is_object()) child = json::object();
    node = &child;
  }
  (*node)[path.back()] = value;
}

/// `config` (made by BuildConfig) with the defaults of the experiment and of the axis'
/// techniques filled in.
json Filled(json config, const Sweep& sweep, const SchemaSet& schemas) {
  for (const auto& axis : sweep.axes) {
    if (!axis.techniques) continue;
    for (auto& [name, params] : config["optimizations"].items()) {
      const auto schema = schemas.techniques.find(name);
      if (schema != schemas.techniques.end() && params.is_object() &&
          std::find(axis.values.begin(), axis.values.end(), json(name)) != axis.values.end())
        FillDefaults(schema->second, schema->second, &params);
    }
  }
  FillDefaults(schemas.experiment, schemas.experiment, &config);
  return TrialBase(config);  // without the schedule keys that FillDefaults put back
}

}  // namespace

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

std::vector<Choice> GridVariants(const Sweep& sweep) {
  std::vector<Choice> out{BaselineChoice(sweep)};
  const auto dims = Dims(sweep, true);
  for (const auto& picks : Product(dims)) out.push_back(MakeChoice(sweep, dims, picks));
  return out;
}

std::vector<Choice> AblationVariants(const Sweep& sweep) {
  std::vector<Choice> out{BaselineChoice(sweep)};
  const auto dims = Dims(sweep, false);
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

std::vector<Choice> AllSubsetsVariants(const Sweep& sweep) {
  std::vector<Choice> out{BaselineChoice(sweep)};
  const auto dims = Dims(sweep, false);
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

std::vector<Choice> SweepVariants(const Sweep& sweep) {
  switch (sweep.mode) {
    case SweepMode::kGrid:
      return GridVariants(sweep);
    case SweepMode::kAblation:
      return AblationVariants(sweep);
    case SweepMode::kAllSubsets:
      return AllSubsetsVariants(sweep);
    case SweepMode::kSingle:
      break;
  }
  return {BaselineChoice(sweep)};
}

size_t CountVariants(const Sweep& sweep) {
  const auto dims = Dims(sweep, sweep.mode == SweepMode::kGrid);
  if (sweep.mode == SweepMode::kAblation) {
    size_t n = 2;
    for (const auto& d : dims) n += d.domain.size() - 1;
    return n;
  }
  size_t n = 1;
  for (const auto& d : dims) {
    if (n > kMaxVariants) break;
    n *= d.domain.size();
  }
  if (sweep.mode != SweepMode::kGrid) return n;
  for (const auto& axis : sweep.axes)  // the baseline is a variant of its own when not in the grid
    if (!axis.techniques && std::find(axis.values.begin(), axis.values.end(), axis.baseline) == axis.values.end())
      return n + 1;
  return n;
}

json BuildConfig(const json& base, const json& top, const Sweep& sweep, const Choice& choice) {
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
      opts[name] = top.is_object() && top.contains(name) && top[name].is_object() ? top[name] : json::object();
    }
  }
  return config;
}

Variant SingleVariant(const json& config) {
  json base = TrialBase(config);
  TrialName name{LabelTrial(base).label, ""};  // the baseline: nothing differs
  return {std::move(base), std::move(name)};
}

std::vector<Variant> BuildVariants(const json& config, const Sweep& sweep, const SchemaSet& schemas, bool fill) {
  const json base = TrialBase(config);
  const json top = config.value("optimizations", json::object());
  const auto choices = SweepVariants(sweep);
  LabelAxes axes;
  axes.baseline = BuildConfig(base, top, sweep, choices.front());
  for (const auto& axis : sweep.axes) {
    axes.axes.push_back(axis.key);
    if (axis.techniques)
      for (const auto& t : axis.values) axes.techniques.push_back(t.get<std::string>());
  }
  std::vector<Variant> out;
  std::set<std::string> seen_configs, seen_labels;
  for (const auto& choice : choices) {
    json written = BuildConfig(base, top, sweep, choice);
    Variant v{json(), LabelTrial(written, &axes)};
    v.config = fill ? Filled(std::move(written), sweep, schemas) : std::move(written);
    if (!seen_configs.insert(v.config.dump()).second) continue;
    const std::string wanted = v.name.label;
    for (int n = 2; !seen_labels.insert(v.name.label).second; ++n) v.name.label = fmt::format("{}#{}", wanted, n);
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace runx::spec

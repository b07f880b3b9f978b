#pragma once
// Internal: the `sweep:` block of a resolved config read into axes, each with its values and its
// baseline value; the config a trial sees (without the keys that say how trials run).
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "spec/issue.h"
#include "spec/plan.h"
#include "spec/source_map.h"
#include "spec/spec.h"

namespace runx::spec {

/// One axis of a sweep.
struct Axis {
  std::string key;                ///< as written: "data.batch_size", "optimizations"
  std::vector<std::string> path;  ///< config path; empty for the optimizations axis
  bool techniques = false;
  std::vector<json> values;     ///< the listed values; technique names for the optimizations axis
  json baseline;                ///< the baseline value (unused for techniques)
  std::vector<bool> base_on;    ///< techniques: on in the baseline
  std::vector<size_t> changes;  ///< values other than the baseline (indices into `values`)
};

struct Sweep {
  SweepMode mode = SweepMode::kGrid;
  std::vector<Axis> axes;
};

/// Top-level keys that cannot be an axis, and why.
const std::vector<std::pair<std::string, std::string>>& NotAxes();

/// Axis keys of `axes` (the mapping `sweep.axes`) in the order written: by the origin of each
/// key (the file's first, then the overrides' in their order).
std::vector<std::string> AxisOrder(const json& axes, const SourceMap& origins);

/// `config` without the keys that say how trials run, not what a trial is: `sweep`, `repeats`,
/// `order`, `order_seed`, `trial_timeout_s` (a variant's config, and its hash, has none of them).
json TrialBase(const json& config);

/// The sweep block of `config` (which passed the schema check there, defaults filled in), its
/// axes in `order`. Axis paths, technique names and baseline keys that are wrong go to `issues`.
Sweep ReadSweep(const json& config, const SchemaSet& schemas, const std::vector<std::string>& order,
                std::vector<Issue>* issues);

}  // namespace runx::spec

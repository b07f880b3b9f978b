#pragma once
// Internal: the variants of a sweep, one function per mode, and the config of each.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "spec/label.h"
#include "spec/spec.h"
#include "spec/sweep_block.h"

namespace runx::spec {

/// A variant as axis values: for each axis its value (the optimizations axis: the list of
/// techniques on).
using Choice = std::vector<json>;

/// The baseline's choice: each axis' baseline value, the techniques on in the baseline.
Choice BaselineChoice(const Sweep& sweep);

/// The variants of each mode, baseline first (duplicates are removed later, by config):
/// grid: the baseline, then every combination of the axes' values (each technique on and off),
///   the first axis changing slowest;
/// ablation: the baseline, each change alone, all changes together (each axis at its last value);
/// all_subsets: every combination of the changes, by the number of changes, then in axis order.
std::vector<Choice> GridVariants(const Sweep& sweep);
std::vector<Choice> AblationVariants(const Sweep& sweep);
std::vector<Choice> AllSubsetsVariants(const Sweep& sweep);
/// The variants of `sweep.mode`.
std::vector<Choice> SweepVariants(const Sweep& sweep);

/// How many variants `sweep` makes, at most (before removing duplicates), saturated above
/// kMaxVariants.
size_t CountVariants(const Sweep& sweep);

/// `base` (a config without schedule keys) with `choice` applied, as written (no defaults
/// filled in). `top` is the experiment's own `optimizations`: the parameters of the axis'
/// techniques.
json BuildConfig(const json& base, const json& top, const Sweep& sweep, const Choice& choice);

/// A variant's config and name.
struct Variant {
  json config;
  TrialName name;
};

/// The one variant of an experiment without a sweep (`config`: its resolved config), named by
/// what it runs.
Variant SingleVariant(const json& config);

/// The distinct variants of `sweep` in `config` (an experiment's config, defaults filled in),
/// baseline first, each labelled uniquely ("label#2" for a repeated label). `fill`: each
/// variant's config with its defaults filled in (what a trial runs); else as the axes set it.
std::vector<Variant> BuildVariants(const json& config, const Sweep& sweep, const SchemaSet& schemas, bool fill);

}  // namespace runx::spec

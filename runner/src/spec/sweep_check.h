#pragma once
// Internal: the checks of a `sweep:` block, for Load and Validate: axes written as nested
// mappings, axis paths, technique names, the baseline, each axis value in a variant, the size of
// the plan, and rules broken only by a combination.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "spec/issue.h"
#include "spec/source_map.h"
#include "spec/spec.h"

namespace runx::spec {

/// `sweep.axes` written as nested mappings (`data: {batch_size: [64]}`, which is also what
/// `--set sweep.axes.data.batch_size=[64]` makes) -> dotted keys (`data.batch_size: [64]`).
std::vector<Issue> NormaliseSweepAxes(json* doc, SourceMap* origins);

/// Problems of the sweep block of `doc`, which passed the schema check under /sweep: axis
/// paths, technique names, the baseline, each axis value checked in a variant, the size of the
/// plan (CheckSize), and rules broken only by a combination. `axis_order` receives the axis keys
/// in the order written.
std::vector<Issue> CheckSweep(const json& doc, const SchemaSet& schemas, const SourceMap& origins,
                              const std::vector<Override>& overrides, std::vector<std::string>* axis_order);

/// A plan of `variants` x `repeats` trials within kMaxVariants and kMaxTrials: no issue; else
/// the one issue, at 'sweep.axes' (too many variants) or at 'repeats' (too many trials; at
/// 'sweep.axes' when `repeats_written` is false: the repeats are the default).
std::vector<Issue> CheckSize(size_t variants, int repeats, bool repeats_written);

}  // namespace runx::spec

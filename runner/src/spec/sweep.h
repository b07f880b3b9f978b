#pragma once
// An experiment expanded into its plan: variants (grid / ablation / all_subsets, or one without
// a sweep), each run `repeats` times in a scheduled order; sharding; the text of `runx plan`.
// No LibTorch here.
#include "spec/plan.h"
#include "spec/plan_text.h"
#include "spec/schedule.h"
#include "spec/spec.h"

namespace runx::spec {

/// The trials of `exp` (a result of Load) in execution order; the trials of a variant share its
/// config. Throws SpecError, located by `exp.origins`, when the sweep is invalid or too large
/// (Load already reports the same problems).
Plan Expand(const Experiment& exp, const SchemaSet& schemas);

}  // namespace runx::spec

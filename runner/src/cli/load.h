#pragma once
// Loading an experiment for a command: every problem is printed (file:line:col) and the caller
// exits 2.
#include <optional>
#include <string>
#include <vector>

#include "spec/spec.h"
#include "spec/sweep.h"

namespace runx::cli {

struct LoadedPlan {
  spec::Experiment experiment;
  spec::Plan full;   ///< the whole plan
  spec::Plan plan;   ///< the shard to run (the whole plan without --shard)
};

std::vector<spec::Override> ToOverrides(const std::vector<std::string>& sets);

/// Loads, validates and expands `file`, then keeps `shard`; prints the problems and returns
/// nullopt when the input is invalid.
std::optional<LoadedPlan> LoadPlan(const std::string& file, const std::vector<std::string>& sets,
                                   const std::optional<std::string>& shard, const spec::SchemaSet& schemas);

}  // namespace runx::cli

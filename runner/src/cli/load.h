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
  spec::Plan full;  ///< the whole plan
  spec::Plan plan;  ///< the shard to run (the whole plan without --shard)
};

std::vector<spec::Override> ToOverrides(const std::vector<std::string>& sets);

/// Where compiled_step's packages (package: auto) are for the results store `db`: RUNX_COMPILED_DIR
/// when set (runx submit's shards, whose stores are their own, point it at the main store's), else
/// the folder beside the store (spec::CompiledDirFor). runx run and runx compile agree through it.
std::string CompiledDir(const std::string& db);

/// Loads, validates and expands `file`, then keeps `shard`; prints the problems and returns
/// nullopt when the input is invalid.
std::optional<LoadedPlan> LoadPlan(const std::string& file, const std::vector<std::string>& sets,
                                   const std::optional<std::string>& shard, const spec::SchemaSet& schemas);

}  // namespace runx::cli

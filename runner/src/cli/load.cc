#include "cli/load.h"

#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include <fmt/format.h>

#include "spec/compiled_package.h"

namespace runx::cli {

std::vector<spec::Override> ToOverrides(const std::vector<std::string>& sets) {
  std::vector<spec::Override> out;
  for (const auto& s : sets) out.push_back({s});
  return out;
}

std::optional<LoadedPlan> LoadPlan(const std::string& file, const std::vector<std::string>& sets,
                                   const std::optional<std::string>& shard, const spec::SchemaSet& schemas) {
  try {
    LoadedPlan out;
    out.experiment = spec::Load(file, ToOverrides(sets), schemas);
    out.full = spec::Expand(out.experiment, schemas);
    out.plan = shard ? spec::Shard(out.full, *shard) : out.full;
    return out;
  } catch (const spec::SpecError& e) {
    fmt::print(stderr, "{}", e.Render());
  } catch (const std::invalid_argument& e) {
    fmt::print(stderr, "runx: error: {}\n", e.what());
  }
  return std::nullopt;
}

std::string CompiledDir(const std::string& db) {
  const char* dir = std::getenv("RUNX_COMPILED_DIR");
  return dir ? dir : spec::CompiledDirFor(db);
}

}  // namespace runx::cli

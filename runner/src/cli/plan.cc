#include <fmt/format.h>

#include "base/terminal.h"
#include "cli/commands.h"
#include "cli/load.h"
#include "plugins/dirs.h"

namespace runx::cli {

int Plan(const std::string& file, const std::vector<std::string>& overrides, const std::optional<std::string>& shard) {
  const auto loaded = LoadPlan(file, overrides, shard, spec::SchemaSet::Load(plugins::PluginDirs()));
  if (!loaded) return 2;
  fmt::print("{}", base::PrintableLines(spec::RenderPlan(loaded->plan)));
  return 0;
}

}  // namespace runx::cli

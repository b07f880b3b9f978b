#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/load.h"
#include "plugins/dirs.h"

namespace runx::cli {

int Validate(const std::vector<std::string>& files, const std::vector<std::string>& overrides) {
  const auto schemas = spec::SchemaSet::Load(plugins::PluginDirs());
  int errors = 0;
  for (const auto& f : files) {
    const auto diags = spec::Validate(f, ToOverrides(overrides), schemas);
    for (const auto& d : diags) fmt::print(stderr, "{}", d.Render());
    errors += static_cast<int>(diags.size());
    if (diags.empty()) fmt::print("{}: ok\n", f);
  }
  if (errors > 0) {
    fmt::print(stderr, "{} error{} in {} file{}\n", errors, errors == 1 ? "" : "s", files.size(),
               files.size() == 1 ? "" : "s");
    return 2;
  }
  return 0;
}

}  // namespace runx::cli

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/commands.h"
#include "engine/doctor.h"

namespace runx::cli {

int Plugins() {
  const auto list = engine::ListPlugins();
  fmt::print("{:<18}{:<10}{:<6}{:<10}{}\n", "name", "version", "api", "libtorch", "description");
  for (const auto& p : list.plugins)
    fmt::print("{:<18}{:<10}{:<6}{:<10}{}\n", p.name, p.version, p.api, p.libtorch, p.description);
  fmt::print("searched: {}\n", fmt::join(list.dirs, ":"));
  for (const auto& e : list.errors) fmt::print(stderr, "warning: {}\n", e);
  return list.errors.empty() ? 0 : 1;
}

}  // namespace runx::cli

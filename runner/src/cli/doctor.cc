#include <fmt/format.h>

#include "cli/commands.h"
#include "engine/doctor.h"

namespace runx::cli {

int Doctor() {
  const auto report = engine::Doctor();
  for (const auto& [key, value] : report.rows) fmt::print("{:<22}{}\n", key, value);
  for (const auto& e : report.plugin_errors) fmt::print(stderr, "warning: {}\n", e);
  return 0;
}

}  // namespace runx::cli

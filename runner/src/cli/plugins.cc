#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "worker/doctor.h"

namespace runx::cli {

int Plugins(const std::string& format) {
  const auto list = engine::ListPlugins();
  if (format == "json") {
    nlohmann::ordered_json out;
    out["plugins"] = nlohmann::ordered_json::array();
    for (const auto& p : list.plugins)
      out["plugins"].push_back({{"name", p.name},
                                {"version", p.version},
                                {"api", p.api},
                                {"libtorch", p.libtorch},
                                {"description", p.description}});
    out["searched"] = list.dirs;
    out["errors"] = list.errors;
    fmt::print("{}\n", out.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
    return list.errors.empty() ? 0 : 1;
  }
  fmt::print("{:<18}{:<10}{:<6}{:<10}{}\n", "name", "version", "api", "libtorch", "description");
  for (const auto& p : list.plugins)
    fmt::print("{:<18}{:<10}{:<6}{:<10}{}\n", p.name, p.version, p.api, p.libtorch, p.description);
  fmt::print("searched: {}\n", fmt::join(list.dirs, ":"));
  for (const auto& e : list.errors) fmt::print(stderr, "runx: warning: {}\n", e);
  return list.errors.empty() ? 0 : 1;
}

}  // namespace runx::cli

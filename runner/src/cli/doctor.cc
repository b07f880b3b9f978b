#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "worker/doctor.h"

namespace runx::cli {

int Doctor(const std::string& format) {
  const auto report = engine::Doctor();
  if (format == "json") {
    // One object: a key per row as the table names it ("  cuda:0" is "cuda:0"), then the warnings.
    nlohmann::ordered_json out = nlohmann::ordered_json::object();
    for (const auto& [key, value] : report.rows) out[key.substr(key.find_first_not_of(' '))] = value;
    out["warnings"] = report.plugin_errors;
    fmt::print("{}\n", out.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
    return 0;
  }
  for (const auto& [key, value] : report.rows) fmt::print("{:<22}{}\n", key, value);
  for (const auto& e : report.plugin_errors) fmt::print(stderr, "runx: warning: {}\n", e);
  return 0;
}

}  // namespace runx::cli
